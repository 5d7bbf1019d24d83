import type { Args } from '../args.ts';
import { seg, type Client } from '../client.ts';
import type { Rollout, RolloutSpace } from '../../lib/model/rollout.ts';
import { span, WAIT_KINDS, type Timeline } from '../../lib/model/timeline.ts';
import { print } from '../output.ts';
import { windowCovers, windowNow, windowSchedule } from './windows.ts';
import { type Command, type HelpTable, out, locate } from '../common.ts';

/** How long ago an instant was, the way a person says it: 40s, 5m, 3h, 2d. */
export function age(at: string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(at)) / 1000));
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m`
      : s < 86400
        ? `${Math.floor(s / 3600)}h`
        : `${Math.floor(s / 86400)}d`;
}

/** One Space's line: where it is, its Release and live status, the gates it must meet before the change goes on, what went wrong. */
function spaceLine(s: RolloutSpace, now: Date): string[] {
  const state = s.RestoredAt
    ? 'restored'
    : s.Taken
      ? 'taken'
      : s.Failure
        ? 'failed'
        : s.NotStarted
          ? 'not-started'
          : 'waiting';
  const r = s.Release;
  const release = r
    ? `#${r.ReleaseNum}${r.CarriesChange ? '' : ' (without it)'} ${r.LiveStatus.Sync ?? '?'}/${r.LiveStatus.Health ?? '?'}${r.LiveStatus.ObservedAt ? ` ${age(r.LiveStatus.ObservedAt, now)} ago` : ''}`
    : '-';
  const approvals = new Set(s.Approvals.map((x) => x.Name));
  const notes = [
    ...s.Gates.filter((g) => !approvals.has(g.Prerequisite)).map(
      (g) => `${g.Prerequisite}:${g.Satisfied ? 'ok' : 'no'}`,
    ),
    ...s.Approvals.map((x) => `${x.Name} ${x.Count - x.Missing}/${x.Count}`),
    ...(s.Failure ? [`failed: ${s.Failure.Error ?? s.Failure.Action}`] : []),
    ...s.Overrides.map((o) => `forced: ${o.Reason}`),
  ];
  return [s.SpaceSlug, state, release, notes.join('  ')];
}

/** `cub changeorder rollout`: the rollout page's grid in a terminal. */
export function printRollout(r: Rollout, now: Date): string {
  const co = r.ChangeOrder;
  const lines = [
    `${co.Slug} (${co.SpaceSlug}): ${co.State}, stage ${co.Stage ?? '-'}${co.Completed ? ', completed' : ''}${co.AbortedReason ? `, aborted: ${co.AbortedReason}` : ''}`,
  ];
  if (r.Job) lines.push(`Promotion running: job ${r.Job.JobID}, ${r.Job.Done}/${r.Job.Total} space(s)`);
  if (r.Next) {
    const failing = r.Next.Gates.filter((g) => !g.Satisfied);
    lines.push(
      `Next: ${r.Next.Stage ?? r.Next.Targets.map((t) => t.SpaceSlug).join(', ')} — ${r.Next.Open ? 'open' : `blocked by ${failing.length} gate(s): ${[...new Set(failing.map((g) => `${g.Prerequisite}${g.SpaceSlug ? ` (${g.SpaceSlug})` : ''}`))].join(', ')}`}`,
    );
  }
  const rows: string[][] = [];
  for (const st of r.Stages) {
    rows.push([
      st.Name,
      st.Status,
      '',
      st.Guards.length ? `${r.Stages.at(-1) === st ? 'Final' : 'before the next'}: ${st.Guards.join(', ')}` : '',
    ]);
    for (const s of st.Spaces) rows.push(spaceLine(s, now).map((x, i) => (i === 0 ? `  ${x}` : x)));
    if (!st.Spaces.length) rows.push(['  (no spaces in scope)', '', '', '']);
  }
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  lines.push(
    ...rows.map((row) =>
      row
        .map((x, i) => (i < 3 ? x.padEnd(widths[i]!) : x))
        .join('  ')
        .trimEnd(),
    ),
  );
  if (r.Holds.length)
    lines.push(
      'Holds in force:',
      ...r.Holds.map(
        (h) =>
          `  ${h.Slug}  ${h.Scope === 'Space' ? `space ${h.SpaceSlug}` : h.Scope === 'Organization' ? 'organization' : h.Scope === 'ChangeOrder' ? `change order ${h.ChangeOrderSlug ?? h.ChangeOrderID}` : `workflow ${h.ChangeWorkflowSlug ?? h.ChangeWorkflowID}`}  ${h.Reason} (by ${h.OwnerSlug ?? h.OwnerID}${h.ExpiresAt ? `, until ${h.ExpiresAt}` : ''})`,
      ),
    );
  const recall = r.ChangeOrder.Recall;
  if (recall)
    lines.push(
      `Recalled ${recall.RecalledAt}: ${recall.SpaceSlug} (stage ${recall.Stage}) reported ${recall.Matched} for release ${recall.ReleaseNum}; frozen by hold ${recall.Hold}`,
      ...(r.ChangeOrder.Demotions ?? []).map(
        (d) =>
          `  demoted${d.Recall ? ' by the recall' : ''} ${d.StartedAt}: ${d.Spaces.map((s) => `${s.SpaceSlug} ${s.Restored ? 'restored' : 'not restored'}`).join(', ')}`,
      ),
    );
  if (r.Windows?.length)
    lines.push(
      'Deploy windows:',
      ...r.Windows.map(
        (w) =>
          `  ${w.Slug}  ${w.Kind}  ${windowCovers(w)}  ${windowSchedule(w)}  ${windowNow(w)}  over ${w.CoveredSpaces.join(', ')}  ${w.Reason} (by ${w.OwnerSlug ?? w.OwnerID})`,
      ),
    );
  return lines.join('\n') + '\n';
}

/** A timeline as a table, a line per Stage, then the ETA. */
export function timelineText(t: Timeline): string {
  const kinds = WAIT_KINDS.filter((k) => t.Stages.some((s) => s.Waiting[k]));
  const rows = [
    ['STAGE', 'READY', 'ENTERED', 'LEFT', 'WAITED', ...kinds.map((k) => k.toUpperCase()), 'OPEN'],
    ...t.Stages.map((s) => [
      s.Name,
      s.ReadyAt ?? '-',
      s.EnteredAt ?? '-',
      s.LeftAt ?? '-',
      s.WaitedSeconds === undefined ? '-' : span(s.WaitedSeconds),
      ...kinds.map((k) => (s.Waiting[k] ? span(s.Waiting[k]) : '-')),
      s.Open?.join(', ') ?? '',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) =>
    r
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  lines.push(`ETA${t.ETA.Stage ? ` for ${t.ETA.Stage}` : ''}: ${t.ETA.At ?? 'unknown'} (${t.ETA.Because.join('; ')})`);
  return lines.join('\n') + '\n';
}

export const rolloutCommands: Record<string, Record<string, Command>> = {
  changeorder: {
    timeline: async (a: Args, c: Client) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeorder',
        'cub changeorder timeline --space <space> <change-order>',
      );
      const t = (await c.get<Timeline>(`/space/${seg(space)}/change_order/${seg(slug)}/timeline`)).body;
      const format = out(a);
      if (format === 'json' || format === 'yaml') return print(t, format);
      process.stdout.write(timelineText(t));
    },
    rollout: async (a: Args, c: Client) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeorder',
        'cub changeorder rollout --space <space> <change-order>',
      );
      const r = (await c.get<Rollout>(`/space/${seg(space)}/change_order/${seg(slug)}/rollout`)).body;
      const format = out(a);
      if (format === 'json' || format === 'yaml') return print(r, format);
      process.stdout.write(printRollout(r, new Date(r.ReadAt)));
    },
  },
};

export const rolloutHelp: HelpTable = {
  changeorder: {
    rollout: {
      summary:
        'The rollout as a grid: each Stage’s Spaces with progress, Release and live status, the gates and approvals each must meet before the change goes on, failures, overrides and holds (the rollout page at /ui shows the same)',
      args: [['[change-order]', 'the ChangeOrder: <slug> with --space, or <space>/<slug>']],
      flags: ['space'],
      example: 'cub changeorder rollout --space acme-base release-v452',
    },
    timeline: {
      summary:
        'How long the change waited at each Stage and on what (release, health, soak, approvals, holds, windows), and when the last Stage can take it',
      args: [['[change-order]', 'the ChangeOrder: <slug> with --space, or <space>/<slug>']],
      flags: ['space'],
      example: 'cub changeorder timeline --space acme-base release-v452',
    },
  },
};

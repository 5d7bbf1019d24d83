/** How a ChangeOrder is shown: `changeorder get` (its state, Spaces, failures) and `changeorder explain` (every gate). */
import { flag, type Args } from '../args.ts';
import { Client, seg } from '../client.ts';
import type { WithSpaceSlug } from '../../lib/model/common.ts';
import type { Component, Space, Unit } from '../../lib/model/entities.ts';
import type { ChangeOrderView } from '../../lib/model/change-orders.ts';
import type { Explanation, GateResult } from '../../lib/model/change-orders.ts';
import { print } from '../output.ts';
import { out, userNames } from '../common.ts';

/** Space IDs → slugs, for reading a ChangeOrder. */
export async function spaceSlugs(c: Client): Promise<Map<string, string>> {
  return new Map((await c.get<Space[]>('/space')).body.map((s) => [s.SpaceID, s.Slug]));
}

/** `cub changeorder get`: where the change has got to. */
export async function printChangeOrder(
  c: Client,
  co: ChangeOrderView & Partial<WithSpaceSlug<object>>,
  format: string | undefined,
): Promise<void> {
  if (format === 'json' || format === 'yaml') return print(co, format);
  const slugs = await spaceSlugs(c);
  // A Space deleted since it was taken into scope has no name any more: say so, with the start of its ID.
  const names = (ids: string[] = []) =>
    ids
      .map((id) => slugs.get(id) ?? `(deleted space ${id.slice(0, 8)})`)
      .sort()
      .join(', ') || '-';
  const users =
    co.AbortedBy || co.PromotionFailures?.length || co.RemovedSpaces?.length
      ? await userNames(c)
      : new Map<string, string>();
  const user = (id: string) => users.get(id) ?? id;
  const component = co.ComponentID
    ? ((await c.get<Component[]>('/component')).body.find((x) => x.ComponentID === co.ComponentID)?.Slug ??
      co.ComponentID)
    : undefined;
  // The selection as it was asked: the Component by name, the rest of the where as written.
  const where = co.WhereSpace?.split(' AND ')
    .filter((part) => !/^ComponentID = '[^']*'$/.test(part))
    .join(' AND ');
  const units = new Map<string, string>();
  if (Object.keys(co.SkippedUnits ?? {}).length)
    for (const u of (await c.get<Unit[]>(`/space/${seg(co.SpaceID)}/unit`)).body) units.set(u.UnitID, u.Slug);
  const failure = co.PromotionFailures?.[co.PromotionFailures.length - 1];
  const rows: [string, string][] = [
    ['Name', co.Slug],
    ['Space', co.SpaceSlug ?? slugs.get(co.SpaceID) ?? co.SpaceID],
    ['Description', co.Description ?? ''],
    ['State', co.State],
    ['Stage', co.Stage ?? '-'],
    ['Completed', String(!!co.Completed)],
    ...(component ? [['Component', component] as [string, string]] : []),
    ['Where Space', where || '-'],
    ['In-Scope Spaces', names(co.InScopeSpaceIDs)],
    ['Resolved Spaces', names(co.ResolvedSpaceIDs)],
    ['Released Spaces', names(co.ReleasedSpaceIDs)],
    ...((co.RemovedSpaces ?? []).length
      ? [
          [
            'Removed Spaces',
            co.RemovedSpaces!.map((r) => `${r.SpaceSlug} (${r.RemovedAt} by ${user(r.UserID)})`).join(', '),
          ] as [string, string],
        ]
      : []),
    [
      'Skipped Units',
      Object.entries(co.SkippedUnits ?? {})
        .map(([id, why]) => `${units.get(id) ?? id} (${why})`)
        .join('; ') || '-',
    ],
  ];
  if (co.AbortedReason)
    rows.push([
      'Aborted Reason',
      `${co.AbortedReason}${co.AbortedAt ? ` (${co.AbortedAt}${co.AbortedBy ? ` by ${user(co.AbortedBy)}` : ''})` : ''}`,
    ]);
  if (co.AbortedReason || co.RestoredSpaceIDs?.length) {
    rows.push(['Restored Spaces', names(co.RestoredSpaceIDs)]);
    rows.push(['Restore-released Spaces', names(co.ReleasedRestoredSpaceIDs)]);
  }
  if (co.Recall) {
    const r = co.Recall;
    rows.push([
      'Recalled',
      `${r.RecalledAt}: ${r.SpaceSlug} (stage ${r.Stage}) reported ${r.Matched} for release ${r.ReleaseNum}${r.Report.ObservedAt ? ` at ${String(r.Report.ObservedAt)}` : ''}, within ${r.Within} of taking it at ${r.TakenAt}; frozen by hold ${r.Hold}${r.Demote ? '; demoted by Baton' : ''}`,
    ]);
  }
  for (const d of co.Demotions ?? [])
    rows.push([
      'Demoted',
      `${d.StartedAt}${d.Recall ? ' (recall)' : ''}: ${d.Spaces.map((s) => `${s.SpaceSlug} ${s.Restored ? 'Restored' : `failed (${s.Error ?? 'not restored'})`}`).join(', ') || 'no spaces'}`,
    ]);
  if (co.OverrideApprovals?.length)
    rows.push([
      'Override Approvals',
      co.OverrideApprovals.map(
        (x) => `window ${x.WindowSlug}: ${x.UserSlug ?? x.UserID} at ${x.ApprovedAt} (${x.Reason})`,
      ).join('; '),
    ]);
  if (failure) {
    rows.push([
      'Promotion Failure',
      `${failure.FailedAt} by ${user(failure.UserID)}${failure.Stage ? ` into ${failure.Stage}` : ''}: ${failure.Spaces.map((s) => `${s.SpaceSlug} ${s.Action}${s.Error ? ` (${s.Error})` : ''}`).join('; ')}${(failure.SpaceCount ?? 0) > failure.Spaces.length ? `; and ${failure.SpaceCount! - failure.Spaces.length} more` : ''}`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n');
}

/** `cub variant promote --change-order`: refusals read like the spec's, other failures per Space. */
/** What an explanation's gates read, as the API gives it. */
interface LiveEvidence {
  ReleaseNum: number;
  Digest?: string;
  LiveStatus?: { Sync?: string; Health?: string; Operation?: string; ObservedAt?: string; Reporter?: string };
  CarriesChange?: boolean;
}
interface Evidence {
  Hold?: string;
  Window?: string;
  Kind?: string;
  Schedule?: string;
  Active?: boolean;
  ChangesAt?: string | null;
  Spaces?: string[];
  Blocked?: string[];
  ClearAt?: string | null;
  OverrideApprovals?: number;
  Owner?: string;
  Covers?: string;
  Reason?: string;
  ExpiresAt?: string | null;
  Taken?: boolean;
  ReleaseTarget?: string | null;
  Releases?: { ReleaseNum: number; Digest: string; CarriesChange: boolean }[];
  Latest?: LiveEvidence | null;
  History?: { Health?: string; ObservedAt: string }[];
  Units?: {
    Unit: string;
    RevisionNum: number;
    ValidationErrors?: Record<string, string>;
    Counted?: string[];
    Rejected?: string[];
    Excluded?: { User: string; Why: string }[];
  }[];
  Expression?: string;
  Values?: Record<string, unknown>;
  Count?: number;
  Type?: string;
}

/** One line of what a gate read. */
function evidenceLine(g: GateResult): string {
  const e = (g.Evidence ?? {}) as Evidence;
  const live = (r: LiveEvidence | null | undefined) =>
    r
      ? `release ${r.ReleaseNum} (${String(r.Digest ?? '').slice(0, 19)}) ${r.LiveStatus?.Sync ?? '-'}/${r.LiveStatus?.Health ?? '-'}${r.LiveStatus?.Operation ? `/${r.LiveStatus.Operation}` : ''}${r.LiveStatus?.ObservedAt ? ` observed ${r.LiveStatus.ObservedAt}` : ''}${r.LiveStatus?.Reporter ? ` by ${r.LiveStatus.Reporter}` : ''}${r.CarriesChange === false ? ', not the change' : ''}`
      : 'no published release';
  if (g.Prerequisite === 'Hold')
    return `hold ${e.Hold} by ${e.Owner} on ${e.Covers}: ${e.Reason}${e.ExpiresAt ? `, until ${e.ExpiresAt}` : ''}`;
  if (g.Prerequisite === 'Window') {
    const now = e.Kind === 'Deny' ? (e.Active ? 'in force' : 'not in force') : e.Active ? 'open' : 'closed';
    return `${e.Kind === 'Deny' ? 'freeze' : 'window'} ${e.Window} by ${e.Owner}, ${e.Schedule}: ${e.Reason}; ${now} now${e.ChangesAt ? `, until ${e.ChangesAt}` : ''}; over ${(e.Spaces ?? []).join(', ')}${e.Blocked?.length ? `; blocks ${e.Blocked.join(', ')}${e.ClearAt ? ` (clear at ${e.ClearAt})` : ''}` : ''}${e.OverrideApprovals ? `; forcing needs ${e.OverrideApprovals} override approval(s)` : ''}`;
  }
  if (g.Prerequisite === 'Taken') return e.Taken ? 'took the change' : 'has not taken the change';
  if (g.Prerequisite === 'Released')
    return e.ReleaseTarget === null
      ? 'no release target'
      : (e.Releases ?? [])
          .map(
            (r) => `release ${r.ReleaseNum} (${String(r.Digest).slice(0, 19)})${r.CarriesChange ? ' carries it' : ''}`,
          )
          .join(', ') || 'no published release';
  if (g.Prerequisite === 'Healthy' || g.Prerequisite.startsWith('Soak='))
    return e.ReleaseTarget === null
      ? 'no release target'
      : `${live(e.Latest)}${e.History?.length ? `; history ${e.History.map((h) => `${h.Health}@${h.ObservedAt}`).join(' → ')}` : ''}`;
  if (g.Prerequisite === 'Validated')
    return (e.Units ?? [])
      .map(
        (u) =>
          `${u.Unit} r${u.RevisionNum}: ${Object.keys(u.ValidationErrors ?? {}).length ? Object.values(u.ValidationErrors!).join('; ') : 'valid'}`,
      )
      .join(', ');
  if (e.Expression)
    return `${e.Expression} with ${
      Object.entries(e.Values ?? {})
        .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
        .join(', ') || 'no variables'
    }`;
  if (e.Units) {
    return e.Units.map(
      (u) =>
        `${u.Unit} r${u.RevisionNum}: ${u.Counted?.length ?? 0}/${e.Count} ${e.Type}${u.Counted?.length ? ` (${u.Counted.join(', ')})` : ''}${u.Rejected?.length ? `; rejected by ${u.Rejected.join(', ')}` : ''}${u.Excluded?.length ? `; not counted: ${u.Excluded.map((x) => `${x.User} (${x.Why})`).join(', ')}` : ''}`,
    ).join('; ');
  }
  return '';
}

/** A recalled change order: what set it off and, while nothing has taken it back out, the one command that does. */
function printRecall(r: Explanation): void {
  const x = r.Recall;
  if (!x) return;
  process.stdout.write(
    `Recalled ${x.RecalledAt}: ${x.SpaceSlug} (stage ${x.Stage}) reported ${x.Matched} for release ${x.ReleaseNum}, within ${x.Within} of taking it; frozen by hold ${x.Hold}\n`,
  );
  if (x.Command) process.stdout.write(`  take it back out of every space that took it: ${x.Command}\n`);
}

/** `cub changeorder explain` and `cub variant promote --dry-run --explain`: each gate, what it read, what opens it. */
export async function explainChangeOrder(a: Args, c: Client, co: string): Promise<Explanation> {
  const [space, slug] = co.includes('/')
    ? [co.slice(0, co.indexOf('/')), co.slice(co.indexOf('/') + 1)]
    : [flag(a, 'space') ?? '', co];
  const query = {
    target_stage: flag(a, 'target-stage'),
    space: a.positional.length > 1 ? a.positional.slice(1).join(',') : undefined,
    where_space: flag(a, 'where-space'),
  };
  const r = (await c.get<Explanation>(`/space/${seg(space)}/change_order/${seg(slug)}/explain`, query)).body;
  const format = out(a);
  if (format === 'json' || format === 'yaml') {
    print(r, format);
    return r;
  }
  if (!r.Gates.length && r.Message) {
    process.stdout.write(`${r.Message}\n`);
    printRecall(r);
    return r;
  }
  const failing = r.Gates.filter((g) => !g.Satisfied).length;
  process.stdout.write(
    `${r.Stage ? `Stage '${r.Stage}'` : 'The named spaces'} (${r.Targets.map((t) => t.SpaceSlug).join(', ')}): ${r.Open ? 'open' : `blocked, ${failing} of ${r.Gates.length} gate(s) fail`}; gates over ${r.Over.map((s) => s.SpaceSlug).join(', ')}\n`,
  );
  for (const g of r.Gates) {
    process.stdout.write(
      `  ${g.Satisfied ? 'holds' : 'FAILS'}  ${g.SpaceSlug || '*'}  ${g.Prerequisite}: ${g.Message}\n`,
    );
    const line = evidenceLine(g);
    if (line) process.stdout.write(`         read: ${line}\n`);
    if (!g.Satisfied && g.Opens) process.stdout.write(`         opens: ${g.Opens}\n`);
  }
  for (const f of r.Failed ?? [])
    process.stdout.write(`  last promotion into ${f.SpaceSlug} failed (${f.FailedAt}): ${f.Error}\n`);
  printRecall(r);
  return r;
}

// One ChangeOrder's rollout, drawn: its next promotion and gates, holds, and the grid of Stages × Spaces (app.ts loads and polls it).
import type { GateResult } from '../../lib/model/change-orders.ts';
import type { HoldView } from '../../lib/model/holds.ts';
import type { Rollout, RolloutSpace, RolloutStage } from '../../lib/model/rollout.ts';
import { abortDialog, approveDialog, promoteDialog } from './actions.ts';
import { timelinePanel } from './timeline.ts';
import { ageOf, badge, fill, h, stateKind, type Child } from './dom.ts';

/** A gate as a line: satisfied or not, its message, and what would open it. */
function gateItem(g: GateResult, withSpace: boolean): HTMLElement {
  return h(
    'li',
    { 'data-gate': g.Prerequisite, 'data-satisfied': String(g.Satisfied) },
    h('span', { class: g.Satisfied ? 'gate-ok' : 'gate-no' }, h('strong', {}, g.Prerequisite)),
    withSpace && g.SpaceSlug ? ` · ${g.SpaceSlug}` : '',
    h('div', {}, g.Message),
    g.Opens ? h('div', { class: 'opens' }, `Opens: ${g.Opens}`) : null,
    g.Evidence && Object.keys(g.Evidence).length
      ? h('details', {}, h('summary', {}, 'Evidence'), h('pre', {}, JSON.stringify(g.Evidence, null, 2)))
      : null,
  );
}

/** One Space of a Stage. */
function cell(r: Rollout, s: RolloutSpace, refresh: () => void): HTMLElement {
  const state = s.RestoredAt
    ? 'restored'
    : s.Taken
      ? 'taken'
      : s.Failure
        ? 'failed'
        : s.NotStarted
          ? 'not-started'
          : 'waiting';
  const label = {
    restored: 'Restored',
    taken: 'Taken',
    failed: 'Promotion failed',
    'not-started': 'Not started (failure budget)',
    waiting: 'Waiting',
  }[state];
  const since = state === 'restored' ? s.RestoredAt : state === 'taken' ? s.TakenAt : undefined;
  const rel = s.Release;
  const live = rel?.LiveStatus;
  const approvals = new Set(s.Approvals.map((a) => a.Name));
  const items: Child[] = [
    h(
      'li',
      { 'data-field': 'release' },
      rel
        ? `Release #${rel.ReleaseNum} · ${rel.CarriesChange ? 'carries the change' : 'without the change'}`
        : s.HasTarget
          ? 'No release yet'
          : 'No release target',
    ),
    rel
      ? h(
          'li',
          { 'data-field': 'live' },
          ...(live?.Sync || live?.Health
            ? [
                badge(live.Sync ?? 'Unknown', live.Sync === 'Synced' ? 'ok' : 'warn'),
                ' ',
                badge(
                  live.Health ?? 'Unknown',
                  live.Health === 'Healthy'
                    ? 'ok'
                    : live.Health === 'Degraded' || live.Health === 'Missing'
                      ? 'bad'
                      : 'warn',
                ),
                ...(live.ObservedAt ? [' ', ageOf(live.ObservedAt, r.ReadAt), ' ago'] : []),
              ]
            : ['Not reported yet']),
        )
      : null,
    ...s.Gates.filter((g) => !approvals.has(g.Prerequisite)).map((g) =>
      h(
        'li',
        { 'data-gate': g.Prerequisite, 'data-satisfied': String(g.Satisfied), title: g.Message },
        h('span', { class: g.Satisfied ? 'gate-ok' : 'gate-no' }, g.Prerequisite),
      ),
    ),
    ...s.Approvals.map((a) =>
      h(
        'li',
        { 'data-approval': a.Name, 'data-missing': String(a.Missing), class: a.Missing ? 'gate-no' : 'gate-ok' },
        `${a.Name}: ${a.Count - a.Missing} of ${a.Count}${a.Counted.length ? ` (${a.Counted.join(', ')})` : ''}${a.Missing ? ` — ${a.Missing} missing` : ''}`,
      ),
    ),
    s.Failure
      ? h(
          'li',
          { 'data-field': 'failure', class: 'gate-no' },
          `Failed at ${s.Failure.FailedAt}: ${s.Failure.Error ?? s.Failure.Action}${s.Failure.Units.length ? ` (${s.Failure.Units.map((u) => `${u.UnitSlug}: ${u.Error}`).join('; ')})` : ''}`,
        )
      : null,
    ...s.Overrides.map((o) =>
      h('li', { 'data-field': 'override' }, badge('forced', 'warn'), ` ${o.Reason} (past ${o.Gates.join(', ')})`),
    ),
  ];
  const needsApproval = s.Taken && s.Approvals.some((a) => a.Missing > 0);
  return h(
    'li',
    { class: 'cell', 'data-space': s.SpaceSlug, 'data-state': state, 'aria-label': `${s.SpaceSlug}: ${label}` },
    h('h3', {}, s.SpaceSlug),
    h('div', { 'data-field': 'state' }, label, ...(since ? [' ', ageOf(since, r.ReadAt), ' ago'] : [])),
    h('ul', {}, ...items),
    needsApproval
      ? h(
          'button',
          {
            type: 'button',
            'data-action': 'approve-space',
            'data-focus-key': `approve-${s.SpaceSlug}`,
            onclick: () => approveDialog(r, { space: s.SpaceSlug }, refresh),
          },
          `Approve in ${s.SpaceSlug}`,
        )
      : null,
  );
}

function holdItem(hd: HoldView): HTMLElement {
  const covers =
    hd.Scope === 'Organization'
      ? 'the organization'
      : hd.Scope === 'Space'
        ? `space ${hd.SpaceSlug ?? hd.SpaceID}`
        : hd.Scope === 'ChangeOrder'
          ? `change order ${hd.ChangeOrderSlug ?? hd.ChangeOrderID}`
          : `workflow ${hd.ChangeWorkflowSlug ?? hd.ChangeWorkflowID}`;
  return h(
    'li',
    { 'data-hold': hd.Slug },
    h('strong', {}, hd.Slug),
    ` on ${covers}: ${hd.Reason} (placed by ${hd.OwnerSlug ?? hd.OwnerID}${hd.ExpiresAt ? `, until ${hd.ExpiresAt}` : ''}; blocks ${hd.Blocks.join(', ')})`,
  );
}

/** A deploy window over the rollout's Spaces: what it covers, its schedule, open or closed now and until when. */
function windowItem(w: Rollout['Windows'][number]): HTMLElement {
  const covers =
    w.Scope === 'Space'
      ? `space ${w.SpaceSlug ?? w.SpaceID}`
      : w.Scope === 'WhereSpace'
        ? `where ${w.WhereSpace}`
        : `stage ${w.Stage} of workflow ${w.ChangeWorkflowSlug ?? w.ChangeWorkflowID}`;
  const schedule = w.Cron ? `${w.Cron} for ${w.Duration} (${w.TimeZone ?? 'UTC'})` : `${w.Start} to ${w.End}`;
  const deny = w.Kind === 'Deny';
  const state = deny ? (w.Active ? 'in force' : 'not in force') : w.Active ? 'open' : 'closed';
  const blocking = deny ? w.Active : !w.Active;
  return h(
    'li',
    { 'data-window': w.Slug, 'data-active': String(w.Active) },
    h('strong', {}, w.Slug),
    ' ',
    badge(deny ? 'freeze' : 'window', deny ? 'bad' : 'ok'),
    ' ',
    badge(state, blocking ? 'bad' : 'ok'),
    ` on ${covers}: ${schedule}; ${w.ChangesAt ? `${state} until ${w.ChangesAt}` : `${state} for good`}. Over ${w.CoveredSpaces.join(', ')}. ${w.Reason} (by ${w.OwnerSlug ?? w.OwnerID}${w.OverrideApprovals ? `; forcing needs ${w.OverrideApprovals} override approval(s)` : ''}; blocks ${w.Blocks.join(', ')})`,
  );
}

export function renderRollout(r: Rollout, head: HTMLElement, body: HTMLElement, refresh: () => void): void {
  const co = r.ChangeOrder;
  const next = r.Next;
  const canApproveStage = (st: RolloutStage) =>
    st.Spaces.some((s) => s.Taken && s.Approvals.some((a) => a.Missing > 0));
  fill(
    head,
    h('h1', {}, co.Slug),
    h(
      'div',
      { class: 'meta' },
      h('span', {}, 'Base ', h('strong', {}, r.Base.SpaceSlug)),
      h('span', { 'data-field': 'co-state' }, 'State ', badge(co.State, stateKind(co.State))),
      h('span', { 'data-field': 'co-stage' }, 'Stage ', h('strong', {}, co.Stage ?? '—')),
      co.Completed ? badge('Completed', 'ok') : null,
      h('span', { class: 'muted', 'data-field': 'read-at' }, `Updated ${new Date(r.ReadAt).toLocaleTimeString()}`),
    ),
    co.Description ? h('p', {}, co.Description) : null,
    co.AbortedReason ? h('p', { class: 'alert' }, `Aborted: ${co.AbortedReason}`) : null,
    h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'primary',
          'data-action': 'promote',
          'data-focus-key': 'promote',
          disabled: !next || !!r.Job,
          onclick: () => promoteDialog(r, refresh),
        },
        next?.Stage ? `Promote to ${next.Stage}…` : 'Promote…',
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'data-action': 'abort',
          'data-focus-key': 'abort',
          disabled: !!co.AbortedReason,
          onclick: () => abortDialog(r, refresh),
        },
        'Abort…',
      ),
    ),
    r.Job
      ? h(
          'div',
          { class: 'panel', 'data-field': 'job' },
          h(
            'label',
            { for: 'job-progress' },
            `Promotion running (job ${r.Job.JobID}): ${r.Job.Done} of ${r.Job.Total} space(s)`,
          ),
          h('progress', { id: 'job-progress', max: String(r.Job.Total), value: String(r.Job.Done) }),
        )
      : null,
    next
      ? h(
          'section',
          { class: 'panel', id: 'next', 'aria-labelledby': 'next-title', 'data-open': String(next.Open) },
          h(
            'h2',
            { id: 'next-title' },
            `Next: ${next.Stage ?? next.Targets.map((t) => t.SpaceSlug).join(', ')} `,
            badge(next.Open ? 'open' : 'blocked', next.Open ? 'ok' : 'bad'),
          ),
          h(
            'p',
            { class: 'muted' },
            `Into ${next.Targets.map((t) => t.SpaceSlug).join(', ') || '—'}; gates over ${next.Over.map((t) => t.SpaceSlug).join(', ') || '—'}.`,
          ),
          !next.Gates.length ? h('p', {}, next.Message ?? 'No gates: nothing holds it back.') : null,
          // What holds it back first; the gates that hold, folded away.
          next.Gates.some((g) => !g.Satisfied)
            ? h(
                'ul',
                { class: 'gates', 'data-field': 'failing' },
                ...next.Gates.filter((g) => !g.Satisfied).map((g) => gateItem(g, true)),
              )
            : null,
          next.Gates.some((g) => g.Satisfied)
            ? h(
                'details',
                { 'data-field': 'holding' },
                h('summary', {}, `${next.Gates.filter((g) => g.Satisfied).length} gate(s) hold`),
                h('ul', { class: 'gates' }, ...next.Gates.filter((g) => g.Satisfied).map((g) => gateItem(g, true))),
              )
            : null,
        )
      : null,
    r.Holds.length
      ? h(
          'section',
          { class: 'panel', id: 'holds', 'aria-labelledby': 'holds-title' },
          h('h2', { id: 'holds-title' }, `Holds in force (${r.Holds.length})`),
          h('ul', {}, ...r.Holds.map(holdItem)),
        )
      : null,
    co.Recall
      ? h(
          'section',
          { class: 'panel', id: 'recall', 'aria-labelledby': 'recall-title' },
          h('h2', { id: 'recall-title' }, 'Recalled ', badge(co.Recall.Matched, 'bad')),
          h(
            'p',
            {},
            `${co.Recall.SpaceSlug} (stage ${co.Recall.Stage}) reported ${co.Recall.Matched} for release ${co.Recall.ReleaseNum}${co.Recall.Report.ObservedAt ? ` at ${String(co.Recall.Report.ObservedAt)}` : ''}, within ${co.Recall.Within} of taking the change at ${co.Recall.TakenAt}. Frozen by hold ${co.Recall.Hold}.`,
          ),
          ...(co.Demotions ?? []).map((d) =>
            h(
              'p',
              { 'data-field': 'demotion' },
              `Demoted${d.Recall ? ' by the recall' : ''} (${d.StartedAt}): ${d.Spaces.map((s) => `${s.SpaceSlug} ${s.Restored ? 'restored' : `not restored (${s.Error ?? 'failed'})`}`).join(', ') || 'no spaces'}.`,
            ),
          ),
          next?.Recall?.Command ? h('p', { class: 'opens' }, `Take it back out: ${next.Recall.Command}`) : null,
        )
      : null,
    timelinePanel(r.Base.SpaceSlug, co.Slug),
    r.Windows?.length
      ? h(
          'section',
          { class: 'panel', id: 'windows', 'aria-labelledby': 'windows-title' },
          h('h2', { id: 'windows-title' }, `Deploy windows (${r.Windows.length})`),
          h('ul', {}, ...r.Windows.map(windowItem)),
        )
      : null,
  );
  body.replaceChildren(
    ...r.Stages.map((st, i) =>
      h(
        'section',
        { class: 'stage', 'data-stage': st.Name, 'data-status': st.Status, 'aria-labelledby': `stage-${i}` },
        h(
          'header',
          {},
          h('h2', { id: `stage-${i}` }, st.Name),
          badge(
            st.Status,
            st.Status === 'Reached' ? 'ok' : st.Status === 'Next' ? 'info' : st.Status === 'Partial' ? 'warn' : '',
          ),
          h(
            'span',
            { class: 'guards' },
            st.Guards.length
              ? `${i === r.Stages.length - 1 ? 'Final' : 'Before the next stage'}: ${st.Guards.join(', ')}`
              : '',
          ),
          canApproveStage(st)
            ? h(
                'button',
                {
                  type: 'button',
                  'data-action': 'approve-stage',
                  'data-focus-key': `approve-${st.Name}`,
                  onclick: () => approveDialog(r, { stage: st.Name }, refresh),
                },
                `Approve ${st.Name}…`,
              )
            : null,
        ),
        st.Spaces.length
          ? h('ul', { class: 'cells' }, ...st.Spaces.map((s) => cell(r, s, refresh)))
          : h('p', { class: 'muted empty' }, 'No spaces in scope.'),
      ),
    ),
  );
}

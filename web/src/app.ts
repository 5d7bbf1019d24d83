// The rollout page: a client of the HTTP API, like cub. Views (the list, one ChangeOrder's grid), polling and the address.
import type { ChangeOrderView, GateResult } from '../../lib/model/change-orders.ts';
import type { HoldView } from '../../lib/model/holds.ts';
import type { Rollout, RolloutSpace, RolloutStage } from '../../lib/model/rollout.ts';
import { abortDialog, approveDialog, promoteDialog } from './actions.ts';
import { ApiError, call, path, session, TOKEN_KEY, type PageConfig } from './api.ts';
import { nextPollMs } from './poll.ts';
import { $, ageOf, badge, fill, h, refreshAges, showAlert, stateKind, type Child } from './dom.ts';

type Listed = ChangeOrderView & { SpaceSlug?: string };

/** How often a view reloads: `?poll=ms`, at least 250 ms (anything else: 4 s). */
const POLL_MS = Math.max(250, Number(new URLSearchParams(location.search).get('poll')) || 4000);
const DEFAULT_WHERE = "State IN ('New', 'InProgress', 'Resolved', 'Released') AND Completed = false";

let timer: number | undefined;
/** Loads the shown view again now (after an action), keeping the polling going. */
let reload: (() => void) | undefined;
/** Increases with each view shown, so a slow answer for a view left behind is dropped. */
let generation = 0;
const refresh = () => route(true);
/** Set by Sign out: the local server's token is not taken again until a token is entered. */
const SIGNED_OUT = 'baton.signedOut';

function stopPolling(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  reload = undefined;
}

/**
 * Runs `load` now and again every POLL_MS while the page is visible (longer after a slow read: see
 * nextPollMs), so promotions, releases and live status show up as they arrive.
 */
function poll(load: () => Promise<void>): void {
  stopPolling();
  const mine = generation;
  const tick = async () => {
    if (mine !== generation) return;
    let took = 0;
    if (document.visibilityState === 'visible') {
      const started = performance.now();
      try {
        await load();
        took = performance.now() - started;
      } catch (e) {
        if (mine === generation) showAlert((e as Error).message);
        if (e instanceof ApiError && e.status === 401) return route();
      }
    }
    if (mine === generation) timer = window.setTimeout(() => void tick(), nextPollMs(POLL_MS, took));
  };
  reload = () => {
    if (mine !== generation) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    void tick();
  };
  void tick();
}

/** The token form: a token the user pastes (cub prints one: cub token create), kept in this browser. */
function tokenView(): void {
  stopPolling();
  const main = $('main');
  const input = h('input', {
    id: 'token',
    type: 'password',
    autocomplete: 'off',
    required: true,
    'aria-describedby': 'token-help',
  });
  fill(
    main,
    h('h1', {}, 'Sign in with a token'),
    h(
      'form',
      {
        onsubmit: (e: Event) => {
          e.preventDefault();
          session.token = input.value.trim();
          localStorage.setItem(TOKEN_KEY, session.token);
          localStorage.removeItem(SIGNED_OUT);
          route();
        },
      },
      h('label', { for: 'token' }, 'API token'),
      input,
      h(
        'p',
        { id: 'token-help', class: 'muted' },
        'The token npm start printed, or one from cub token create. It is kept in this browser until you sign out.',
      ),
      h('button', { class: 'primary', type: 'submit' }, 'Sign in'),
    ),
  );
  input.focus();
}

/** ChangeOrders, filtered by a where expression (in flight by default), with State and Stage. */
function listView(where: string): void {
  const main = $('main');
  const input = h('input', {
    id: 'where',
    name: 'where',
    value: where,
    spellcheck: 'false',
    'aria-describedby': 'where-help',
  });
  const body = h('tbody');
  const count = h('p', { class: 'muted', 'aria-live': 'polite' });
  main.replaceChildren(
    h('h1', {}, 'Change orders'),
    h(
      'form',
      {
        class: 'panel',
        role: 'search',
        onsubmit: (e: Event) => {
          e.preventDefault();
          location.hash = `#/?where=${encodeURIComponent(input.value)}`;
        },
      },
      h('label', { for: 'where' }, 'Where'),
      h('div', { class: 'row' }, h('div', { class: 'grow' }, input), h('button', { type: 'submit' }, 'Filter')),
      h(
        'p',
        { id: 'where-help', class: 'muted' },
        'A where expression over ChangeOrders: State, Stage, Completed, Slug, Description… Empty lists them all.',
      ),
    ),
    count,
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { id: 'changeorders' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Change order'),
            h('th', { scope: 'col' }, 'Base'),
            h('th', { scope: 'col' }, 'State'),
            h('th', { scope: 'col' }, 'Stage'),
            h('th', { scope: 'col', class: 'hide-narrow' }, 'Description'),
          ),
        ),
        body,
      ),
    ),
  );
  let shown = '';
  poll(async () => {
    const q = where.trim() ? `?where=${encodeURIComponent(where)}` : '';
    const cos = (await call<Listed[]>('GET', `/change_order${q}`)).body;
    showAlert(undefined);
    const seen = JSON.stringify(cos.map((c) => [c.Slug, c.SpaceSlug, c.State, c.Stage, c.Description]));
    if (seen === shown) return;
    shown = seen;
    count.textContent = `${cos.length} change order(s)`;
    body.replaceChildren(
      ...cos.map((co) =>
        h(
          'tr',
          { 'data-slug': co.Slug },
          h(
            'td',
            {},
            h(
              'a',
              { href: `#/co/${encodeURIComponent(co.SpaceSlug ?? co.SpaceID)}/${encodeURIComponent(co.Slug)}` },
              co.Slug,
            ),
          ),
          h('td', {}, co.SpaceSlug ?? ''),
          h('td', {}, badge(co.State, stateKind(co.State))),
          h('td', {}, co.Stage ?? '—'),
          h('td', { class: 'hide-narrow' }, co.Description ?? ''),
        ),
      ),
    );
  });
}

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
function cell(r: Rollout, s: RolloutSpace): HTMLElement {
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
        : `workflow ${hd.ChangeWorkflowSlug ?? hd.ChangeWorkflowID}`;
  return h(
    'li',
    { 'data-hold': hd.Slug },
    h('strong', {}, hd.Slug),
    ` on ${covers}: ${hd.Reason} (placed by ${hd.OwnerSlug ?? hd.OwnerID}${hd.ExpiresAt ? `, until ${hd.ExpiresAt}` : ''}; blocks ${hd.Blocks.join(', ')})`,
  );
}

/** One ChangeOrder: its next promotion, holds, and a grid of Stages × Spaces. */
function rolloutView(space: string, slug: string): void {
  const main = $('main');
  const head = h('div');
  const body = h('div');
  main.replaceChildren(h('p', {}, h('a', { href: '#/' }, '← Change orders')), head, body);
  let shown = '';
  poll(async () => {
    const r = (await call<Rollout>('GET', `${path(space, slug)}/rollout`)).body;
    showAlert(undefined);
    // Drawn again only when something changed (ages are brought up to date in place), so what a person is about to click stays put.
    const seen = JSON.stringify({ ...r, ReadAt: undefined });
    if (seen !== shown) {
      // Keep focus where the person left it: a button drawn again gets it back.
      const focused =
        document.activeElement instanceof HTMLElement ? document.activeElement.dataset.focusKey : undefined;
      renderRollout(r, head, body);
      if (focused) main.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focused)}"]`)?.focus();
      document.title = `${r.ChangeOrder.Slug} — Baton`;
      shown = seen;
    }
    refreshAges(main, r.ReadAt);
    const readAt = main.querySelector('[data-field=read-at]');
    if (readAt) readAt.textContent = `Updated ${new Date(r.ReadAt).toLocaleTimeString()}`;
  });
}

function renderRollout(r: Rollout, head: HTMLElement, body: HTMLElement): void {
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
          ? h('ul', { class: 'cells' }, ...st.Spaces.map((s) => cell(r, s)))
          : h('p', { class: 'muted empty' }, 'No spaces in scope.'),
      ),
    ),
  );
}

/** Shows the view the address names: #/ (the list, ?where=…), #/co/<space>/<slug>. `refresh` loads the shown view again instead. */
function route(refresh = false): void {
  if (!session.token) return tokenView();
  if (refresh && reload) return reload();
  generation++;
  showAlert(undefined);
  const hash = location.hash.replace(/^#/, '') || '/';
  const co = /^\/co\/([^/]+)\/([^/?]+)$/.exec(hash);
  if (co) rolloutView(decodeURIComponent(co[1]!), decodeURIComponent(co[2]!));
  else listView(new URLSearchParams(hash.split('?')[1] ?? '').get('where') ?? DEFAULT_WHERE);
  $('main').focus();
}

async function start(): Promise<void> {
  let config: PageConfig = {};
  try {
    const res = await fetch('config.json', { cache: 'no-store' });
    if (res.ok) config = (await res.json()) as PageConfig;
  } catch {
    /* no config: the API is where the page is */
  }
  session.apiUrl = (config.ApiUrl ?? '').replace(/\/$/, '');
  // Signed out stays signed out, even where the local server offers its context's token.
  session.token = localStorage.getItem(TOKEN_KEY) ?? (localStorage.getItem(SIGNED_OUT) ? '' : (config.Token ?? ''));
  const who = $('who');
  who.replaceChildren(
    h(
      'button',
      {
        type: 'button',
        'data-action': 'sign-out',
        onclick: () => (
          localStorage.removeItem(TOKEN_KEY),
          localStorage.setItem(SIGNED_OUT, '1'),
          (session.token = ''),
          tokenView()
        ),
      },
      'Sign out',
    ),
  );
  window.addEventListener('hashchange', () => route());
  document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && route(true));
  route();
}

void start();

// The rollout page: a client of the HTTP API, like cub. Every action goes through the same routes and checks.
import type { ChangeOrderView, GateResult } from '../../lib/model/change-orders.ts';
import type { HoldView } from '../../lib/model/holds.ts';
import type { Rollout, RolloutSpace, RolloutStage } from '../../lib/model/rollout.ts';

/** What the page is served with: the API's address (on AWS) and, from a local server on this machine, its token. */
interface PageConfig {
  ApiUrl?: string;
  Token?: string;
}
interface Answer<T> {
  status: number;
  body: T;
}
interface ErrorBody {
  Code?: string;
  Message?: string;
}
interface Promotion {
  Message?: string;
  DryRun?: boolean;
  Stage?: string;
  Landed: number;
  Total: number;
  Forced?: boolean;
  Spaces: { SpaceSlug: string; Action: string; Error?: string; Units: { UnitSlug?: string; Action?: string }[] }[];
}
interface JobAnswer {
  JobID: string;
  State: 'Running' | 'Done';
  Done: number;
  Total: number;
  Status?: number;
  Result?: unknown;
}
type Listed = ChangeOrderView & { SpaceSlug?: string };

const POLL_MS = Number(new URLSearchParams(location.search).get('poll') ?? 4000);
const TOKEN_KEY = 'baton.token';
const DEFAULT_WHERE = "State IN ('New', 'InProgress', 'Resolved', 'Released') AND Completed = false";

let apiUrl = '';
let token = '';
let timer: number | undefined;
/** Loads the shown view again now (after an action), keeping the polling going. */
let reload: (() => void) | undefined;
/** Increases with each view shown, so a slow answer for a view left behind is dropped. */
let generation = 0;

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Calls the API with the token; a 4xx/5xx becomes an ApiError carrying the server's message. */
async function call<T>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const res = await fetch(apiUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as unknown) : undefined;
  if (res.status === 401) {
    localStorage.removeItem(TOKEN_KEY);
    token = '';
    throw new ApiError(401, (parsed as ErrorBody | undefined)?.Message ?? 'the token was refused');
  }
  if (res.status >= 400) throw new ApiError(res.status, `HTTP ${res.status}: ${(parsed as ErrorBody | undefined)?.Message ?? res.statusText}`);
  return { status: res.status, body: parsed as T };
}

type Child = Node | string | number | false | null | undefined;
/** Builds an element; text is always set as text, never parsed as HTML. */
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | undefined | ((e: Event) => void)> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else if (v !== undefined && v !== false) el.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
  return el;
}

const $ = (id: string) => document.getElementById(id)!;

/** Replaces an element's children, leaving out the absent ones. */
function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren(...children.filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false).map((c) => (typeof c === 'number' ? String(c) : c)));
}

function showAlert(message: string | undefined): void {
  const el = $('alert');
  el.textContent = message ?? '';
  el.hidden = !message;
}

/** How long before `now` an instant was: 40s, 5m, 3h, 2d. */
function age(at: string | undefined, now: string): string {
  if (!at) return '';
  const s = Math.max(0, Math.round((Date.parse(now) - Date.parse(at)) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : s < 86400 ? `${Math.floor(s / 3600)}h` : `${Math.floor(s / 86400)}d`;
}

/** An age that later polls bring up to date in place (see `refreshAges`). */
const ageOf = (at: string | undefined, now: string) => h('span', { 'data-age': at ?? '' }, age(at, now));
function refreshAges(root: Element, now: string): void {
  for (const el of root.querySelectorAll<HTMLElement>('[data-age]')) el.textContent = age(el.dataset.age, now);
}
const badge = (text: string, kind = '') => h('span', { class: `badge ${kind}` }, text);
const stateKind = (s: string) => (s === 'Released' || s === 'Resolved' ? 'ok' : s === 'InProgress' ? 'info' : s.startsWith('Restore') || s === 'Aborted' ? 'bad' : '');
const path = (space: string, slug: string) => `/space/${encodeURIComponent(space)}/change_order/${encodeURIComponent(slug)}`;

function stopPolling(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  reload = undefined;
}

/** Runs `load` now and again every POLL_MS while the page is visible: promotions, releases and live status show up as they arrive. */
function poll(load: () => Promise<void>): void {
  stopPolling();
  const mine = generation;
  const tick = async () => {
    if (mine !== generation) return;
    if (document.visibilityState === 'visible') {
      try {
        await load();
      } catch (e) {
        if (mine === generation) showAlert((e as Error).message);
        if (e instanceof ApiError && e.status === 401) return route();
      }
    }
    if (mine === generation) timer = window.setTimeout(() => void tick(), POLL_MS);
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
function tokenView(why?: string): void {
  stopPolling();
  const main = $('main');
  const input = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true, 'aria-describedby': 'token-help' });
  fill(
    main,
    h('h1', {}, 'Sign in with a token'),
    why ? h('p', { class: 'alert', role: 'alert' }, why) : null,
    h(
      'form',
      {
        onsubmit: (e: Event) => {
          e.preventDefault();
          token = input.value.trim();
          localStorage.setItem(TOKEN_KEY, token);
          route();
        },
      },
      h('label', { for: 'token' }, 'API token'),
      input,
      h('p', { id: 'token-help', class: 'muted' }, 'The token npm start printed, or one from cub token create. It is kept in this browser until you sign out.'),
      h('button', { class: 'primary', type: 'submit' }, 'Sign in'),
    ),
  );
  input.focus();
}

/** ChangeOrders, filtered by a where expression (in flight by default), with State and Stage. */
function listView(where: string): void {
  const main = $('main');
  const input = h('input', { id: 'where', name: 'where', value: where, spellcheck: 'false', 'aria-describedby': 'where-help' });
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
      h('p', { id: 'where-help', class: 'muted' }, 'A where expression over ChangeOrders: State, Stage, Completed, Slug, Description… Empty lists them all.'),
    ),
    count,
    h('div', { class: 'scroll' }, h('table', { id: 'changeorders' }, h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Change order'), h('th', { scope: 'col' }, 'Base'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Stage'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Description'))), body)),
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
          h('td', {}, h('a', { href: `#/co/${encodeURIComponent(co.SpaceSlug ?? co.SpaceID)}/${encodeURIComponent(co.Slug)}` }, co.Slug)),
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
    g.Evidence && Object.keys(g.Evidence).length ? h('details', {}, h('summary', {}, 'Evidence'), h('pre', {}, JSON.stringify(g.Evidence, null, 2))) : null,
  );
}

/** One Space of a Stage. */
function cell(r: Rollout, s: RolloutSpace): HTMLElement {
  const state = s.RestoredAt ? 'restored' : s.Taken ? 'taken' : s.Failure ? 'failed' : s.NotStarted ? 'not-started' : 'waiting';
  const label = { restored: 'Restored', taken: 'Taken', failed: 'Promotion failed', 'not-started': 'Not started (failure budget)', waiting: 'Waiting' }[state];
  const since = state === 'restored' ? s.RestoredAt : state === 'taken' ? s.TakenAt : undefined;
  const rel = s.Release;
  const live = rel?.LiveStatus;
  const approvals = new Set(s.Approvals.map((a) => a.Name));
  const items: Child[] = [
    h('li', { 'data-field': 'release' }, rel ? `Release #${rel.ReleaseNum} · ${rel.CarriesChange ? 'carries the change' : 'without the change'}` : s.HasTarget ? 'No release yet' : 'No release target'),
    rel
      ? h(
          'li',
          { 'data-field': 'live' },
          ...(live?.Sync || live?.Health
            ? [badge(live.Sync ?? 'Unknown', live.Sync === 'Synced' ? 'ok' : 'warn'), ' ', badge(live.Health ?? 'Unknown', live.Health === 'Healthy' ? 'ok' : live.Health === 'Degraded' || live.Health === 'Missing' ? 'bad' : 'warn'), ...(live.ObservedAt ? [' ', ageOf(live.ObservedAt, r.ReadAt), ' ago'] : [])]
            : ['Not reported yet']),
        )
      : null,
    ...s.Gates.filter((g) => !approvals.has(g.Prerequisite)).map((g) => h('li', { 'data-gate': g.Prerequisite, 'data-satisfied': String(g.Satisfied), title: g.Message }, h('span', { class: g.Satisfied ? 'gate-ok' : 'gate-no' }, g.Prerequisite))),
    ...s.Approvals.map((a) => h('li', { 'data-approval': a.Name, 'data-missing': String(a.Missing), class: a.Missing ? 'gate-no' : 'gate-ok' }, `${a.Name}: ${a.Count - a.Missing} of ${a.Count}${a.Counted.length ? ` (${a.Counted.join(', ')})` : ''}${a.Missing ? ` — ${a.Missing} missing` : ''}`)),
    s.Failure ? h('li', { 'data-field': 'failure', class: 'gate-no' }, `Failed at ${s.Failure.FailedAt}: ${s.Failure.Error ?? s.Failure.Action}${s.Failure.Units.length ? ` (${s.Failure.Units.map((u) => `${u.UnitSlug}: ${u.Error}`).join('; ')})` : ''}`) : null,
    ...s.Overrides.map((o) => h('li', { 'data-field': 'override' }, badge('forced', 'warn'), ` ${o.Reason} (past ${o.Gates.join(', ')})`)),
  ];
  const needsApproval = s.Taken && s.Approvals.some((a) => a.Missing > 0);
  return h(
    'li',
    { class: 'cell', 'data-space': s.SpaceSlug, 'data-state': state, 'aria-label': `${s.SpaceSlug}: ${label}` },
    h('h3', {}, s.SpaceSlug),
    h('div', { 'data-field': 'state' }, label, ...(since ? [' ', ageOf(since, r.ReadAt), ' ago'] : [])),
    h('ul', {}, ...items),
    needsApproval ? h('button', { type: 'button', 'data-action': 'approve-space', 'data-focus-key': `approve-${s.SpaceSlug}`, onclick: () => approveDialog(r, { space: s.SpaceSlug }) }, `Approve in ${s.SpaceSlug}`) : null,
  );
}

function holdItem(hd: HoldView): HTMLElement {
  const covers = hd.Scope === 'Organization' ? 'the organization' : hd.Scope === 'Space' ? `space ${hd.SpaceSlug ?? hd.SpaceID}` : `workflow ${hd.ChangeWorkflowSlug ?? hd.ChangeWorkflowID}`;
  return h('li', { 'data-hold': hd.Slug }, h('strong', {}, hd.Slug), ` on ${covers}: ${hd.Reason} (placed by ${hd.OwnerSlug ?? hd.OwnerID}${hd.ExpiresAt ? `, until ${hd.ExpiresAt}` : ''}; blocks ${hd.Blocks.join(', ')})`);
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
      const focused = document.activeElement instanceof HTMLElement ? document.activeElement.dataset.focusKey : undefined;
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
  const canApproveStage = (st: RolloutStage) => st.Spaces.some((s) => s.Taken && s.Approvals.some((a) => a.Missing > 0));
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
      h('button', { type: 'button', class: 'primary', 'data-action': 'promote', 'data-focus-key': 'promote', disabled: !next || !!r.Job, onclick: () => promoteDialog(r) }, next?.Stage ? `Promote to ${next.Stage}…` : 'Promote…'),
      h('button', { type: 'button', class: 'danger', 'data-action': 'abort', 'data-focus-key': 'abort', disabled: !!co.AbortedReason, onclick: () => abortDialog(r) }, 'Abort…'),
    ),
    r.Job ? h('div', { class: 'panel', 'data-field': 'job' }, h('label', { for: 'job-progress' }, `Promotion running (job ${r.Job.JobID}): ${r.Job.Done} of ${r.Job.Total} space(s)`), h('progress', { id: 'job-progress', max: String(r.Job.Total), value: String(r.Job.Done) })) : null,
    next
      ? h(
          'section',
          { class: 'panel', id: 'next', 'aria-labelledby': 'next-title', 'data-open': String(next.Open) },
          h('h2', { id: 'next-title' }, `Next: ${next.Stage ?? next.Targets.map((t) => t.SpaceSlug).join(', ')} `, badge(next.Open ? 'open' : 'blocked', next.Open ? 'ok' : 'bad')),
          h('p', { class: 'muted' }, `Into ${next.Targets.map((t) => t.SpaceSlug).join(', ') || '—'}; gates over ${next.Over.map((t) => t.SpaceSlug).join(', ') || '—'}.`),
          !next.Gates.length ? h('p', {}, next.Message ?? 'No gates: nothing holds it back.') : null,
          // What holds it back first; the gates that hold, folded away.
          next.Gates.some((g) => !g.Satisfied) ? h('ul', { class: 'gates', 'data-field': 'failing' }, ...next.Gates.filter((g) => !g.Satisfied).map((g) => gateItem(g, true))) : null,
          next.Gates.some((g) => g.Satisfied) ? h('details', { 'data-field': 'holding' }, h('summary', {}, `${next.Gates.filter((g) => g.Satisfied).length} gate(s) hold`), h('ul', { class: 'gates' }, ...next.Gates.filter((g) => g.Satisfied).map((g) => gateItem(g, true)))) : null,
        )
      : null,
    r.Holds.length ? h('section', { class: 'panel', id: 'holds', 'aria-labelledby': 'holds-title' }, h('h2', { id: 'holds-title' }, `Holds in force (${r.Holds.length})`), h('ul', {}, ...r.Holds.map(holdItem))) : null,
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
          badge(st.Status, st.Status === 'Reached' ? 'ok' : st.Status === 'Next' ? 'info' : st.Status === 'Partial' ? 'warn' : ''),
          h('span', { class: 'guards' }, st.Guards.length ? `${i === r.Stages.length - 1 ? 'Final' : 'Before the next stage'}: ${st.Guards.join(', ')}` : ''),
          canApproveStage(st) ? h('button', { type: 'button', 'data-action': 'approve-stage', 'data-focus-key': `approve-${st.Name}`, onclick: () => approveDialog(r, { stage: st.Name }) }, `Approve ${st.Name}…`) : null,
        ),
        st.Spaces.length ? h('ul', { class: 'cells' }, ...st.Spaces.map((s) => cell(r, s))) : h('p', { class: 'muted empty' }, 'No spaces in scope.'),
      ),
    ),
  );
}

/** Opens the dialog with a title and content; `onClose` runs when it closes. Focus goes into it, and back when it closes. */
function openDialog(title: string, ...content: Child[]): HTMLDialogElement {
  const d = $('dialog') as HTMLDialogElement;
  const back = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
  fill(d, h('h2', { id: 'dialog-title' }, title), ...content);
  d.addEventListener('close', () => back?.focus(), { once: true });
  if (!d.open) d.showModal();
  return d;
}
const closeButton = (label = 'Cancel') => h('button', { type: 'button', 'data-action': 'close', onclick: () => ($('dialog') as HTMLDialogElement).close() }, label);

/** A promotion's answer in a sentence, as cub prints it. */
function summary(p: Promotion): string {
  if (p.Message && !p.Spaces.length) return p.Message;
  return `${p.DryRun ? 'Would promote' : 'Promoted'} change order into ${p.Stage ? `stage '${p.Stage}'` : 'the named spaces'}: ${p.Landed} of ${p.Total} space(s)${p.Forced ? ' (forced past failing gates)' : ''}`;
}

/** A promotion's answer as a table: each Space, what happened, and its Units. */
function promotionTable(p: Promotion): HTMLElement {
  return h(
    'div',
    { class: 'scroll' },
    h(
      'table',
      { id: 'promotion' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Space'), h('th', { scope: 'col' }, 'Action'), h('th', { scope: 'col' }, 'Units'))),
      h('tbody', {}, ...p.Spaces.map((s) => h('tr', { 'data-space': s.SpaceSlug }, h('td', {}, s.SpaceSlug), h('td', {}, s.Action, s.Error ? ` — ${s.Error}` : ''), h('td', {}, s.Units.map((u) => `${u.UnitSlug ?? ''} ${u.Action ?? ''}`.trim()).join(', '))))),
    ),
  );
}

/** Promote the next Stage: a dry run first, shown; then the promotion, followed to its end when it runs as a job. */
async function promoteDialog(r: Rollout): Promise<void> {
  const ref = `${r.Base.SpaceSlug}/${r.ChangeOrder.Slug}`;
  const status = h('div', { 'aria-live': 'polite' }, 'Previewing the promotion (a dry run: nothing is written)…');
  const d = openDialog(`Promote ${r.ChangeOrder.Slug}${r.Next?.Stage ? ` to ${r.Next.Stage}` : ''}`, status, h('div', { class: 'actions' }, closeButton()));
  let preview: Promotion;
  try {
    preview = (await call<Promotion>('POST', '/promote', { ChangeOrderID: ref, DryRun: true })).body;
  } catch (e) {
    status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
    return;
  }
  const go = h('button', { type: 'button', class: 'primary', 'data-action': 'confirm-promote' }, `Promote ${preview.Total} space(s)`);
  status.replaceChildren(h('p', { 'data-field': 'preview-message' }, summary(preview)), promotionTable(preview));
  d.querySelector('.actions')!.prepend(go);
  go.focus();
  go.addEventListener('click', async () => {
    go.disabled = true;
    status.replaceChildren(h('p', {}, 'Promoting…'));
    try {
      const a = await call<Promotion | JobAnswer>('POST', '/promote', { ChangeOrderID: ref });
      const done = a.status === 202 ? await followJob((a.body as JobAnswer).JobID, status) : (a.body as Promotion);
      status.replaceChildren(h('p', { 'data-field': 'result-message' }, summary(done)), promotionTable(done));
      go.remove();
      d.querySelector<HTMLButtonElement>('[data-action=close]')!.textContent = 'Close';
      d.querySelector<HTMLButtonElement>('[data-action=close]')!.focus();
    } catch (e) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
    }
    route(true);
  });
}

/** Follows a job to its end with a progress bar; its answer is the request's own. */
async function followJob(id: string, status: HTMLElement): Promise<Promotion> {
  const bar = h('progress', { max: '1', value: '0', 'aria-label': 'promotion progress' });
  status.replaceChildren(h('p', {}, `Running as job ${id}…`), bar);
  for (;;) {
    const j = (await call<JobAnswer>('GET', `/job/${encodeURIComponent(id)}`)).body;
    bar.max = j.Total || 1;
    bar.value = j.Done;
    if (j.State === 'Done') {
      if ((j.Status ?? 200) >= 400) throw new ApiError(j.Status ?? 500, `HTTP ${j.Status}: ${(j.Result as ErrorBody | undefined)?.Message ?? 'the job failed'}`);
      return j.Result as Promotion;
    }
    await new Promise((res) => setTimeout(res, 1000));
  }
}

/** Approve the change in one Space or over a Stage (a note optional): POST /attest, as cub variant approve. */
function approveDialog(r: Rollout, where: { space?: string; stage?: string }): void {
  const ref = `${r.Base.SpaceSlug}/${r.ChangeOrder.Slug}`;
  const note = h('input', { id: 'approve-note', maxlength: '1024' });
  const status = h('div', { 'aria-live': 'polite' });
  const go = h('button', { type: 'button', class: 'primary', 'data-action': 'confirm-approve' }, 'Approve');
  openDialog(
    `Approve ${r.ChangeOrder.Slug} ${where.space ? `in ${where.space}` : `in stage ${where.stage}`}`,
    h('p', {}, 'Records an Approval attestation of the revisions the change arrived at, as cub variant approve does.'),
    h('label', { for: 'approve-note' }, 'Note (optional)'),
    note,
    status,
    h('div', { class: 'actions' }, go, closeButton()),
  );
  note.focus();
  go.addEventListener('click', async () => {
    go.disabled = true;
    try {
      const a = await call<{ Spaces: { SpaceSlug: string; Action: string; Reason?: string }[] } | JobAnswer>('POST', '/attest', { ChangeOrderID: ref, ...(where.space ? { Spaces: [where.space] } : { Stage: where.stage }), ...(note.value ? { Note: note.value } : {}) });
      const spaces = a.status === 202 ? [] : (a.body as { Spaces: { SpaceSlug: string; Action: string; Reason?: string }[] }).Spaces;
      status.replaceChildren(h('p', { class: 'notice', 'data-field': 'approve-result' }, a.status === 202 ? 'Approving as a job; the grid shows it as it lands.' : spaces.map((s) => `${s.SpaceSlug}: ${s.Action === 'Attest' ? 'approved' : `skipped (${s.Reason ?? ''})`}`).join('; ')));
      go.remove();
    } catch (e) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
      go.disabled = false;
    }
    route(true);
  });
}

/** Abort the ChangeOrder, with the reason it records (PATCH AbortedReason, as cub changeorder update --aborted-reason). */
function abortDialog(r: Rollout): void {
  const reason = h('input', { id: 'abort-reason', required: true, maxlength: '1024' });
  const status = h('div', { 'aria-live': 'polite' });
  const go = h('button', { type: 'button', class: 'danger', 'data-action': 'confirm-abort' }, 'Abort the change order');
  const d = openDialog(`Abort ${r.ChangeOrder.Slug}`, h('p', {}, 'No further promotion goes ahead. Spaces that took the change keep it until each is demoted (cub variant demote).'), h('label', { for: 'abort-reason' }, 'Reason (recorded)'), reason, status, h('div', { class: 'actions' }, go, closeButton()));
  reason.focus();
  go.addEventListener('click', async () => {
    if (!reason.value.trim()) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, 'Give the reason the change order records.'));
      reason.focus();
      return;
    }
    go.disabled = true;
    try {
      await call('PATCH', path(r.Base.SpaceSlug, r.ChangeOrder.Slug), { AbortedReason: reason.value.trim() });
      d.close();
    } catch (e) {
      status.replaceChildren(h('p', { class: 'alert', role: 'alert' }, (e as Error).message));
      go.disabled = false;
    }
    route(true);
  });
}

/** Shows the view the address names: #/ (the list, ?where=…), #/co/<space>/<slug>. `refresh` loads the shown view again instead. */
function route(refresh = false): void {
  if (!token) return tokenView();
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
  apiUrl = (config.ApiUrl ?? '').replace(/\/$/, '');
  token = localStorage.getItem(TOKEN_KEY) ?? config.Token ?? '';
  const who = $('who');
  who.replaceChildren(h('button', { type: 'button', 'data-action': 'sign-out', onclick: () => (localStorage.removeItem(TOKEN_KEY), (token = ''), tokenView()) }, 'Sign out'));
  window.addEventListener('hashchange', () => route());
  document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && route(true));
  route();
}

void start();

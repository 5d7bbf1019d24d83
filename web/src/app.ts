// The rollout page: a client of the HTTP API, like cub. Views (the list, one ChangeOrder's grid), polling and the address.
import type { ChangeOrderView } from '../../lib/model/change-orders.ts';
import type { Rollout } from '../../lib/model/rollout.ts';
import { renderRollout } from './rollout.ts';
import { ApiError, call, path, session, TOKEN_KEY, type PageConfig } from './api.ts';
import { nextPollMs } from './poll.ts';
import { $, badge, fill, h, refreshAges, showAlert, stateKind } from './dom.ts';

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
      renderRollout(r, head, body, refresh);
      if (focused) main.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focused)}"]`)?.focus();
      document.title = `${r.ChangeOrder.Slug} — Baton`;
      shown = seen;
    }
    refreshAges(main, r.ReadAt);
    const readAt = main.querySelector('[data-field=read-at]');
    if (readAt) readAt.textContent = `Updated ${new Date(r.ReadAt).toLocaleTimeString()}`;
  });
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

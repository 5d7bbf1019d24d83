// A ChangeOrder's timeline on the rollout page: read only while its panel is open (it reads more than the grid).
import type { Timeline } from '../../lib/model/timeline.ts';
import { span, WAIT_KINDS } from '../../lib/model/timeline.ts';
import { call, path } from './api.ts';
import { fill, h } from './dom.ts';

/** The change orders whose timeline is open, and what was last read of each (a poll redraws the page). */
const opened = new Set<string>();
const last = new Map<string, Timeline>();

function draw(body: HTMLElement, t: Timeline): void {
  const kinds = WAIT_KINDS.filter((k) => t.Stages.some((s) => s.Waiting[k]));
  fill(
    body,
    h(
      'p',
      { 'data-field': 'eta' },
      h('strong', {}, `ETA${t.ETA.Stage ? ` for ${t.ETA.Stage}` : ''}: `),
      t.ETA.At ?? 'unknown',
      ` — ${t.ETA.Because.join('; ')}`,
    ),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h('tr', {}, ...['Stage', 'Entered', 'Left', 'Waited', ...kinds, 'Waits on'].map((x) => h('th', {}, x))),
      ),
      h(
        'tbody',
        {},
        ...t.Stages.map((s) =>
          h(
            'tr',
            { 'data-stage': s.Name },
            h('td', {}, s.Name),
            h('td', {}, s.EnteredAt ?? '—'),
            h('td', {}, s.LeftAt ?? '—'),
            h('td', {}, s.WaitedSeconds === undefined ? '—' : span(s.WaitedSeconds)),
            ...kinds.map((k) => h('td', {}, s.Waiting[k] ? span(s.Waiting[k]) : '—')),
            h('td', {}, s.Open?.join(', ') ?? ''),
          ),
        ),
      ),
    ),
  );
}

/** Each change order's panel, kept across redraws (a poll redraws the page; the panel is moved, not rebuilt). */
const panels = new Map<string, { panel: HTMLDetailsElement; load: () => Promise<void> }>();

/** The panel: closed, nothing is read; open, the timeline is read now and at each redraw while it stays open. */
export function timelinePanel(space: string, slug: string): HTMLElement {
  const key = `${space}/${slug}`;
  const kept = panels.get(key);
  if (kept) {
    if (kept.panel.open) void kept.load();
    return kept.panel;
  }
  const body = h('div', {}, 'Loading…');
  const load = () =>
    call<Timeline>('GET', `${path(space, slug)}/timeline`).then(
      (r) => {
        last.set(key, r.body);
        draw(body, r.body);
      },
      (e: Error) => fill(body, e.message),
    );
  const cached = last.get(key);
  if (cached) draw(body, cached);
  const panel = h(
    'details',
    {
      class: 'panel',
      id: 'timeline',
      open: opened.has(key),
      ontoggle: () => {
        // Opening it reads it; a panel drawn open (a redraw) was read just below.
        if (panel.open && !opened.has(key)) {
          opened.add(key);
          void load();
        } else if (!panel.open) opened.delete(key);
      },
    },
    h('summary', {}, 'Timeline and ETA'),
    body,
  );
  if (opened.has(key)) void load();
  panels.set(key, { panel, load });
  return panel;
}

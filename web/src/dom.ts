// Building the page: elements from data (text is always text), ages, badges, the alert line.

export type Child = Node | string | number | false | null | undefined;
/** Builds an element; text is always set as text, never parsed as HTML. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined | ((e: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else if (v !== undefined && v !== false) el.setAttribute(k, v);
  }
  for (const c of children)
    if (c !== null && c !== undefined && c !== false) el.append(typeof c === 'number' ? String(c) : c);
  return el;
}

export const $ = (id: string) => document.getElementById(id)!;

/** Replaces an element's children, leaving out the absent ones. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren(
    ...children
      .filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false)
      .map((c) => (typeof c === 'number' ? String(c) : c)),
  );
}

export function showAlert(message: string | undefined): void {
  const el = $('alert');
  el.textContent = message ?? '';
  el.hidden = !message;
}

/** How long before `now` an instant was: 40s, 5m, 3h, 2d. */
export function age(at: string | undefined, now: string): string {
  if (!at) return '';
  const s = Math.max(0, Math.round((Date.parse(now) - Date.parse(at)) / 1000));
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m`
      : s < 86400
        ? `${Math.floor(s / 3600)}h`
        : `${Math.floor(s / 86400)}d`;
}

/** An age that later polls bring up to date in place (see `refreshAges`). */
export const ageOf = (at: string | undefined, now: string) => h('span', { 'data-age': at ?? '' }, age(at, now));
export function refreshAges(root: Element, now: string): void {
  for (const el of root.querySelectorAll<HTMLElement>('[data-age]')) el.textContent = age(el.dataset.age, now);
}
export const badge = (text: string, kind = '') => h('span', { class: `badge ${kind}` }, text);
export const stateKind = (s: string) =>
  s === 'Released' || s === 'Resolved'
    ? 'ok'
    : s === 'InProgress'
      ? 'info'
      : s.startsWith('Restore') || s === 'Aborted'
        ? 'bad'
        : '';

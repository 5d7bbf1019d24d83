/**
 * Deploy windows as pure functions of the clock: whether a window is open (or a freeze in force) at an
 * instant and when that changes, whether a Space is blocked by the windows that apply to it, the next instant
 * it is not, and the gates a promotion (or a demote, or an abort) reports. Schedules are five-field crons
 * read in an IANA time zone (croner), each firing opening the window for its duration, or one start and end.
 */
import { Cron } from 'croner';
import type { DeployWindow, GateResult, WindowBlock } from '../model/entities.ts';
import { parseDuration } from '../model/people.ts';

/**
 * Openings that overlap or touch are one: followed at most this many firings (a window whose openings never
 * stop overlapping is refused when it is made; past this it is taken as open for good).
 */
const MAX_MERGED = 366;
/** How far ahead a Space's next clear instant is looked for. */
const HORIZON_MS = 400 * 86_400_000;
/** How many windows' edges are stepped over looking for it. */
const MAX_STEPS = 200;

const crons = new Map<string, Cron>();
/** The window's schedule, parsed once per pattern and zone (a paused Cron only computes dates). */
function cronOf(w: Pick<DeployWindow, 'Cron' | 'TimeZone'>): Cron {
  const key = `${w.Cron}\n${w.TimeZone ?? 'UTC'}`;
  let c = crons.get(key);
  if (!c) {
    c = new Cron(w.Cron!, { timezone: w.TimeZone ?? 'UTC', paused: true });
    if (crons.size > 1_000) crons.clear();
    crons.set(key, c);
  }
  return c;
}

const durationOf = (w: DeployWindow): number => parseDuration(w.Duration ?? '') ?? 0;

/** The opening in progress at `t` (ms), [start, end), end Infinity when it never closes; undefined when closed. */
export function openingAt(w: DeployWindow, t: number): { start: number; end: number } | undefined {
  if (!w.Cron) {
    const start = Date.parse(w.Start!);
    const end = Date.parse(w.End!);
    return start <= t && t < end ? { start, end } : undefined;
  }
  const d = durationOf(w);
  const cron = cronOf(w);
  // The first firing after t - d opens a window still open at t if it fired by t.
  const first = cron.nextRun(new Date(t - d));
  if (!first || first.getTime() > t) return undefined;
  let end = first.getTime() + d;
  let at = first;
  for (let i = 0; i < MAX_MERGED; i++) {
    const next = cron.nextRun(at);
    if (!next || next.getTime() > end) return { start: first.getTime(), end };
    end = Math.max(end, next.getTime() + d);
    at = next;
  }
  return { start: first.getTime(), end: Infinity };
}

/** The next opening that starts after `t`, or undefined when none does. */
export function nextOpening(w: DeployWindow, t: number): number | undefined {
  if (!w.Cron) {
    const start = Date.parse(w.Start!);
    return start > t ? start : undefined;
  }
  return cronOf(w).nextRun(new Date(t))?.getTime();
}

/** Whether the window is active at `t` (open; for a Deny window, the freeze in force) and when that next changes. */
export function windowState(w: DeployWindow, t: number): { active: boolean; changesAt: number | null } {
  const open = openingAt(w, t);
  if (open) return { active: true, changesAt: Number.isFinite(open.end) ? open.end : null };
  return { active: false, changesAt: nextOpening(w, t) ?? null };
}

/** The windows that block an action at `t`, of those that apply: Deny windows in force, or, where Allow windows apply and none is open, those. */
export function blockingAt(ws: DeployWindow[], t: number): DeployWindow[] {
  const denies = ws.filter((w) => w.Kind === 'Deny' && openingAt(w, t));
  if (denies.length) return denies;
  const allows = ws.filter((w) => w.Kind === 'Allow');
  return allows.length && !allows.some((w) => openingAt(w, t)) ? allows : [];
}

/** The first instant at or after `t` when none of the windows blocks, or null when none comes within the horizon. */
export function nextClear(ws: DeployWindow[], t: number): number | null {
  let at = t;
  for (let i = 0; i < MAX_STEPS; i++) {
    if (!blockingAt(ws, at).length) return at;
    // A freeze's own end is the answer however far off; past the horizon nothing more is stepped through.
    if (at - t > HORIZON_MS) return null;
    const ends = ws.flatMap((w) => (w.Kind === 'Deny' ? [openingAt(w, at)?.end].filter((e) => e !== undefined) : []));
    if (ends.length) {
      const end = Math.max(...ends);
      if (!Number.isFinite(end)) return null;
      at = end;
    } else {
      const starts = ws.flatMap((w) => (w.Kind === 'Allow' ? [nextOpening(w, at)].filter((s) => s !== undefined) : []));
      if (!starts.length) return null;
      at = Math.min(...starts);
    }
  }
  return null;
}

/** The windows that govern an action (promotions: every window; demote and abort: those that name them). */
export const governing = (ws: DeployWindow[], action: WindowBlock): DeployWindow[] =>
  ws.filter((w) => action === 'promote' || w.Blocks.includes(action));

/** A window's schedule as a person reads it. */
export function schedule(w: DeployWindow): string {
  return w.Cron ? `'${w.Cron}' for ${w.Duration} (${w.TimeZone ?? 'UTC'})` : `from ${w.Start} to ${w.End}`;
}

const iso = (t: number | null | undefined) => (t === null || t === undefined ? null : new Date(t).toISOString());

/** What the gate names a Space by. */
export interface WindowSpace {
  SpaceID: string;
  Slug: string;
}

/**
 * The windows' gates for an action into Spaces, each Space with the windows that apply to it: one gate per
 * window, failing with the Spaces it blocks (the time it opens, or the freeze ends, and when each Space is
 * clear), satisfied otherwise (open until when, or not in force). Names come from `names`. Pure.
 */
export function windowGates(
  covered: { space: WindowSpace; windows: DeployWindow[] }[],
  now: Date,
  action: WindowBlock,
  o: { owner?: (w: DeployWindow) => string; forceable?: boolean } = {},
): GateResult[] {
  const names = { owner: o.owner ?? ((w: DeployWindow) => w.OwnerID) };
  const forceable = o.forceable ?? action === 'promote';
  const t = now.getTime();
  const byWindow = new Map<string, { w: DeployWindow; spaces: WindowSpace[]; blocked: WindowSpace[] }>();
  const clearAt = new Map<string, number | null>();
  for (const { space, windows } of covered) {
    const ws = governing(windows, action);
    if (!ws.length) continue;
    const blocking = new Set(blockingAt(ws, t).map((w) => w.WindowID));
    if (blocking.size) clearAt.set(space.SpaceID, nextClear(ws, t));
    for (const w of ws) {
      const entry = byWindow.get(w.WindowID) ?? { w, spaces: [], blocked: [] };
      entry.spaces.push(space);
      if (blocking.has(w.WindowID)) entry.blocked.push(space);
      byWindow.set(w.WindowID, entry);
    }
  }
  return [...byWindow.values()]
    .sort((a, b) => (a.w.Slug < b.w.Slug ? -1 : 1))
    .map(({ w, spaces, blocked }) => {
      const state = windowState(w, t);
      const what = w.Kind === 'Deny' ? `freeze window '${w.Slug}'` : `window '${w.Slug}'`;
      const one = spaces.length === 1 ? spaces[0] : undefined;
      const clear = blocked.map((s) => clearAt.get(s.SpaceID) ?? null);
      const proceeds = clear.includes(null) ? null : Math.max(...clear.map(Number));
      const evidence = {
        Window: w.Slug,
        WindowID: w.WindowID,
        Kind: w.Kind,
        Scope: w.Scope,
        Schedule: schedule(w),
        Owner: names.owner(w),
        Reason: w.Reason,
        Active: state.active,
        ChangesAt: iso(state.changesAt),
        Spaces: spaces.map((s) => s.Slug),
        Blocked: blocked.map((s) => s.Slug),
        ...(blocked.length ? { ClearAt: iso(proceeds) } : {}),
        OverrideApprovals: w.OverrideApprovals,
        Blocks: w.Blocks,
      };
      const base = {
        Prerequisite: 'Window',
        SpaceID: one?.SpaceID ?? '',
        SpaceSlug: one?.Slug ?? '',
        Evidence: evidence,
      };
      if (!blocked.length)
        return {
          ...base,
          Satisfied: true,
          Message:
            w.Kind === 'Deny'
              ? `${what} is not in force${state.changesAt !== null ? ` (next from ${iso(state.changesAt)})` : ''}`
              : state.active
                ? `${what} is open${state.changesAt !== null ? ` until ${iso(state.changesAt)}` : ''}`
                : `${what} is closed, but every space it covers is inside another window that is open`,
        };
      const where = blocked.length === 1 ? `space '${blocked[0]!.Slug}'` : `${blocked.length} spaces`;
      const when =
        w.Kind === 'Deny'
          ? state.changesAt !== null
            ? `until ${iso(state.changesAt)}`
            : 'with no end'
          : state.changesAt !== null
            ? `it next opens at ${iso(state.changesAt)}`
            : 'it never opens again';
      const after = proceeds !== null && proceeds !== state.changesAt ? `; ${where} clear at ${iso(proceeds)}` : '';
      const force = !forceable
        ? `or its owner or an Admin deletes it (cub window delete ${w.Slug})`
        : w.OverrideApprovals
          ? `or pass it with --force --force-reason once ${w.OverrideApprovals} other ${w.OverrideApprovals === 1 ? 'person has' : 'people have'} approved the override (cub changeorder approve-override --window ${w.Slug})`
          : 'or pass it with --force --force-reason';
      return {
        ...base,
        Satisfied: false,
        Message: `${what} (${schedule(w)}, placed by ${names.owner(w)}: ${w.Reason}) ${w.Kind === 'Deny' ? 'is in force' : 'is closed'} over ${where}, ${when}${after}; wait, ${force}`,
        Opens: `${proceeds !== null ? `the clock: ${where} clear at ${iso(proceeds)}` : 'not the clock: it has no later opening'}; ${
          !forceable
            ? `or deleting the window (cub window delete ${w.Slug})`
            : w.OverrideApprovals
              ? `or ${w.OverrideApprovals} override approval(s) by other people and --force --force-reason`
              : 'or --force --force-reason'
        }`,
      };
    });
}

/**
 * Deploy windows (`cub window create|list|get|delete`): when promotions may go into a Space, the Spaces a
 * where selects, or one Stage of a workflow's ChangeOrders; freezes (`--deny`) when they may not. The
 * schedule's rules are pure (lib/gates/windows.ts); here they are made, read, shown, and applied to what a
 * promotion, a demote or an abort is about to touch. Breaking glass: `--force --force-reason`, and for a
 * window that asks for them, override approvals by other people recorded on the ChangeOrder first
 * (`cub changeorder approve-override`).
 */
import { Cron } from 'croner';
import type { ChangeDeps } from './ports.ts';
import {
  parseDuration,
  requireVerb,
  type Caller,
  type ChangeOrder,
  type ChangeWorkflow,
  type DeployWindow,
  type GateResult,
  type OverrideApproval,
  type Space,
  type WindowBlock,
  type WindowView,
  unspentApprovals,
} from '../model/entities.ts';
import { Conflict, Forbidden, Invalid, NotFound } from '../model/errors.ts';
import { isId } from '../model/ids.ts';
import { DetailType, SOURCE, type BatonEvent } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { governing, openingAt, windowGates, windowState } from '../gates/windows.ts';
import { matches, parseWhere, relationsUsed, type Query } from '../where/index.ts';
import { findInSpace, findSpace } from '../variants/lookup.ts';
import { stagesOver } from './stages.ts';

export interface WindowInput {
  Slug: string;
  Reason: string;
  Deny?: boolean;
  Space?: string;
  WhereSpace?: string;
  Workflow?: string;
  Stage?: string;
  Cron?: string;
  Duration?: string;
  TimeZone?: string;
  Start?: string;
  End?: string;
  Blocks?: WindowBlock[];
  OverrideApprovals?: number;
  Owner?: string;
}

/** The longest a recurring window's openings may last, and how far ahead its cron must fire. */
const MAX_DURATION_MS = 366 * 86_400_000;
const FIRES_WITHIN_MS = 5 * 366 * 86_400_000;

function windowEvent(detailType: DetailType, w: DeployWindow, extra: Record<string, unknown> = {}): BatonEvent {
  const { CreatedAt: _c, UpdatedAt: _u, Version: _v, ...detail } = w;
  return { source: SOURCE, detailType, detail: { ...detail, ...extra } };
}

/** Checks a window's schedule: a five-field cron that fires, in a zone that exists, for a duration; or a start before an end that has not passed. */
export function checkSchedule(
  o: WindowInput,
  now: Date,
): Pick<DeployWindow, 'Cron' | 'Duration' | 'TimeZone' | 'Start' | 'End'> {
  const recurring = o.Cron !== undefined || o.Duration !== undefined || o.TimeZone !== undefined;
  const once = o.Start !== undefined || o.End !== undefined;
  if (recurring === once)
    throw new Invalid(
      'a window has one schedule: give --cron C --duration D [--time-zone Z] (recurring) or --start T --end T (once)',
    );
  if (once) {
    if (o.Start === undefined || o.End === undefined)
      throw new Invalid('a one-off window needs both --start and --end');
    const start = Date.parse(o.Start);
    const end = Date.parse(o.End);
    if (!/^\d{4}-\d\d-\d\dT/.test(o.Start) || Number.isNaN(start))
      throw new Invalid(`Start '${o.Start}' must be an ISO time such as 2026-12-19T00:00:00Z`);
    if (!/^\d{4}-\d\d-\d\dT/.test(o.End) || Number.isNaN(end))
      throw new Invalid(`End '${o.End}' must be an ISO time such as 2027-01-04T00:00:00Z`);
    if (end <= start) throw new Invalid(`End ${o.End} must be after Start ${o.Start}`);
    if (end <= now.getTime()) throw new Invalid(`End ${o.End} has passed: the window would never apply`);
    return { Start: new Date(start).toISOString(), End: new Date(end).toISOString() };
  }
  if (o.Cron === undefined || o.Duration === undefined)
    throw new Invalid('a recurring window needs --cron (five fields: minute hour day month weekday) and --duration');
  const cron = o.Cron.trim().replace(/\s+/g, ' ');
  if (cron.split(' ').length !== 5)
    throw new Invalid(
      `Cron '${o.Cron}' must have five fields (minute hour day-of-month month day-of-week), such as '0 9 * * 1-4'`,
    );
  const zone = o.TimeZone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
  } catch {
    throw new Invalid(`TimeZone '${zone}' is not a time zone: name one such as Europe/Berlin or UTC`);
  }
  const d = parseDuration(o.Duration);
  if (!d || d > MAX_DURATION_MS)
    throw new Invalid(`Duration '${o.Duration}' must be a duration from 1m to 366d, such as 6h, 90m or 2d`);
  let next: Date | null;
  try {
    next = new Cron(cron, { timezone: zone, paused: true }).nextRun(now);
  } catch (e) {
    throw new Invalid(`Cron '${o.Cron}' is not a cron schedule: ${(e as Error).message.replace(/^CronPattern: /, '')}`);
  }
  if (!next || next.getTime() - now.getTime() > FIRES_WITHIN_MS)
    throw new Invalid(`Cron '${o.Cron}' never fires (in ${zone}): the window would never open`);
  const made = { Cron: cron, Duration: o.Duration, TimeZone: zone };
  const opening = openingAt({ ...made, Kind: 'Allow' } as DeployWindow, next.getTime());
  if (!opening || !Number.isFinite(opening.end))
    throw new Invalid(
      `Duration ${o.Duration} is at least as long as the time between firings of '${o.Cron}': its openings run into each other and it never closes`,
    );
  return made;
}

/** Makes a window. A Space's (or a workflow Stage's) needs Edit there; one over a where, an Admin. */
export async function createWindow(deps: ChangeDeps, caller: Caller, o: WindowInput): Promise<WindowView> {
  const scopes = [o.Space !== undefined, o.WhereSpace !== undefined, o.Workflow !== undefined].filter(Boolean).length;
  if (scopes !== 1)
    throw new Invalid(
      'a window covers one thing: give exactly one of --space S, --where-space W, or --workflow S/wf --stage ST',
    );
  if (o.Stage !== undefined && o.Workflow === undefined) throw new Invalid('--stage needs --workflow S/wf');
  const now = deps.now();
  const sched = checkSchedule(o, now);
  const blocks = [...new Set<WindowBlock>(['promote', ...(o.Blocks ?? [])])];
  let owner = caller.UserID;
  if (o.Owner !== undefined) {
    const id = await deps.store.idInOrg(caller.OrganizationID, 'User', o.Owner);
    if (!id) throw new Invalid(`Owner '${o.Owner}' is not a user of this organization`);
    owner = id;
  }
  const stamp = now.toISOString();
  const base = {
    WindowID: deps.newId(),
    OrganizationID: caller.OrganizationID,
    Slug: o.Slug,
    Kind: o.Deny ? ('Deny' as const) : ('Allow' as const),
    Reason: o.Reason,
    OwnerID: owner,
    ...sched,
    Blocks: blocks,
    OverrideApprovals: o.OverrideApprovals ?? 0,
    CreatedAt: stamp,
    UpdatedAt: stamp,
    Version: 1,
  };
  let w: DeployWindow;
  if (o.Space !== undefined) {
    const space = await findSpace(deps, caller, o.Space);
    requireVerb(caller, [space], 'Edit', 'place a deploy window on it');
    w = { ...base, Scope: 'Space', SpaceID: space.SpaceID };
  } else if (o.Workflow !== undefined) {
    if (o.Stage === undefined) throw new Invalid('a window over a workflow names its Stage: --stage ST');
    const { item, space } = await findInSpace<ChangeWorkflow>(deps, caller, undefined, 'ChangeWorkflow', o.Workflow);
    requireVerb(caller, [space], 'Edit', `place a deploy window on workflow '${item.Slug}'`);
    const names = item.Stages.map((s) => s.Name);
    if (!names.includes(o.Stage))
      throw new Invalid(`workflow '${item.Slug}' has no stage '${o.Stage}'; stages: ${names.join(', ')}`);
    w = { ...base, Scope: 'Stage', SpaceID: space.SpaceID, ChangeWorkflowID: item.ChangeWorkflowID, Stage: o.Stage };
  } else {
    parseWhere(o.WhereSpace!, 'Space');
    if (caller.Role && caller.Role !== 'Admin')
      throw new Forbidden('only an Admin may place a deploy window over a where (it may cover any Space)');
    w = { ...base, Scope: 'WhereSpace', WhereSpace: o.WhereSpace };
  }
  await deps.store.transact([
    { op: 'create', kind: 'Window', item: w },
    ...eventOps(deps, [windowEvent(DetailType.WindowCreated, w)]),
  ]);
  return (await viewWindows(deps, caller, [w]))[0]!;
}

/** A window of the caller's organization, by ID or slug. */
export async function findWindow(deps: ChangeDeps, caller: Caller, ref: string): Promise<DeployWindow> {
  const id = isId(ref) ? ref.toLowerCase() : await deps.store.idInOrg(caller.OrganizationID, 'Window', ref);
  const w = id ? await deps.store.getWindow(caller.OrganizationID, id) : undefined;
  if (!w) throw new NotFound(`window '${ref}' not found`);
  return w;
}

/** Deletes a window: its owner or an Admin. */
export async function deleteWindow(deps: ChangeDeps, caller: Caller, ref: string): Promise<WindowView> {
  const w = await findWindow(deps, caller, ref);
  if (w.OwnerID !== caller.UserID && caller.Role && caller.Role !== 'Admin')
    throw new Forbidden(`only the owner of window '${w.Slug}' or an Admin may delete it`);
  const view = (await viewWindows(deps, caller, [w]))[0]!;
  await deps.store.transact([
    { op: 'delete', kind: 'Window', item: w },
    ...eventOps(deps, [windowEvent(DetailType.WindowDeleted, w, { DeletedBy: caller.UserID })]),
  ]);
  return view;
}

/** Windows as the API shows them: active now or not and when that changes, with owner, Space and workflow by name. */
export async function viewWindows(deps: ChangeDeps, caller: Caller, ws: DeployWindow[]): Promise<WindowView[]> {
  const t = deps.now().getTime();
  const users = new Map((await deps.store.listUsers(caller.OrganizationID)).map((u) => [u.UserID, u.Slug]));
  const spaces = new Map<string, string | undefined>();
  const workflows = new Map<string, string | undefined>();
  for (const w of ws) {
    if (w.SpaceID && !spaces.has(w.SpaceID))
      spaces.set(w.SpaceID, (await deps.store.getSpace(caller.OrganizationID, w.SpaceID))?.Slug);
    if (w.SpaceID && w.ChangeWorkflowID && !workflows.has(w.ChangeWorkflowID))
      workflows.set(
        w.ChangeWorkflowID,
        (await deps.store.getInSpace<ChangeWorkflow>('ChangeWorkflow', w.SpaceID, w.ChangeWorkflowID))?.Slug,
      );
  }
  return ws.map((w) => {
    const state = windowState(w, t);
    return {
      ...w,
      Active: state.active,
      ChangesAt: state.changesAt === null ? null : new Date(state.changesAt).toISOString(),
      OwnerSlug: users.get(w.OwnerID),
      ...(w.SpaceID ? { SpaceSlug: spaces.get(w.SpaceID) } : {}),
      ...(w.ChangeWorkflowID ? { ChangeWorkflowSlug: workflows.get(w.ChangeWorkflowID) } : {}),
    };
  });
}

/** The organization's windows, by slug. */
export async function listWindows(deps: ChangeDeps, caller: Caller): Promise<WindowView[]> {
  const ws = (await deps.store.listWindows(caller.OrganizationID)).sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
  return viewWindows(deps, caller, ws);
}

/** What an action touches, for the windows: its Spaces, its ChangeOrder's workflow, and the Stage each Space is in. */
export interface WindowSubject {
  spaces: Space[];
  changeWorkflowId?: string;
  /** The Stage a Space is in for this ChangeOrder (a promotion: the Stage promoted into). */
  stageOf: (space: Space) => string | undefined;
}

/** Each Space of a subject with the windows that apply to it (Component relations read only when a where names them). */
export async function windowsOver(
  deps: ChangeDeps,
  caller: Caller,
  windows: DeployWindow[],
  subject: WindowSubject,
): Promise<{ space: Space; windows: DeployWindow[] }[]> {
  if (!windows.length) return [];
  const wheres = new Map<string, Query>();
  for (const w of windows) if (w.WhereSpace) wheres.set(w.WindowID, parseWhere(w.WhereSpace, 'Space'));
  let spaces = subject.spaces;
  if ([...wheres.values()].some((q) => relationsUsed(q).has('Component'))) {
    const comps = new Map((await deps.store.listComponents(caller.OrganizationID)).map((c) => [c.ComponentID, c]));
    spaces = spaces.map((s) => ({ ...s, Component: s.ComponentID ? comps.get(s.ComponentID) : undefined }) as Space);
  }
  return spaces.map((space) => ({
    space,
    windows: windows.filter((w) =>
      w.Scope === 'Space'
        ? w.SpaceID === space.SpaceID
        : w.Scope === 'WhereSpace'
          ? matches(wheres.get(w.WindowID)!, space)
          : !!subject.changeWorkflowId &&
            w.ChangeWorkflowID === subject.changeWorkflowId &&
            subject.stageOf(space) === w.Stage,
    ),
  }));
}

/** The windows' gates over what an action is about to touch (none when no window applies). */
export async function windowGatesFor(
  deps: ChangeDeps,
  caller: Caller,
  action: WindowBlock,
  subject: WindowSubject,
  read?: Promise<DeployWindow[]>,
  forceable = action === 'promote',
): Promise<GateResult[]> {
  const windows = await (read ?? deps.store.listWindows(caller.OrganizationID));
  if (!windows.length) return [];
  const covered = await windowsOver(deps, caller, windows, subject);
  if (!covered.some((c) => c.windows.length)) return [];
  const users = new Map((await deps.store.listUsers(caller.OrganizationID)).map((u) => [u.UserID, u.Slug]));
  return windowGates(covered, deps.now(), action, { owner: (w) => users.get(w.OwnerID) ?? w.OwnerID, forceable });
}

/** The approvals a forced action through a window counts: unspent, by people other than the one forcing, one each. */
export function countedApprovals(co: ChangeOrder, windowId: string, forcer: string): OverrideApproval[] {
  const seen = new Set<string>();
  return unspentApprovals(co, windowId).filter(
    (a) => a.UserID !== forcer && !seen.has(a.UserID) && !!seen.add(a.UserID),
  );
}

/**
 * Refuses (409) forcing past a window that asks for more override approvals than the ChangeOrder has from
 * people other than the caller; otherwise the approvals each failing window counted.
 */
export function requireOverrideApprovals(co: ChangeOrder, caller: Caller, failed: GateResult[]): OverrideApproval[] {
  const out: OverrideApproval[] = [];
  for (const g of failed) {
    if (g.Prerequisite !== 'Window') continue;
    const ev = g.Evidence as { Window: string; WindowID: string; OverrideApprovals: number };
    if (!ev.OverrideApprovals) continue;
    const counted = countedApprovals(co, ev.WindowID, caller.UserID);
    if (counted.length < ev.OverrideApprovals)
      throw new Conflict(
        `window '${ev.Window}' needs ${ev.OverrideApprovals} override approval(s) by people other than you before --force passes it; change order '${co.Slug}' has ${counted.length}${counted.length ? ` (${counted.map((a) => a.UserSlug ?? a.UserID).join(', ')})` : ''}: each approver runs cub changeorder approve-override --space <base> ${co.Slug} --window ${ev.Window} --reason R`,
      );
    out.push(...counted);
  }
  return out;
}

/** `cub changeorder approve-override`: approve forcing a ChangeOrder through a window (Approve in its Space), with a reason. */
export async function approveOverride(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  co: ChangeOrder,
  o: { Window: string; Reason: string },
): Promise<ChangeOrder> {
  requireVerb(caller, [base], 'Approve', `approve overriding a window for change order '${co.Slug}'`);
  const w = await findWindow(deps, caller, o.Window);
  if (!w.OverrideApprovals)
    throw new Invalid(`window '${w.Slug}' asks for no override approvals: --force --force-reason alone passes it`);
  if (unspentApprovals(co, w.WindowID).some((a) => a.UserID === caller.UserID))
    throw new Conflict(`you have approved overriding window '${w.Slug}' for change order '${co.Slug}' already`);
  const slug = (await deps.store.listUsers(caller.OrganizationID)).find((u) => u.UserID === caller.UserID)?.Slug;
  const approval: OverrideApproval = {
    WindowID: w.WindowID,
    WindowSlug: w.Slug,
    UserID: caller.UserID,
    ...(slug ? { UserSlug: slug } : {}),
    Reason: o.Reason,
    ApprovedAt: deps.now().toISOString(),
  };
  const next: ChangeOrder = {
    ...co,
    OverrideApprovals: [...(co.OverrideApprovals ?? []), approval],
    UpdatedAt: approval.ApprovedAt,
    Version: co.Version + 1,
  };
  const event: BatonEvent = {
    source: SOURCE,
    detailType: DetailType.WindowOverrideApproved,
    detail: {
      OrganizationID: co.OrganizationID,
      ChangeOrderID: co.ChangeOrderID,
      Slug: co.Slug,
      SpaceID: co.SpaceID,
      WindowID: w.WindowID,
      WindowSlug: w.Slug,
      UserID: caller.UserID,
      Reason: o.Reason,
    },
  };
  await deps.store.transact([
    { op: 'update', kind: 'ChangeOrder', item: next, expectedVersion: co.Version },
    ...eventOps(deps, [event]),
  ]);
  return next;
}

/**
 * Refuses (409) what cannot be forced past a window: taking a change back out of Spaces (a demote, an abort)
 * while a window that says it governs that is closed (or a freeze that does is in force) over them — a window
 * that does not name it never blocks — and a plain `variant promote`, which no ChangeOrder records an override
 * of, into a Space a window closes.
 */
export async function refuseIfWindowed(
  deps: ChangeDeps,
  caller: Caller,
  action: WindowBlock,
  what: string,
  spacesOf: () => Promise<Space[]>,
  co?: ChangeOrder,
): Promise<void> {
  const windows = governing(await deps.store.listWindows(caller.OrganizationID), action);
  if (!windows.length) return;
  const spaces = await spacesOf();
  if (!spaces.length) return;
  const all = co?.ChangeWorkflow ? await deps.store.listSpaces(caller.OrganizationID) : [];
  const stageOf = new Map(
    co ? stagesOver(co, all).flatMap((st) => st.spaces.map((s) => [s.SpaceID, st.name] as const)) : [],
  );
  const failed = (
    await windowGatesFor(
      deps,
      caller,
      action,
      { spaces, changeWorkflowId: co?.ChangeWorkflowID, stageOf: (s) => stageOf.get(s.SpaceID) },
      Promise.resolve(windows),
      false,
    )
  ).filter((g) => !g.Satisfied);
  if (failed.length) throw new Conflict(`unable to ${what}: ${failed.map((g) => g.Message).join('; ')}`);
}

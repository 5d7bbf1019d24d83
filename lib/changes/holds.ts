/**
 * Holds (`cub hold create|list|get|lift`): a person stops promotions into a Space, into the Spaces of a
 * workflow's ChangeOrders, or anywhere in the organization — or, blocking `publish`, the publishing of
 * Releases there — until they (or an Admin) lift it or it expires. Promotions see a hold in force as a
 * gate that does not hold (lib/gates/holds.ts): refused, naming the hold, its owner and its reason, or
 * passed with --force and a reason, which the ChangeOrder records with the hold.
 */
import type { ChangeDeps } from './ports.ts';
import {
  inForce,
  newEntity,
  parseDuration,
  requireVerb,
  type Caller,
  type ChangeOrder,
  type ChangeWorkflow,
  type GateResult,
  type Hold,
  type HoldBlock,
  type HoldView,
} from '../model/entities.ts';
import { Conflict, Forbidden, Invalid, NotFound } from '../model/errors.ts';
import { DetailType, SOURCE, type BatonEvent } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { holdGate, holdsOn, type HoldSubject } from '../gates/holds.ts';
import { findInSpace, findSpace } from '../variants/lookup.ts';
import { isId } from '../model/ids.ts';

export interface HoldInput {
  Slug: string;
  Reason: string;
  Space?: string;
  Workflow?: string;
  Organization?: boolean;
  ExpiresIn?: string;
  Blocks?: HoldBlock[];
}

function holdEvent(detailType: DetailType, h: Hold): BatonEvent {
  return {
    source: SOURCE,
    detailType,
    detail: {
      OrganizationID: h.OrganizationID,
      HoldID: h.HoldID,
      Slug: h.Slug,
      Scope: h.Scope,
      SpaceID: h.SpaceID,
      ChangeWorkflowID: h.ChangeWorkflowID,
      ChangeOrderID: h.ChangeOrderID,
      Blocks: h.Blocks,
      Reason: h.Reason,
      OwnerID: h.OwnerID,
      ExpiresAt: h.ExpiresAt,
      LiftedBy: h.LiftedBy,
      LiftNote: h.LiftNote,
    },
  };
}

/** Places a hold. A Space's (or a workflow's) needs Edit there; the organization's, an Admin. */
export async function createHold(deps: ChangeDeps, caller: Caller, o: HoldInput): Promise<HoldView> {
  const scopes = [o.Space !== undefined, o.Workflow !== undefined, !!o.Organization].filter(Boolean).length;
  if (scopes !== 1)
    throw new Invalid(
      'a hold covers one thing: give exactly one of Space (--space S), Workflow (--workflow S/wf) or Organization (--organization)',
    );
  const expires = o.ExpiresIn !== undefined ? parseDuration(o.ExpiresIn) : undefined;
  if (o.ExpiresIn !== undefined && !expires)
    throw new Invalid(`ExpiresIn '${o.ExpiresIn}' must be a duration such as 2h, 30m or 7d`);
  const now = deps.now();
  const base = {
    ...newEntity(deps, caller.OrganizationID, { Slug: o.Slug }),
    HoldID: deps.newId(),
    Reason: o.Reason,
    OwnerID: caller.UserID,
    Blocks: [...new Set<HoldBlock>(o.Blocks ?? ['promote'])],
    ...(expires ? { ExpiresAt: new Date(now.getTime() + expires).toISOString() } : {}),
  };
  let hold: Hold;
  if (o.Space !== undefined) {
    const space = await findSpace(deps, caller, o.Space);
    requireVerb(caller, [space], 'Edit', 'place a hold on it');
    hold = { ...strip(base), Scope: 'Space', SpaceID: space.SpaceID };
  } else if (o.Workflow !== undefined) {
    const { item, space } = await findInSpace<ChangeWorkflow>(deps, caller, undefined, 'ChangeWorkflow', o.Workflow);
    requireVerb(caller, [space], 'Edit', `place a hold on workflow '${item.Slug}'`);
    hold = { ...strip(base), Scope: 'Workflow', SpaceID: space.SpaceID, ChangeWorkflowID: item.ChangeWorkflowID };
  } else {
    if (caller.Role && caller.Role !== 'Admin')
      throw new Forbidden('only an Admin may place a hold on the whole organization');
    hold = { ...strip(base), Scope: 'Organization' };
  }
  await deps.store.transact([
    { op: 'create', kind: 'Hold', item: hold },
    ...eventOps(deps, [holdEvent(DetailType.HoldPlaced, hold)]),
  ]);
  return (await viewHolds(deps, caller, [hold]))[0]!;
}

/** The fields of a new entity a Hold keeps (it has no labels or annotations). */
function strip<T extends { Labels?: unknown; Annotations?: unknown; DisplayName?: unknown }>(
  e: T,
): Omit<T, 'Labels' | 'Annotations' | 'DisplayName'> {
  const { Labels: _l, Annotations: _a, DisplayName: _d, ...rest } = e;
  return rest;
}

/** A hold of the caller's organization, by ID or slug. */
export async function findHold(deps: ChangeDeps, caller: Caller, ref: string): Promise<Hold> {
  const id = isId(ref) ? ref.toLowerCase() : await deps.store.idInOrg(caller.OrganizationID, 'Hold', ref);
  const hold = id ? await deps.store.getHold(caller.OrganizationID, id) : undefined;
  if (!hold) throw new NotFound(`hold '${ref}' not found`);
  return hold;
}

/** Lifts a hold: its owner or an Admin, with a note; it stays on record, no longer in force. */
export async function liftHold(
  deps: ChangeDeps,
  caller: Caller,
  ref: string,
  note: string | undefined,
): Promise<HoldView> {
  const hold = await findHold(deps, caller, ref);
  if (hold.LiftedAt)
    throw new Conflict(`hold '${hold.Slug}' was lifted already (by ${hold.LiftedBy}, at ${hold.LiftedAt})`);
  if (hold.OwnerID !== caller.UserID && caller.Role && caller.Role !== 'Admin')
    throw new Forbidden(`only the owner of hold '${hold.Slug}' or an Admin may lift it`);
  const now = deps.now().toISOString();
  const next: Hold = {
    ...hold,
    LiftedAt: now,
    LiftedBy: caller.UserID,
    ...(note ? { LiftNote: note } : {}),
    UpdatedAt: now,
    Version: hold.Version + 1,
  };
  await deps.store.transact([
    { op: 'update', kind: 'Hold', item: next, expectedVersion: hold.Version },
    ...eventOps(deps, [holdEvent(DetailType.HoldLifted, next)]),
  ]);
  return (await viewHolds(deps, caller, [next]))[0]!;
}

/** Holds as the API shows them: in force or not, with their owner, Space and workflow by name. */
export async function viewHolds(deps: ChangeDeps, caller: Caller, holds: Hold[]): Promise<HoldView[]> {
  const now = deps.now();
  const users = new Map((await deps.store.listUsers(caller.OrganizationID)).map((u) => [u.UserID, u.Slug]));
  const spaces = new Map<string, string | undefined>();
  const workflows = new Map<string, string | undefined>();
  const orders = new Map<string, string | undefined>();
  for (const h of holds) {
    if (h.SpaceID && h.ChangeOrderID && !orders.has(h.ChangeOrderID))
      orders.set(
        h.ChangeOrderID,
        (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', h.SpaceID, h.ChangeOrderID))?.Slug,
      );
    if (h.SpaceID && !spaces.has(h.SpaceID))
      spaces.set(h.SpaceID, (await deps.store.getSpace(caller.OrganizationID, h.SpaceID))?.Slug);
    if (h.SpaceID && h.ChangeWorkflowID && !workflows.has(h.ChangeWorkflowID))
      workflows.set(
        h.ChangeWorkflowID,
        (await deps.store.getInSpace<ChangeWorkflow>('ChangeWorkflow', h.SpaceID, h.ChangeWorkflowID))?.Slug,
      );
  }
  return holds.map((h) => ({
    ...h,
    InForce: inForce(h, now),
    OwnerSlug: users.get(h.OwnerID),
    ...(h.SpaceID ? { SpaceSlug: spaces.get(h.SpaceID) } : {}),
    ...(h.ChangeWorkflowID ? { ChangeWorkflowSlug: workflows.get(h.ChangeWorkflowID) } : {}),
    ...(h.ChangeOrderID ? { ChangeOrderSlug: orders.get(h.ChangeOrderID) } : {}),
  }));
}

/** The organization's holds, by slug. */
export async function listHolds(deps: ChangeDeps, caller: Caller): Promise<HoldView[]> {
  return viewHolds(
    deps,
    caller,
    (await deps.store.listHolds(caller.OrganizationID)).sort((a, b) => (a.Slug < b.Slug ? -1 : 1)),
  );
}

/**
 * The organization's holds by slug, a page at a time: the `read` of a `keyedPage`, walking the holds' slug
 * claims with DynamoDB's cursor and reading only the page's holds (lifted ones keep their slugs, so the
 * holds of an organization grow with its history).
 */
export function holdReader(
  deps: ChangeDeps,
  caller: Caller,
): (want: number, after?: string) => Promise<{ items: { item: HoldView; cursor: string }[]; next?: string }> {
  return async (want, after) => {
    const claims = await deps.store.slugPage({ orgId: caller.OrganizationID }, 'Hold', want, after);
    const byId = new Map(
      (
        await deps.store.getMany<Hold>(
          'Hold',
          caller.OrganizationID,
          claims.claims.map((c) => c.ID),
        )
      ).map((h) => [h.HoldID, h]),
    );
    const present = claims.claims.filter((c) => byId.has(c.ID));
    const views = await viewHolds(
      deps,
      caller,
      present.map((c) => byId.get(c.ID)!),
    );
    return { items: views.map((item, i) => ({ item, cursor: present[i]!.Cursor })), next: claims.next };
  };
}

/** The holds in force over what an action is about to touch, as gates that do not hold (none when nothing holds it). */
export async function holdGates(
  deps: ChangeDeps,
  caller: Caller,
  subject: HoldSubject,
  read?: Promise<Hold[]>,
): Promise<GateResult[]> {
  const now = deps.now();
  const found = holdsOn(await (read ?? holdsInForce(deps, caller)), subject, now);
  if (!found.length) return [];
  const views = await viewHolds(deps, caller, found);
  return views.map((h) =>
    holdGate(h, { owner: h.OwnerSlug ?? h.OwnerID, space: h.Scope === 'Space' ? h.SpaceSlug : undefined }),
  );
}

/** The organization's holds in force now, read once: `holdGates` filters them by what they cover (read before a promotion knows its Spaces). */
export function holdsInForce(deps: ChangeDeps, caller: Caller): Promise<Hold[]> {
  return deps.store.listHolds(caller.OrganizationID, { inForceAt: deps.now() });
}

/** Refuses (409) an action a hold in force covers: publishing has no override. */
export async function refuseIfHeld(
  deps: ChangeDeps,
  caller: Caller,
  subject: HoldSubject,
  what: string,
): Promise<void> {
  const gates = await holdGates(deps, caller, subject);
  if (gates.length)
    throw new Conflict(
      `unable to ${what}: ${gates.map((g) => g.Message.replace(/ or pass it with --force --force-reason$/, '')).join('; ')}`,
    );
}

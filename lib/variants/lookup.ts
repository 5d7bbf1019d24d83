import { allows, type Caller, type Component, type Space, type Target, type Unit } from '../model/entities.ts';
import { Invalid, NotFound } from '../model/errors.ts';
import type { Deps } from '../ports/deps.ts';
import type { SpaceKind, Store } from '../ports/store.ts';

import { isId } from '../model/ids.ts';

export { isId };

type LookupDeps = Pick<
  Deps<
    Pick<
      Store,
      | 'spaceIdBySlug'
      | 'getSpace'
      | 'spaceAndSlug'
      | 'idInSpace'
      | 'getUnit'
      | 'getInSpace'
      | 'componentIdBySlug'
      | 'getComponent'
    >
  >,
  'store'
>;

/** Finds a Space of the caller's organization by ID or slug; another organization's Space is simply not found. */
export async function findSpace(deps: LookupDeps, caller: Caller, ref: string): Promise<Space> {
  const org = caller.OrganizationID;
  const id = await spaceIdOf(deps, caller, ref);
  return visible(caller, id ? await deps.store.getSpace(org, id) : undefined, ref);
}

/** The ID a Space reference names (an ID, or a slug claimed in the caller's organization). */
async function spaceIdOf(deps: LookupDeps, caller: Caller, ref: string): Promise<string | undefined> {
  return isId(ref) ? ref.toLowerCase() : deps.store.spaceIdBySlug(caller.OrganizationID, ref);
}

/** The Space found, if the caller may see it. */
function visible(caller: Caller, space: Space | undefined, ref: string): Space {
  // A Space the caller may not View is not found, as another organization's is (a service token finds those it reports on).
  if (!space || !(allows(caller, space, 'View') || (caller.Service && allows(caller, space, 'ReportStatus'))))
    throw new NotFound(`space '${ref}' not found`);
  return space;
}

/** Finds a Component of the caller's organization by ID or slug. */
export async function findComponent(deps: LookupDeps, caller: Caller, ref: string): Promise<Component> {
  const id = isId(ref) ? ref.toLowerCase() : await deps.store.componentIdBySlug(caller.OrganizationID, ref);
  const c = id ? await deps.store.getComponent(caller.OrganizationID, id) : undefined;
  if (!c) throw new NotFound(`component '${ref}' not found`);
  return c;
}

/** Finds a Unit of a Space by ID or slug. */
export async function findUnit(deps: LookupDeps, space: Space, ref: string): Promise<Unit> {
  const id = isId(ref) ? ref.toLowerCase() : await deps.store.idInSpace(space.SpaceID, 'Unit', ref);
  const unit = id ? await deps.store.getUnit(space.SpaceID, id) : undefined;
  if (!unit) throw new NotFound(`unit '${ref}' not found in space '${space.Slug}'`);
  return unit;
}

/**
 * Finds a Space-resident entity by ID or slug; `space/slug` names one in another Space. Without a
 * Space to default to, only the `space/slug` form can be resolved.
 */
export async function findInSpace<T>(
  deps: LookupDeps,
  caller: Caller,
  space: Space | undefined,
  kind: SpaceKind,
  ref: string,
): Promise<{ item: T; space: Space }> {
  let home = space;
  let name = ref;
  /** The ID named, once known (the `space/slug` path learns it with the Space). */
  let id: string | undefined;
  let known = false;
  const slash = ref.indexOf('/');
  if (slash > 0) {
    const spaceRef = ref.slice(0, slash);
    name = ref.slice(slash + 1);
    if (isId(name)) home = await findSpace(deps, caller, spaceRef);
    else {
      // `space/slug`: the Space and the slug's claim in it are read together, once the Space's ID is known.
      const spaceId = await spaceIdOf(deps, caller, spaceRef);
      const both = spaceId ? await deps.store.spaceAndSlug(caller.OrganizationID, spaceId, kind, name) : {};
      home = visible(caller, both.space, spaceRef);
      [id, known] = [both.id, true];
    }
  }
  if (!home) throw new Invalid(`name the ${kindName(kind)} as <space>/<${kindName(kind)}>, not '${ref}'`);
  if (!known) id = isId(name) ? name.toLowerCase() : await deps.store.idInSpace(home.SpaceID, kind, name);
  const item = id ? await deps.store.getInSpace<T>(kind, home.SpaceID, id) : undefined;
  if (!item) throw new NotFound(`${kindName(kind)} '${ref}' not found${slash > 0 ? '' : ` in space '${home.Slug}'`}`);
  return { item, space: home };
}

function kindName(kind: SpaceKind): string {
  return {
    Tag: 'tag',
    ChangeSet: 'changeset',
    Filter: 'filter',
    Target: 'target',
    Link: 'link',
    Release: 'release',
    ChangeWorkflow: 'changeworkflow',
    ChangeOrder: 'changeorder',
    Attestation: 'attestation',
    Invocation: 'invocation',
  }[kind];
}

/** Finds a Unit named `unit` (in `space`) or `space/unit`. */
export async function findUnitRef(
  deps: LookupDeps,
  caller: Caller,
  space: Space,
  ref: string,
): Promise<{ space: Space; unit: Unit }> {
  const slash = ref.indexOf('/');
  const home = slash > 0 ? await findSpace(deps, caller, ref.slice(0, slash)) : space;
  return { space: home, unit: await findUnit(deps, home, slash > 0 ? ref.slice(slash + 1) : ref) };
}

/** Orders entities by slug. */
export function bySlug<T extends { Slug: string }>(a: T, b: T): number {
  return a.Slug < b.Slug ? -1 : a.Slug > b.Slug ? 1 : 0;
}

/** A Space's release Target, named `space/target` (the Target lives in some Space of the organization). */
export async function releaseTargetId(
  deps: LookupDeps,
  caller: Caller,
  ref: string | null | undefined,
): Promise<string | undefined> {
  if (!ref) return undefined;
  if (ref.indexOf('/') <= 0) throw new Invalid(`ReleaseTargetID '${ref}' must name a target as <space>/<target>`);
  return (await findInSpace<Target>(deps, caller, undefined, 'Target', ref)).item.TargetID;
}

import type { Caller, Space, Unit } from '../model/entities.ts';
import { Invalid, NotFound } from '../model/errors.ts';
import type { Deps } from './deps.ts';
import type { SpaceKind } from './ports.ts';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Finds a Space of the caller's organization by ID or slug; another organization's Space is simply not found. */
export async function findSpace(deps: Deps, caller: Caller, ref: string): Promise<Space> {
  const org = caller.OrganizationID;
  const id = UUID.test(ref) ? ref.toLowerCase() : await deps.store.resolveSlug(`ORG#${org}`, 'space', ref);
  const space = id ? await deps.store.getSpace(org, id) : undefined;
  if (!space) throw new NotFound(`space '${ref}' not found`);
  return space;
}

/** Finds a Unit of a Space by ID or slug. */
export async function findUnit(deps: Deps, space: Space, ref: string): Promise<Unit> {
  const id = UUID.test(ref) ? ref.toLowerCase() : await deps.store.resolveSlug(`SPACE#${space.SpaceID}`, 'unit', ref);
  const unit = id ? await deps.store.getUnit(space.SpaceID, id) : undefined;
  if (!unit) throw new NotFound(`unit '${ref}' not found in space '${space.Slug}'`);
  return withSpace(unit, space);
}

/**
 * Finds a Space-resident entity by ID or slug; `space/slug` names one in another Space. Without a
 * Space to default to, only the `space/slug` form can be resolved.
 */
export async function findInSpace<T>(deps: Deps, caller: Caller, space: Space | undefined, kind: SpaceKind, ref: string): Promise<{ item: T; space: Space }> {
  let home = space;
  let name = ref;
  const slash = ref.indexOf('/');
  if (slash > 0) {
    home = await findSpace(deps, caller, ref.slice(0, slash));
    name = ref.slice(slash + 1);
  }
  if (!home) throw new Invalid(`name the ${kindName(kind)} as <space>/<${kindName(kind)}>, not '${ref}'`);
  const id = UUID.test(name) ? name.toLowerCase() : await deps.store.resolveSlug(`SPACE#${home.SpaceID}`, kind.toLowerCase(), name);
  const item = id ? await deps.store.getInSpace<T>(kind, home.SpaceID, id) : undefined;
  if (!item) throw new NotFound(`${kindName(kind)} '${ref}' not found${slash > 0 ? '' : ` in space '${home.Slug}'`}`);
  return { item: withSpace(item as T & object, home) as T, space: home };
}

function kindName(kind: SpaceKind): string {
  return { Tag: 'tag', ChangeSet: 'changeset', Filter: 'filter', Target: 'target', Link: 'link', Release: 'release', ChangeWorkflow: 'changeworkflow', ChangeOrder: 'changeorder' }[kind];
}

/** Adds `SpaceSlug`, which is read, not stored, so a Space rename never leaves it stale. */
export function withSpace<T extends object>(item: T, space: Space): T & { SpaceSlug: string } {
  return { ...item, SpaceSlug: space.Slug };
}

/** Finds a Unit named `unit` (in `space`) or `space/unit`. */
export async function findUnitRef(deps: Deps, caller: Caller, space: Space, ref: string): Promise<{ space: Space; unit: Unit }> {
  const slash = ref.indexOf('/');
  const home = slash > 0 ? await findSpace(deps, caller, ref.slice(0, slash)) : space;
  return { space: home, unit: await findUnit(deps, home, slash > 0 ? ref.slice(slash + 1) : ref) };
}

/** The Space and Unit a `/space/{space_id}/unit/{unit_id}` route names. */
export async function spaceAndUnit(deps: Deps, caller: Caller, params: Record<string, string>): Promise<{ space: Space; unit: Unit }> {
  const space = await findSpace(deps, caller, params.space_id!);
  return { space, unit: await findUnit(deps, space, params.unit_id!) };
}

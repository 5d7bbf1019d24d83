import type { Caller, Space, Unit, WithSpaceSlug } from '../model/entities.ts';
import type { Deps } from '../ports/deps.ts';
import { findSpace, findUnit } from '../variants/lookup.ts';

/** Adds `SpaceSlug` for the reply: it is read, not stored, so a Space rename never leaves it stale. */
export function withSpace<T extends object>(item: T, space: Space): WithSpaceSlug<T> {
  return { ...item, SpaceSlug: space.Slug };
}

/** The Space a `/space/{space_id}/…` route names. */
export function pathSpace(deps: Deps, caller: Caller, params: Record<string, string>): Promise<Space> {
  return findSpace(deps, caller, params.space_id!);
}

/** The Space and Unit a `/space/{space_id}/unit/{unit_id}` route names. */
export async function spaceAndUnit(
  deps: Deps,
  caller: Caller,
  params: Record<string, string>,
): Promise<{ space: Space; unit: Unit }> {
  const space = await pathSpace(deps, caller, params);
  return { space, unit: await findUnit(deps, space, params.unit_id!) };
}

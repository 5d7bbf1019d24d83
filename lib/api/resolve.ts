import type { Space, Unit, WithSpaceSlug } from '../model/entities.ts';
import type { Deps } from '../ports/deps.ts';
import { findUnit } from '../variants/lookup.ts';

/** Adds `SpaceSlug` for the reply: it is read, not stored, so a Space rename never leaves it stale. */
export function withSpace<T extends object>(item: T, space: Space): WithSpaceSlug<T> {
  return { ...item, SpaceSlug: space.Slug };
}

/** The Unit a `/space/{space_id}/unit/{unit_id}` route names, in the Space the route's access check found. */
export function pathUnit(deps: Deps, space: Space, params: Record<string, string>): Promise<Unit> {
  return findUnit(deps, space, params.unit_id!);
}

import { allows, type Caller, type Permissions, type Space } from '../model/entities.ts';
import { Forbidden } from '../model/errors.ts';
import type { Deps } from '../ports/deps.ts';
import { findSpace } from '../variants/lookup.ts';
import type { Route } from './route.ts';

/**
 * Checks what a route needs of its caller before it runs (see `Access`). A Space the caller may not
 * View is not found (404, as another organization's); one they may View but not act in is 403 naming
 * the verb and the Space. A service token may only report status. Answers the Space a `{space_id}` names, found
 * once for the whole request.
 */
export async function checkAccess(
  deps: Deps,
  caller: Caller,
  route: Route,
  params: Record<string, string>,
): Promise<Space | undefined> {
  const need =
    route.access ??
    (params.space_id ? (route.method === 'GET' ? 'View' : 'Edit') : route.method === 'GET' ? 'Anyone' : 'Member');
  if (caller.Service && need !== 'ReportStatus')
    throw new Forbidden(
      `the service token '${caller.Service.Name}' may only report status (POST /hooks/…, PATCH …/release/{n}), not ${route.method} ${route.path}`,
    );
  if (params.space_id) {
    const space = await findSpace(deps, caller, params.space_id);
    if (need !== 'Anyone' && need !== 'Member' && need !== 'Admin' && !allows(caller, space, need))
      throw new Forbidden(`${need} permission in space '${space.Slug}' is needed to ${route.method} ${route.path}`);
    return space;
  }
  if (need === 'Admin' && caller.Role && caller.Role !== 'Admin')
    throw new Forbidden(`only an Admin may ${route.method} ${route.path}`);
  if (need === 'Member' && caller.Role === 'Viewer')
    throw new Forbidden(`a Viewer may only read; ${route.method} ${route.path} needs a Member or Admin`);
  return undefined;
}

/** The Spaces the caller may View, for lists across the organization. */
export function visible<T extends { SpaceID: string; Permissions?: Permissions }>(caller: Caller, spaces: T[]): T[] {
  return spaces.filter((s) => allows(caller, s, 'View'));
}

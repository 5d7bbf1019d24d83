import { patchPermissions } from '../people/people.ts';
import {
  newEntity,
  patched,
  type Caller,
  type CommonPatch,
  type Component,
  type Space,
  type SpaceVerb,
} from '../model/entities.ts';
import { expectVersion } from '../model/errors.ts';
import { findComponent, findSpace, releaseTargetId } from './lookup.ts';
import type { UnitDeps } from './ports.ts';

/** What a person gives to create a Space; references by slug or ID. */
export interface CreateSpaceInput {
  Slug: string;
  DisplayName?: string;
  Labels?: Record<string, string>;
  Annotations?: Record<string, string>;
  ComponentID?: string;
  ReleaseTargetID?: string;
  UpstreamSpaceID?: string;
}

/** Creates a Space, resolving its Component, release Target (`space/target`) and upstream Space. */
export async function createSpace(deps: UnitDeps, caller: Caller, body: CreateSpaceInput): Promise<Space> {
  const space: Space = {
    ...newEntity(deps, caller.OrganizationID, body),
    SpaceID: deps.newId(),
    ComponentID: body.ComponentID ? (await findComponent(deps, caller, body.ComponentID)).ComponentID : undefined,
    ReleaseTargetID: await releaseTargetId(deps, caller, body.ReleaseTargetID),
    UpstreamSpaceID: body.UpstreamSpaceID ? (await findSpace(deps, caller, body.UpstreamSpaceID)).SpaceID : undefined,
  };
  await deps.store.createSpace(space);
  return space;
}

/** What may change on a Space: its common fields; Component and release Target set, or cleared with null. */
export interface UpdateSpaceInput extends CommonPatch {
  ComponentID?: string | null;
  ReleaseTargetID?: string | null;
  /** Verb → users and groups (slugs or IDs); null gives the verb back to the role defaults. */
  Permissions?: Partial<Record<SpaceVerb, { UserIDs?: string[]; GroupIDs?: string[] } | null>>;
}

/** Updates a Space, guarded by its Version; a rename moves its slug claim. */
export async function updateSpace(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  body: UpdateSpaceInput,
): Promise<Space> {
  expectVersion(`space '${space.Slug}'`, space.Version, body.Version);
  const next: Space = {
    ...patched(space, body, deps),
    ComponentID:
      body.ComponentID === undefined
        ? space.ComponentID
        : body.ComponentID
          ? (await findComponent(deps, caller, body.ComponentID)).ComponentID
          : undefined,
    ReleaseTargetID:
      body.ReleaseTargetID === undefined
        ? space.ReleaseTargetID
        : await releaseTargetId(deps, caller, body.ReleaseTargetID),
    Permissions:
      body.Permissions === undefined
        ? space.Permissions
        : await patchPermissions(deps, caller, space.Permissions, body.Permissions),
  };
  await deps.store.updateSpace(next, space.Version, space.Slug);
  return next;
}

/** Creates a Component. */
export async function createComponent(
  deps: UnitDeps,
  caller: Caller,
  body: { Slug: string; DisplayName?: string; Labels?: Record<string, string>; Annotations?: Record<string, string> },
): Promise<Component> {
  const c: Component = {
    ...newEntity(deps, caller.OrganizationID, body),
    ComponentID: deps.newId(),
    AllowedChangeWorkflowIDs: [],
    ChangeWorkflowRequired: false,
  };
  await deps.store.createComponent(c);
  return c;
}

import { answered, SpaceDeletion } from '../answers.ts';
import { requireVerb, type Caller, type Component, type Space } from '../../model/entities.ts';
import type { Deps } from '../../ports/deps.ts';
import { deleteSpace } from '../../variants/deletion.ts';
import { findComponent } from '../../variants/lookup.ts';
import { createComponent, createSpace, updateSpace } from '../../variants/spaces.ts';
import { cursorPage, listQueries } from '../lists.ts';
import { visible } from '../access.ts';
import { listReply, route } from '../route.ts';
import { CreateComponent, CreateSpace, DeleteWithGates, ListQuery, NoBody, NoQuery, UpdateSpace } from '../schemas.ts';

async function loadSpaceRelations(
  deps: Deps,
  caller: Caller,
  spaces: Space[],
  relations: Set<string>,
): Promise<Space[]> {
  const components = relations.has('Component')
    ? new Map((await deps.store.listComponents(caller.OrganizationID)).map((c) => [c.ComponentID, c]))
    : undefined;
  const byId = new Map(spaces.map((s) => [s.SpaceID, s]));
  return spaces.map((s) => ({
    ...s,
    ...(components && s.ComponentID ? { Component: components.get(s.ComponentID) } : {}),
    ...(relations.has('UpstreamSpace') && s.UpstreamSpaceID ? { UpstreamSpace: byId.get(s.UpstreamSpaceID) } : {}),
  }));
}

export const spaceRoutes = [
  route({
    method: 'GET',
    path: '/space',
    name: 'ListSpaces',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      const queries = await listQueries(deps, caller, 'Space', query);
      const org = caller.OrganizationID;
      const src = {
        all: () => deps.store.listSpaces(org),
        some: (ids: string[]) => deps.store.getMany<Space>('Space', org, ids),
        idOf: (s: Space) => s.SpaceID,
        show: (s: Space) => (visible(caller, [s]).length ? s : undefined),
      };
      return listReply(
        await cursorPage(deps, { scope: { orgId: org }, kind: 'Space' }, src, queries, query, (items, rel) =>
          loadSpaceRelations(deps, caller, items, rel),
        ),
      );
    },
  }),
  route({
    method: 'POST',
    path: '/space',
    name: 'CreateSpace',
    query: NoQuery,
    body: CreateSpace,
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createSpace(deps, caller, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/space/{space_id}',
    name: 'GetSpace',
    query: NoQuery,
    body: NoBody,
    async handle({ space }) {
      return { body: space };
    },
  }),
  route({
    method: 'PATCH',
    path: '/space/{space_id}',
    name: 'UpdateSpace',
    query: NoQuery,
    body: UpdateSpace,
    async handle({ deps, caller, body, space }) {
      // Who may do what is the Space's managers' to change.
      if (body.Permissions !== undefined) requireVerb(caller, [space], 'Manage', 'change its permissions');
      return { body: await updateSpace(deps, caller, space, body) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/space/{space_id}',
    name: 'DeleteSpace',
    query: DeleteWithGates,
    body: NoBody,
    answer: SpaceDeletion,
    access: 'Manage',
    async handle({ deps, query, space }) {
      const report = await deleteSpace(deps, space, {
        recursive: query.recursive === 'true',
        force: query.force === 'true',
      });
      return { body: answered(SpaceDeletion, report) };
    },
  }),
  route({
    method: 'GET',
    path: '/component',
    name: 'ListComponents',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      const queries = await listQueries(deps, caller, 'Component', query);
      const org = caller.OrganizationID;
      const src = {
        all: () => deps.store.listComponents(org),
        some: (ids: string[]) => deps.store.getMany<Component>('Component', org, ids),
        idOf: (c: Component) => c.ComponentID,
        show: (c: Component) => c,
      };
      return listReply(await cursorPage(deps, { scope: { orgId: org }, kind: 'Component' }, src, queries, query));
    },
  }),
  route({
    method: 'POST',
    path: '/component',
    name: 'CreateComponent',
    query: NoQuery,
    body: CreateComponent,
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createComponent(deps, caller, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/component/{component_id}',
    name: 'GetComponent',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      return { body: await findComponent(deps, caller, params.component_id!) };
    },
  }),
];

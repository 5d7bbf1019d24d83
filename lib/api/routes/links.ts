import type { Link } from '../../model/entities.ts';
import { createLink, deleteLink, withStale } from '../../variants/links.ts';
import { findInSpace } from '../../variants/lookup.ts';
import { cursorPage, listQueries } from '../lists.ts';
import { withSpace } from '../resolve.ts';
import { listReply, route } from '../route.ts';
import { CreateLink, ListQuery, NoBody, NoQuery } from '../schemas.ts';

const linkPath = '/space/{space_id}/link';

/** Links: list, read, create and delete, with `Stale` derived when read. */
export const linkRoutes = [
  route({
    method: 'GET',
    path: linkPath,
    name: 'ListLinks',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query, space }) {
      const queries = await listQueries(deps, caller, 'Link', query, space);
      const src = {
        all: () => deps.store.listInSpace<Link>('Link', space.SpaceID),
        some: (ids: string[]) => deps.store.getMany<Link>('Link', space.SpaceID, ids),
        idOf: (l: Link) => l.LinkID,
        show: async (l: Link) => withSpace((await withStale(deps, [l]))[0]!, space),
      };
      return listReply(
        await cursorPage(deps, { scope: { spaceId: space.SpaceID }, kind: 'Link' }, src, queries, query),
      );
    },
  }),
  route({
    method: 'GET',
    path: `${linkPath}/{link_id}`,
    name: 'GetLink',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params, space }) {
      const { item } = await findInSpace<Link>(deps, caller, space, 'Link', params.link_id!);
      return { body: withSpace((await withStale(deps, [item]))[0]!, space) };
    },
  }),
  route({
    method: 'POST',
    path: linkPath,
    name: 'CreateLink',
    query: NoQuery,
    body: CreateLink,
    async handle({ deps, caller, body, space }) {
      return { status: 201, body: withSpace(await createLink(deps, caller, space, body), space) };
    },
  }),
  route({
    method: 'DELETE',
    path: `${linkPath}/{link_id}`,
    name: 'DeleteLink',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params, space }) {
      const { item } = await findInSpace<Link>(deps, caller, space, 'Link', params.link_id!);
      await deleteLink(deps, space, item);
      return { status: 204 };
    },
  }),
];

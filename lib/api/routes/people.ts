import type { Caller, Group, User } from '../../model/entities.ts';
import type { Deps } from '../../ports/deps.ts';
import {
  changeMembers,
  createGroup,
  createToken,
  createUser,
  deleteGroup,
  deleteUser,
  findGroup,
  findUser,
  listTokens,
  revokeToken,
  tokenPage,
  updateUser,
} from '../../people/people.ts';
import { findSpace } from '../../variants/lookup.ts';
import { cursorPage, keyedPage, listQueries } from '../lists.ts';
import { listReply, route } from '../route.ts';
import {
  ChangeMembers,
  CreateGroup,
  CreateToken,
  CreateUser,
  ListQuery,
  NoBody,
  NoQuery,
  PageQuery,
  UpdateUser,
} from '../schemas.ts';

const spaceIds = (deps: Deps, caller: Caller) => (refs: string[]) =>
  Promise.all(refs.map(async (r) => (await findSpace(deps, caller, r)).SpaceID));

/** Users, groups and tokens: who may call, and as what. */
export const peopleRoutes = [
  route({
    method: 'GET',
    path: '/user',
    name: 'ListUsers',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      const org = caller.OrganizationID;
      const src = {
        all: () => deps.store.listUsers(org),
        some: (ids: string[]) => deps.store.getMany<User>('User', org, ids),
        idOf: (u: User) => u.UserID,
        show: (u: User) => u,
      };
      return listReply(
        await cursorPage(
          deps,
          { scope: { orgId: org }, kind: 'User' },
          src,
          await listQueries(deps, caller, 'User', query),
          query,
        ),
      );
    },
  }),
  route({
    method: 'POST',
    path: '/user',
    name: 'CreateUser',
    query: NoQuery,
    body: CreateUser,
    access: 'Admin',
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createUser(deps, caller, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/user/{user_id}',
    name: 'GetUser',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      return { body: await findUser(deps, caller, params.user_id!) };
    },
  }),
  route({
    method: 'PATCH',
    path: '/user/{user_id}',
    name: 'UpdateUser',
    query: NoQuery,
    body: UpdateUser,
    access: 'Admin',
    async handle({ deps, caller, params, body }) {
      return { body: await updateUser(deps, caller, await findUser(deps, caller, params.user_id!), body) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/user/{user_id}',
    name: 'DeleteUser',
    query: NoQuery,
    body: NoBody,
    access: 'Admin',
    async handle({ deps, caller, params }) {
      return { body: await deleteUser(deps, caller, await findUser(deps, caller, params.user_id!)) };
    },
  }),
  route({
    method: 'GET',
    path: '/group',
    name: 'ListGroups',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      const org = caller.OrganizationID;
      const src = {
        all: () => deps.store.listGroups(org),
        some: (ids: string[]) => deps.store.getMany<Group>('Group', org, ids),
        idOf: (g: Group) => g.GroupID,
        show: (g: Group) => g,
      };
      return listReply(
        await cursorPage(
          deps,
          { scope: { orgId: org }, kind: 'Group' },
          src,
          await listQueries(deps, caller, 'Group', query),
          query,
        ),
      );
    },
  }),
  route({
    method: 'POST',
    path: '/group',
    name: 'CreateGroup',
    query: NoQuery,
    body: CreateGroup,
    access: 'Admin',
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createGroup(deps, caller, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/group/{group_id}',
    name: 'GetGroup',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      return { body: await findGroup(deps, caller, params.group_id!) };
    },
  }),
  route({
    method: 'POST',
    path: '/group/{group_id}/members',
    name: 'ChangeGroupMembers',
    query: NoQuery,
    body: ChangeMembers,
    access: 'Admin',
    async handle({ deps, caller, params, body }) {
      return {
        body: await changeMembers(
          deps,
          caller,
          await findGroup(deps, caller, params.group_id!),
          body.Add ?? [],
          body.Remove ?? [],
        ),
      };
    },
  }),
  route({
    method: 'DELETE',
    path: '/group/{group_id}',
    name: 'DeleteGroup',
    query: NoQuery,
    body: NoBody,
    access: 'Admin',
    async handle({ deps, caller, params }) {
      const group = await findGroup(deps, caller, params.group_id!);
      await deleteGroup(deps, caller, group);
      return { body: { Deleted: group.Slug } };
    },
  }),
  route({
    method: 'GET',
    path: '/token',
    name: 'ListTokens',
    query: PageQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      // Oldest first. Asked for a page, read with DynamoDB's cursor over the organization's tokens in that order.
      if (query.limit === undefined && query.continue === undefined) return { body: await listTokens(deps, caller) };
      return listReply(await keyedPage((want, after) => tokenPage(deps, caller, want, after), [], query));
    },
  }),
  route({
    method: 'POST',
    path: '/token',
    name: 'CreateToken',
    query: NoQuery,
    body: CreateToken,
    // Any role makes its own tokens (a Viewer too); the operation checks the rest.
    access: 'Anyone',
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createToken(deps, caller, body, spaceIds(deps, caller)) };
    },
  }),
  route({
    method: 'POST',
    path: '/token/{token_id}/revoke',
    name: 'RevokeToken',
    query: NoQuery,
    body: NoBody,
    access: 'Anyone',
    async handle({ deps, caller, params }) {
      return { body: await revokeToken(deps, caller, params.token_id!) };
    },
  }),
];

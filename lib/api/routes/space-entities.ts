import type { z } from 'zod';
import type { InSpace, Mark, Tag } from '../../model/entities.ts';
import { findInSpace } from '../../variants/lookup.ts';
import {
  createSpaceEntity,
  deleteSpaceEntity,
  updateSpaceEntity,
  type EntityInput,
  type SimpleKind,
} from '../../variants/space-entities.ts';
import { cursorPage, listQueries } from '../lists.ts';
import { withSpace } from '../resolve.ts';
import { listReply, route, type Route } from '../route.ts';
import {
  CreateChangeSet,
  CreateFilter,
  CreateInvocation,
  CreateTag,
  CreateTarget,
  ListQuery,
  NoBody,
  NoQuery,
  UpdateChangeSet,
  UpdateFilter,
  UpdateInvocation,
  UpdateTag,
  UpdateTarget,
} from '../schemas.ts';

type Created = z.output<typeof CreateTag> & EntityInput;
type Updated = z.output<typeof UpdateTag> & EntityInput;

/** A kind's routes: where they live and the request schemas; its rules are in lib/variants. */
interface KindSpec {
  kind: SimpleKind;
  segment: string;
  create: z.ZodType<Created>;
  update: z.ZodType<Updated>;
}

type Item = InSpace & Record<string, unknown>;

function crud(spec: KindSpec): Route[] {
  const base = `/space/{space_id}/${spec.segment}`;
  const one = `${base}/{${spec.segment}_id}`;
  const ref = (params: Record<string, string>) => params[`${spec.segment}_id`]!;
  return [
    route({
      method: 'GET',
      path: base,
      name: `List${spec.kind}s`,
      query: ListQuery,
      body: NoBody,
      async handle({ deps, caller, query, space }) {
        const queries = await listQueries(deps, caller, spec.kind, query, space);
        const src = {
          all: () => deps.store.listInSpace<Item>(spec.kind, space.SpaceID),
          some: (ids: string[]) => deps.store.getMany<Item>(spec.kind, space.SpaceID, ids),
          idOf: (i: Item) => String(i[`${spec.kind}ID`]),
          show: (i: Item) => withSpace(i, space),
        };
        return listReply(
          await cursorPage(deps, { scope: { spaceId: space.SpaceID }, kind: spec.kind }, src, queries, query),
        );
      },
    }),
    route({
      method: 'POST',
      path: base,
      name: `Create${spec.kind}`,
      query: NoQuery,
      body: spec.create,
      async handle({ deps, caller, body, space }) {
        return { status: 201, body: withSpace(await createSpaceEntity(deps, caller, space, spec.kind, body), space) };
      },
    }),
    route({
      method: 'GET',
      path: one,
      name: `Get${spec.kind}`,
      query: NoQuery,
      body: NoBody,
      async handle({ deps, caller, params, space }) {
        const { item, space: home } = await findInSpace<Item>(deps, caller, space, spec.kind, ref(params));
        if (spec.kind !== 'Tag') return { body: withSpace(item, home) };
        const marks = await deps.store.marksOfTag((item as unknown as Tag).TagID);
        return {
          body: {
            ...withSpace(item, home),
            Marks: marks.map((m: Mark) => ({ UnitID: m.UnitID, SpaceID: m.SpaceID, RevisionNum: m.RevisionNum })),
          },
        };
      },
    }),
    route({
      method: 'PATCH',
      path: one,
      name: `Update${spec.kind}`,
      query: NoQuery,
      body: spec.update,
      async handle({ deps, caller, params, body, space }) {
        const { item } = await findInSpace<Item>(deps, caller, space, spec.kind, ref(params));
        return { body: withSpace(await updateSpaceEntity(deps, space, spec.kind, item, body), space) };
      },
    }),
    route({
      method: 'DELETE',
      path: one,
      name: `Delete${spec.kind}`,
      query: NoQuery,
      body: NoBody,
      async handle({ deps, caller, params, space }) {
        const { item } = await findInSpace<Item>(deps, caller, space, spec.kind, ref(params));
        await deleteSpaceEntity(deps, space, spec.kind, item);
        return { status: 204 };
      },
    }),
  ];
}

/** Tags, ChangeSets, Filters and Targets: one set of routes each. */
export const spaceEntityRoutes: Route[] = [
  ...crud({ kind: 'Tag', segment: 'tag', create: CreateTag, update: UpdateTag }),
  ...crud({
    kind: 'ChangeSet',
    segment: 'change_set',
    create: CreateChangeSet as never,
    update: UpdateChangeSet as never,
  }),
  ...crud({ kind: 'Filter', segment: 'filter', create: CreateFilter as never, update: UpdateFilter as never }),
  ...crud({ kind: 'Target', segment: 'target', create: CreateTarget as never, update: UpdateTarget as never }),
  ...crud({
    kind: 'Invocation',
    segment: 'invocation',
    create: CreateInvocation as never,
    update: UpdateInvocation as never,
  }),
];

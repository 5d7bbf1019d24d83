import type { z } from 'zod';
import { FILTERABLE } from '../../where/index.ts';
import { newEntity, patchMap, type ChangeSet, type InSpace, type Mark, type Space, type Tag, type Unit } from '../../model/entities.ts';
import { Conflict, expectVersion, Invalid } from '../../model/errors.ts';
import { parseWhere } from '../../where/index.ts';
import type { Deps } from '../../ports/deps.ts';
import { listQueries, page } from '../lists.ts';
import type { SpaceKind } from '../../ports/store.ts';
import { findInSpace } from '../../variants/lookup.ts';
import { pathSpace, withSpace } from '../resolve.ts';
import { listReply, route, type Route } from '../route.ts';
import {
  CreateChangeSet,
  CreateFilter,
  CreateTag,
  CreateTarget,
  ListQuery,
  NoBody,
  NoQuery,
  UpdateChangeSet,
  UpdateFilter,
  UpdateTag,
  UpdateTarget,
} from '../schemas.ts';

type Created = z.output<typeof CreateTag> & Record<string, unknown>;
type Updated = z.output<typeof UpdateTag> & Record<string, unknown>;

interface KindSpec {
  kind: SpaceKind;
  segment: string;
  idField: string;
  create: z.ZodType<Created>;
  update: z.ZodType<Updated>;
  /** Fields of a new item beyond the common ones; may check them. */
  fields(deps: Deps, space: Space, body: Created): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Applies an update beyond the common fields; may refuse it. */
  apply?(deps: Deps, space: Space, item: Record<string, unknown>, body: Updated): Promise<Record<string, unknown>>;
}

function crud(spec: KindSpec): Route[] {
  const base = `/space/{space_id}/${spec.segment}`;
  const one = `${base}/{${spec.segment}_id}`;
  return [
    route({
      method: 'GET',
      path: base,
      name: `List${spec.kind}s`,
      query: ListQuery,
      body: NoBody,
      async handle({ deps, caller, params, query }) {
        const space = await pathSpace(deps, caller, params);
        const queries = await listQueries(deps, caller, spec.kind, query, space);
        const items = (await deps.store.listInSpace<InSpace>(spec.kind, space.SpaceID)).map((i) => withSpace(i, space));
        return listReply(await page(items, queries, query));
      },
    }),
    route({
      method: 'POST',
      path: base,
      name: `Create${spec.kind}`,
      query: NoQuery,
      body: spec.create,
      async handle({ deps, caller, params, body }) {
        const space = await pathSpace(deps, caller, params);
        const item = {
          ...newEntity(deps, caller.OrganizationID, body),
          SpaceID: space.SpaceID,
          [spec.idField]: deps.newId(),
          ...(await spec.fields(deps, space, body)),
        } as InSpace;
        await deps.store.createInSpace(spec.kind, item);
        return { status: 201, body: withSpace(item, space) };
      },
    }),
    route({
      method: 'GET',
      path: one,
      name: `Get${spec.kind}`,
      query: NoQuery,
      body: NoBody,
      async handle({ deps, caller, params }) {
        const space = await pathSpace(deps, caller, params);
        const { item } = await findInSpace<InSpace>(deps, caller, space, spec.kind, params[`${spec.segment}_id`]!);
        if (spec.kind !== 'Tag') return { body: withSpace(item, space) };
        const marks = await deps.store.marksOfTag(String((item as Tag).TagID));
        return { body: { ...withSpace(item, space), Marks: marks.map((m: Mark) => ({ UnitID: m.UnitID, SpaceID: m.SpaceID, RevisionNum: m.RevisionNum })) } };
      },
    }),
    route({
      method: 'PATCH',
      path: one,
      name: `Update${spec.kind}`,
      query: NoQuery,
      body: spec.update,
      async handle({ deps, caller, params, body }) {
        const space = await pathSpace(deps, caller, params);
        const { item } = await findInSpace<InSpace & Record<string, unknown>>(deps, caller, space, spec.kind, params[`${spec.segment}_id`]!);
        expectVersion(`${spec.kind} '${item.Slug}'`, item.Version, body.Version);
        const next = {
          ...item,
          Slug: body.Slug ?? item.Slug,
          DisplayName: body.DisplayName ?? item.DisplayName,
          Labels: patchMap(item.Labels, body.Labels),
          Annotations: patchMap(item.Annotations, body.Annotations),
          ...(spec.apply ? await spec.apply(deps, space, item, body) : {}),
          UpdatedAt: deps.now().toISOString(),
          Version: item.Version + 1,
        } as InSpace & Record<string, unknown>;
        if (spec.kind === 'ChangeSet' && item.State === 'Open' && next.State === 'Closed') {
          await closeChangeSet(deps, space, item as unknown as ChangeSet, next);
        } else await deps.store.updateInSpace(spec.kind, next, item.Version, item.Slug);
        return { body: withSpace(next, space) };
      },
    }),
    route({
      method: 'DELETE',
      path: one,
      name: `Delete${spec.kind}`,
      query: NoQuery,
      body: NoBody,
      async handle({ deps, caller, params }) {
        const space = await pathSpace(deps, caller, params);
        const { item } = await findInSpace<InSpace & Record<string, unknown>>(deps, caller, space, spec.kind, params[`${spec.segment}_id`]!);
        if (spec.kind === 'ChangeSet' && item.State === 'Open' && (await lockedBy(deps, space, String(item.ChangeSetID))).length) {
          throw new Conflict(`changeset '${item.Slug}' is open and locks units; close it first`);
        }
        await deps.store.deleteInSpace(spec.kind, item);
        return { status: 204 };
      },
    }),
  ];
}

async function lockedBy(deps: Deps, space: Space, changeSetId: string): Promise<Unit[]> {
  return (await deps.store.listUnits(space.SpaceID)).filter((u) => u.ChangeSetID === changeSetId);
}

/** Closing mints `<slug>-start` and `<slug>-end`, marks each unit it changed, and unlocks them, in one transaction. */
async function closeChangeSet(deps: Deps, space: Space, cs: ChangeSet, next: Record<string, unknown>): Promise<void> {
  const units = await lockedBy(deps, space, cs.ChangeSetID);
  const tag = (suffix: string): Tag => ({ ...newEntity(deps, cs.OrganizationID, { Slug: `${cs.Slug}-${suffix}` }), SpaceID: space.SpaceID, TagID: deps.newId(), ChangeSetID: cs.ChangeSetID });
  const start = tag('start');
  const end = tag('end');
  Object.assign(next, { StartTagID: start.TagID, EndTagID: end.TagID });
  const now = String(next.UpdatedAt);
  const marks = units.flatMap((u) => [
    { TagID: start.TagID, UnitID: u.UnitID, SpaceID: space.SpaceID, RevisionNum: u.ChangeSetStartRevisionNum ?? 0, UpdatedAt: now },
    { TagID: end.TagID, UnitID: u.UnitID, SpaceID: space.SpaceID, RevisionNum: u.HeadRevisionNum, UpdatedAt: now },
  ]);
  await deps.store.closeChangeSet(cs, next, [start, end], marks, units);
}

const FilterFrom = new Set(FILTERABLE);

export const spaceEntityRoutes: Route[] = [
  ...crud({ kind: 'Tag', segment: 'tag', idField: 'TagID', create: CreateTag, update: UpdateTag, fields: () => ({}) }),
  ...crud({
    kind: 'ChangeSet',
    segment: 'change_set',
    idField: 'ChangeSetID',
    create: CreateChangeSet as never,
    update: UpdateChangeSet as never,
    fields: (_d, _s, body) => ({ Description: body.Description ?? '', State: 'Open' }),
    async apply(_deps, _space, item, body) {
      if (item.State === 'Closed' && body.State === 'Open') throw new Conflict(`changeset '${String(item.Slug)}' is closed and cannot be reopened; open a new one`);
      return { Description: body.Description ?? item.Description, State: body.State ?? item.State };
    },
  }),
  ...crud({
    kind: 'Filter',
    segment: 'filter',
    idField: 'FilterID',
    create: CreateFilter as never,
    update: UpdateFilter as never,
    fields(_d, _s, body) {
      const from = String(body.From);
      if (!FilterFrom.has(from)) throw new Invalid(`From '${from}' is not an entity a filter can select; one of ${FILTERABLE.join(', ')}`);
      parseWhere(String(body.Where), from);
      return { From: from, Where: body.Where };
    },
    async apply(_d, _s, item, body) {
      if (body.Where !== undefined) parseWhere(String(body.Where), String(item.From));
      return { Where: body.Where ?? item.Where };
    },
  }),
  ...crud({
    kind: 'Target',
    segment: 'target',
    idField: 'TargetID',
    create: CreateTarget as never,
    update: UpdateTarget as never,
    fields: (_d, _s, body) => ({ Facts: body.Facts ?? {} }),
    async apply(_d, _s, item, body) {
      return { Facts: patchMap((item.Facts ?? {}) as Record<string, string>, body.Facts as Record<string, string | null> | undefined) };
    },
  }),
];


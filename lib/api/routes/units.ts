import { answered, InvokeAnswer } from '../answers.ts';
import { isReadOnly } from '../../config/functions.ts';
import { requireVerb } from '../../model/entities.ts';
import { functionNames } from '../../config/functions.ts';
import type { Space, Unit } from '../../model/entities.ts';
import { adoptIntoRelease } from '../../changes/adopt.ts';
import type { Deps } from '../../ports/deps.ts';
import { createUnit, dataAt } from '../../variants/revisions.ts';
import { revisionNum } from '../../variants/revision-refs.ts';
import {
  deleteUnit,
  diffRevisions,
  invokeFunction,
  revisionReader,
  spaceRevisions,
  tagRevision,
  unitRevision,
  unitRevisions,
  updateUnit,
} from '../../variants/units.ts';
import { across, cursorPage, keyedPage, listQueries, matchingAll } from '../lists.ts';
import { pathUnit, withSpace } from '../resolve.ts';
import { listReply, route } from '../route.ts';
import {
  CreateUnit,
  DataQuery,
  DeleteWithGates,
  DiffQuery,
  InvokeFunction,
  ListQuery,
  MarkUnit,
  NoBody,
  NoQuery,
  PageQuery,
  UpdateUnit,
} from '../schemas.ts';

async function loadUnitRelations<U extends Unit>(
  deps: Deps,
  space: Space,
  units: U[],
  relations: Set<string>,
): Promise<U[]> {
  const upstream = new Map<string, Unit>();
  if (relations.has('UpstreamUnit')) {
    const spaceIds = new Set(units.map((u) => u.UpstreamSpaceID).filter((s): s is string => !!s));
    for (const id of spaceIds) for (const u of await deps.store.listUnits(id)) upstream.set(u.UnitID, u);
  }
  // A Unit's Target may live in any Space of the organization (variant create points at one in another).
  const targets = relations.has('Target')
    ? new Map(
        (
          await Promise.all(
            (await deps.store.listSpaces(space.OrganizationID)).map((s) =>
              deps.store.listInSpace<{ TargetID: string }>('Target', s.SpaceID),
            ),
          )
        )
          .flat()
          .map((t) => [t.TargetID, t]),
      )
    : undefined;
  return units.map((u) => ({
    ...u,
    ...(relations.has('Space') ? { Space: space } : {}),
    ...(u.UpstreamUnitID && upstream.has(u.UpstreamUnitID) ? { UpstreamUnit: upstream.get(u.UpstreamUnitID) } : {}),
    ...(targets && u.TargetID ? { Target: targets.get(u.TargetID) } : {}),
  }));
}

const unitPath = '/space/{space_id}/unit/{unit_id}';

export const unitRoutes = [
  route({
    method: 'GET',
    path: '/space/{space_id}/unit',
    name: 'ListUnits',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query, space }) {
      const queries = await listQueries(deps, caller, 'Unit', query, space);
      const src = {
        all: () => deps.store.listUnits(space.SpaceID),
        some: (ids: string[]) => deps.store.getMany<Unit>('Unit', space.SpaceID, ids),
        idOf: (u: Unit) => u.UnitID,
        show: (u: Unit) => withSpace(u, space),
      };
      return listReply(
        await cursorPage(deps, { scope: { spaceId: space.SpaceID }, kind: 'Unit' }, src, queries, query, (items, rel) =>
          loadUnitRelations(deps, space, items, rel),
        ),
      );
    },
  }),
  route({
    method: 'POST',
    path: '/space/{space_id}/unit',
    name: 'CreateUnit',
    query: NoQuery,
    body: CreateUnit,
    async handle({ deps, caller, body, space }) {
      return { status: 201, body: withSpace(await createUnit(deps, caller, space, body), space) };
    },
  }),
  route({
    method: 'GET',
    path: unitPath,
    name: 'GetUnit',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, params, space }) {
      const unit = await pathUnit(deps, space, params);
      return { body: withSpace(unit, space) };
    },
  }),
  route({
    method: 'PATCH',
    path: unitPath,
    name: 'UpdateUnit',
    query: NoQuery,
    body: UpdateUnit,
    async handle({ deps, caller, params, body, space }) {
      const unit = await pathUnit(deps, space, params);
      return { body: withSpace(await updateUnit(deps, caller, space, unit, body), space) };
    },
  }),
  route({
    method: 'DELETE',
    path: unitPath,
    name: 'DeleteUnit',
    query: DeleteWithGates,
    body: NoBody,
    async handle({ deps, params, query, space }) {
      const unit = await pathUnit(deps, space, params);
      return { body: await deleteUnit(deps, unit, query.force === 'true') };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/data`,
    name: 'GetUnitData',
    query: DataQuery,
    body: NoBody,
    async handle({ deps, caller, params, query, space }) {
      const unit = await pathUnit(deps, space, params);
      const num = await revisionNum(deps, caller, space, unit, query.revision ?? 'HeadRevisionNum');
      return {
        text: await dataAt(deps, unit, num),
        contentType: 'application/yaml',
        headers: { 'x-revision-num': String(num) },
      };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/revision`,
    name: 'ListRevisions',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, params, query, space }) {
      const unit = await pathUnit(deps, space, params);
      const queries = await listQueries(deps, caller, 'Revision', query, space);
      // Newest first. Asked for a page, read with DynamoDB's cursor over the Unit's revisions in that order.
      if (query.limit === undefined && query.continue === undefined)
        return listReply({
          items: (await unitRevisions(deps, unit)).filter(matchingAll(queries)).map((r) => withSpace(r, space)),
        });
      return listReply(
        await keyedPage(
          revisionReader(deps, unit, (r) => withSpace(r, space)),
          queries,
          query,
        ),
      );
    },
  }),
  route({
    method: 'GET',
    path: '/space/{space_id}/revision',
    name: 'ListSpaceRevisions',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query, space }) {
      const queries = await listQueries(deps, caller, 'Revision', query, space);
      // Unit by Unit in slug order, each newest first. Asked for a page, only the Units it walks are read, with DynamoDB's cursor.
      if (query.limit === undefined && query.continue === undefined)
        return listReply({
          items: (await spaceRevisions(deps, space)).filter(matchingAll(queries)).map((r) => withSpace(r, space)),
        });
      const units = await deps.store.listUnits(space.SpaceID);
      const readers = new Map(
        units.map((u) => [u.UnitID, revisionReader(deps, u, (r) => withSpace({ ...r, UnitSlug: u.Slug }, space))]),
      );
      return listReply(
        await keyedPage(
          across(
            'revisions',
            units,
            (u) => u.UnitID,
            (u, want, after) => readers.get(u.UnitID)!(want, after),
          ),
          queries,
          query,
        ),
      );
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/revision/{revision}`,
    name: 'GetRevision',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params, space }) {
      const unit = await pathUnit(deps, space, params);
      return { body: withSpace(await unitRevision(deps, caller, space, unit, params.revision!), space) };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/mutation`,
    name: 'ListMutations',
    query: PageQuery,
    body: NoBody,
    async handle({ deps, params, query, space }) {
      const unit = await pathUnit(deps, space, params);
      // Newest first. Asked for a page, read with DynamoDB's cursor over the Unit's mutations in that order.
      if (query.limit === undefined && query.continue === undefined)
        return { body: (await deps.store.listMutations(unit.UnitID)).reverse() };
      const read = async (want: number, after?: string) => {
        const p = await deps.store.mutationPage(unit.UnitID, want, after);
        return { items: p.items.map((x) => ({ item: x.mutation, cursor: x.cursor })), next: p.next };
      };
      return listReply(await keyedPage(read, [], query));
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/diff`,
    name: 'DiffRevisions',
    query: DiffQuery,
    body: NoBody,
    async handle({ deps, caller, params, query, space }) {
      const unit = await pathUnit(deps, space, params);
      return { body: await diffRevisions(deps, caller, space, unit, query.from, query.to) };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/tag`,
    name: 'TagRevision',
    query: NoQuery,
    body: MarkUnit,
    async handle({ deps, caller, params, body, space }) {
      const unit = await pathUnit(deps, space, params);
      const num = await revisionNum(deps, caller, space, unit, body.Revision);
      if (body.Tag.startsWith('ChangeOrder:'))
        return {
          body: await adoptIntoRelease(
            deps,
            caller,
            space,
            unit,
            body.Tag.slice('ChangeOrder:'.length),
            num,
            !!body.Move,
          ),
        };
      return { body: await tagRevision(deps, caller, space, unit, body.Tag, num, !!body.Move) };
    },
  }),
  route({
    method: 'POST',
    path: '/space/{space_id}/function/invoke',
    name: 'InvokeFunction',
    query: NoQuery,
    body: InvokeFunction,
    answer: InvokeAnswer,
    // Reading through a function needs View; one that writes needs Edit.
    access: 'View',
    async handle({ deps, caller, body, space }) {
      if (!isReadOnly(body.FunctionName)) requireVerb(caller, [space], 'Edit', `run ${body.FunctionName} there`);
      const { Results, failed } = await invokeFunction(deps, caller, space, body);
      return { status: failed ? 207 : 200, body: answered(InvokeAnswer, { Results }) };
    },
  }),
  route({
    method: 'GET',
    path: '/function',
    name: 'ListFunctions',
    query: NoQuery,
    body: NoBody,
    async handle() {
      return { body: functionNames() };
    },
  }),
];

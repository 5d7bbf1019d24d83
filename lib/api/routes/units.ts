import { diffData } from '../../config/diff.ts';
import { isReadOnly, bindArguments, runFunction } from '../../config/functions.ts';
import type { ToolchainType } from '../../config/documents.ts';
import type { Caller, Release, Space, Tag, Unit } from '../../model/entities.ts';
import { findChangeOrder } from '../changeorders.ts';
import { BatonError, Conflict, Invalid } from '../../model/errors.ts';
import { matches, parseWhere } from '../../where/index.ts';
import type { Deps } from '../deps.ts';
import { listQueries, page } from '../lists.ts';
import { findInSpace, findSpace, findUnit, spaceAndUnit, withSpace } from '../resolve.ts';
import { expectVersion, listReply, newEntity, patchMap, route } from '../route.ts';
import { DeleteWithGates, CreateUnit, DataQuery, DiffQuery, InvokeFunction, ListQuery, MarkUnit, NoBody, NoQuery, UpdateUnit } from '../schemas.ts';
import { createUnit, dataAt, revisionNum, targetId, writeData } from '../units.ts';
import { deleteUnitCascade, gated, type DeleteReport } from '../deletion.ts';

async function loadUnitRelations<U extends Unit>(deps: Deps, space: Space, units: U[], relations: Set<string>): Promise<U[]> {
  const upstream = new Map<string, Unit>();
  if (relations.has('UpstreamUnit')) {
    const spaceIds = new Set(units.map((u) => u.UpstreamSpaceID).filter((s): s is string => !!s));
    for (const id of spaceIds) for (const u of await deps.store.listUnits(id)) upstream.set(u.UnitID, u);
  }
  // A Unit's Target may live in any Space of the organization (variant create points at one in another).
  const targets = relations.has('Target')
    ? new Map((await Promise.all((await deps.store.listSpaces(space.OrganizationID)).map((s) => deps.store.listInSpace<{ TargetID: string }>('Target', s.SpaceID)))).flat().map((t) => [t.TargetID, t]))
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
    async handle({ deps, caller, params, query }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const queries = await listQueries(deps, caller, 'Unit', query, space);
      const units = (await deps.store.listUnits(space.SpaceID)).map((u) => withSpace(u, space));
      return listReply(await page(units, queries, query, (items, rel) => loadUnitRelations(deps, space, items, rel)));
    },
  }),
  route({
    method: 'POST',
    path: '/space/{space_id}/unit',
    name: 'CreateUnit',
    query: NoQuery,
    body: CreateUnit,
    async handle({ deps, caller, params, body }) {
      const space = await findSpace(deps, caller, params.space_id!);
      return { status: 201, body: await createUnit(deps, caller, space, body) };
    },
  }),
  route({
    method: 'GET',
    path: unitPath,
    name: 'GetUnit',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      return { body: (await spaceAndUnit(deps, caller, params)).unit };
    },
  }),
  route({
    method: 'PATCH',
    path: unitPath,
    name: 'UpdateUnit',
    query: NoQuery,
    body: UpdateUnit,
    async handle({ deps, caller, params, body }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      expectVersion(`unit '${unit.Slug}'`, unit.Version, body.Version);
      const meta: Partial<Unit> = {
        Slug: body.Slug ?? unit.Slug,
        DisplayName: body.DisplayName ?? unit.DisplayName,
        Labels: patchMap(unit.Labels, body.Labels),
        Annotations: patchMap(unit.Annotations, body.Annotations),
        TargetID: body.TargetID === undefined ? unit.TargetID : await targetId(deps, caller, space, body.TargetID),
      };
      if (body.Data !== undefined) {
        const r = await writeData(deps, caller, space, unit, body.Data, { source: 'Update', description: body.LastChangeDescription, changeSetRef: body.ChangeSetID }, meta);
        return { body: r.unit };
      }
      const next: Unit = { ...unit, ...meta, UpdatedAt: deps.now().toISOString(), Version: unit.Version + 1 };
      delete next.SpaceSlug;
      await deps.store.updateUnit(next, unit.Version, unit.Slug);
      return { body: withSpace(next, space) };
    },
  }),
  route({
    method: 'DELETE',
    path: unitPath,
    name: 'DeleteUnit',
    query: DeleteWithGates,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const { unit } = await spaceAndUnit(deps, caller, params);
      if (unit.ChangeSetID) throw new Conflict(`unit '${unit.Slug}' is locked by an open changeset; close it first`);
      const gates = gated([unit]);
      if (gates.length && query.force !== 'true') throw new Conflict(`unit ${gates[0]} has a delete gate; use --force to delete past it`);
      const report: DeleteReport = { DeletedUnits: [], RemovedLinks: [] };
      await deleteUnitCascade(deps, unit, report);
      return { body: report };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/data`,
    name: 'GetUnitData',
    query: DataQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      const num = await revisionNum(deps, caller, space, unit, query.revision ?? 'HeadRevisionNum');
      return { text: await dataAt(deps, unit, num), contentType: 'application/yaml', headers: { 'x-revision-num': String(num) } };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/revision`,
    name: 'ListRevisions',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      const [revisions, marks] = await Promise.all([deps.store.listRevisions(unit.UnitID), deps.store.marksOfUnit(unit.UnitID)]);
      const queries = query.where ? [parseWhere(query.where, 'Revision')] : [];
      // A revision carries each ChangeOrder whose interval on this unit, (start, end], holds it.
      const intervals = new Map<string, { start?: number; end?: number }>();
      for (const m of marks) {
        if (!m.ChangeOrderID || (m.Role !== 'start' && m.Role !== 'end')) continue;
        const i = intervals.get(m.ChangeOrderID) ?? {};
        i[m.Role] = m.RevisionNum;
        intervals.set(m.ChangeOrderID, i);
      }
      const carried = (n: number) => Object.fromEntries([...intervals].filter(([, i]) => i.start !== undefined && i.end !== undefined && i.start < n && n <= i.end).map(([id]) => [id, '']));
      const out = revisions
        .map((r) => ({ ...r, SpaceSlug: space.Slug, Tags: Object.fromEntries(marks.filter((m) => m.RevisionNum === r.RevisionNum).map((m) => [m.TagID, ''])), ChangeOrders: carried(r.RevisionNum) }))
        .filter((r) => queries.every((q) => matches(q, r)))
        .reverse();
      return { body: query.limit ? out.slice(0, query.limit) : out };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/revision/{revision}`,
    name: 'GetRevision',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      const num = await revisionNum(deps, caller, space, unit, params.revision!);
      const rev = (await deps.store.getRevision(unit.UnitID, num))!;
      const marks = await deps.store.marksOfUnit(unit.UnitID);
      const { Data: _data, ...meta } = rev;
      return { body: { ...meta, SpaceSlug: space.Slug, Tags: Object.fromEntries(marks.filter((m) => m.RevisionNum === num).map((m) => [m.TagID, ''])) } };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/mutation`,
    name: 'ListMutations',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const { unit } = await spaceAndUnit(deps, caller, params);
      return { body: (await deps.store.listMutations(unit.UnitID)).reverse() };
    },
  }),
  route({
    method: 'GET',
    path: `${unitPath}/diff`,
    name: 'DiffRevisions',
    query: DiffQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      const from = query.from === 0 ? 0 : await revisionNum(deps, caller, space, unit, query.from);
      const to = await revisionNum(deps, caller, space, unit, query.to ?? unit.HeadRevisionNum);
      const [a, b] = await Promise.all([dataAt(deps, unit, from), dataAt(deps, unit, to)]);
      return { body: { UnitID: unit.UnitID, FromRevisionNum: from, ToRevisionNum: to, Changes: diffData(unit.ToolchainType as ToolchainType, a, b) } };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/tag`,
    name: 'TagRevision',
    query: NoQuery,
    body: MarkUnit,
    async handle({ deps, caller, params, body }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      const num = await revisionNum(deps, caller, space, unit, body.Revision);
      if (body.Tag.startsWith('ChangeOrder:')) return { body: await adoptIntoRelease(deps, caller, space, unit, body.Tag.slice('ChangeOrder:'.length), num, !!body.Move) };
      const tag = await findOrCreateTag(deps, caller, space, body.Tag);
      if (tag.ChangeSetID) throw new Conflict(`tag '${tag.Slug}' belongs to a changeset; its marks are set by the changeset`);
      const existing = (await deps.store.marksOfUnit(unit.UnitID)).find((m) => m.TagID === tag.TagID);
      if (existing && existing.RevisionNum !== num && !body.Move) {
        throw new Conflict(`tag '${tag.Slug}' already marks revision ${existing.RevisionNum} of unit '${unit.Slug}'; use --move to move it to ${num}`);
      }
      if (existing?.RevisionNum !== num) await deps.store.putMark({ TagID: tag.TagID, UnitID: unit.UnitID, SpaceID: space.SpaceID, RevisionNum: num, Move: !!existing });
      return { body: { TagID: tag.TagID, TagSlug: tag.Slug, UnitID: unit.UnitID, SpaceID: space.SpaceID, RevisionNum: num } };
    },
  }),
  route({
    method: 'POST',
    path: '/space/{space_id}/function/invoke',
    name: 'InvokeFunction',
    query: NoQuery,
    body: InvokeFunction,
    async handle({ deps, caller, params, body }) {
      const space = await findSpace(deps, caller, params.space_id!);
      bindArguments(body.FunctionName, body.Arguments);
      let units: Unit[];
      if (body.UnitIDs?.length) {
        units = [];
        for (const ref of body.UnitIDs) units.push(await findUnit(deps, space, ref));
        const other = units.find((u) => u.ToolchainType !== 'Kubernetes/YAML');
        if (other) throw new Invalid(`unit '${other.Slug}' is ${other.ToolchainType}; ${body.FunctionName} works on Kubernetes/YAML units`);
      } else {
        const q = body.Where ? parseWhere(body.Where, 'Unit') : undefined;
        units = (await deps.store.listUnits(space.SpaceID)).map((u) => withSpace(u, space)).filter((u) => u.ToolchainType === 'Kubernetes/YAML' && (!q || matches(q, u)));
        units.sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
      }
      // Every unit is computed before anything is written: a function that fails on one writes on none.
      const runs = await Promise.all(
        units.map(async (unit) => {
          const head = await dataAt(deps, unit, unit.HeadRevisionNum);
          return { unit, head, result: runFunction(body.FunctionName, body.Arguments, head) };
        }),
      );
      if (isReadOnly(body.FunctionName)) {
        return { body: { Results: runs.map(({ unit, result }) => ({ UnitID: unit.UnitID, UnitSlug: unit.Slug, RevisionNum: unit.HeadRevisionNum, Output: result.output })) } };
      }
      const results = [];
      let failed = 0;
      for (const { unit, head, result } of runs) {
        if (body.DryRun) {
          results.push({ UnitID: unit.UnitID, UnitSlug: unit.Slug, Changed: result.data !== head, Changes: diffData('Kubernetes/YAML', head, result.data) });
          continue;
        }
        try {
          const w = await writeData(deps, caller, space, unit, result.data, {
            source: 'FunctionInvocation',
            description: body.ChangeDescription,
            functionInvocation: { FunctionName: body.FunctionName, Arguments: body.Arguments },
            protect: body.Protect ? result.written : [],
            changeSetRef: body.ChangeSetID,
          },
          {},
          head,
          );
          results.push({ UnitID: unit.UnitID, UnitSlug: unit.Slug, Changed: w.revision !== undefined, RevisionNum: w.unit.HeadRevisionNum });
        } catch (e) {
          if (!(e instanceof BatonError) || units.length === 1) throw e;
          failed++;
          results.push({ UnitID: unit.UnitID, UnitSlug: unit.Slug, Changed: false, Error: { Code: e.code, Message: e.message } });
        }
      }
      return { status: failed ? 207 : 200, body: { Results: results } };
    },
  }),
];

/** A Tag named `slug` or `space/slug`; a plain slug not yet in the Space is created there. */
async function findOrCreateTag(deps: Deps, caller: Caller, space: Space, ref: string): Promise<Tag> {
  try {
    return (await findInSpace<Tag>(deps, caller, space, 'Tag', ref)).item;
  } catch (e) {
    if (ref.includes('/') || !(e instanceof BatonError) || e.status !== 404) throw e;
  }
  const tag: Tag = { ...newEntity(deps, caller.OrganizationID, { Slug: ref }), SpaceID: space.SpaceID, TagID: deps.newId() };
  await deps.store.createInSpace('Tag', tag);
  return tag;
}

/**
 * Moves a ChangeOrder's release Tag on one Unit to adopt a later fix. It cannot move before where the
 * change landed or what is released, nor onto a revision with validation errors, and once a Release
 * in the Space was published at it, its marks there are fixed.
 */
async function adoptIntoRelease(deps: Deps, caller: Caller, space: Space, unit: Unit, ref: string, num: number, move: boolean) {
  const { co } = await findChangeOrder(deps, caller, space, ref);
  const marks = await deps.store.marksOfUnit(unit.UnitID);
  const end = marks.find((m) => m.TagID === co.EndTagID);
  const publish = marks.find((m) => m.TagID === co.PublishTagID);
  if (!end || !publish) throw new Conflict(`unit '${unit.Slug}' has not taken change order '${co.Slug}'`);
  if (!move && publish.RevisionNum !== num) throw new Conflict(`change order '${co.Slug}' already marks revision ${publish.RevisionNum} of unit '${unit.Slug}' for release; use --move to move it to ${num}`);
  if (num < end.RevisionNum) throw new Conflict(`the release tag of '${co.Slug}' cannot move before where the change landed (revision ${end.RevisionNum})`);
  if (num < unit.LastReleasedRevisionNum) throw new Conflict(`the release tag of '${co.Slug}' cannot move before what is released (revision ${unit.LastReleasedRevisionNum})`);
  const rev = await deps.store.getRevision(unit.UnitID, num);
  if (rev && Object.keys(rev.ValidationErrors ?? {}).length) throw new Conflict(`revision ${num} of unit '${unit.Slug}' has validation errors: ${Object.values(rev.ValidationErrors!).join('; ')}`);
  const released = (await deps.store.listInSpace<Release>('Release', space.SpaceID)).find((r) => r.ChangeOrderID === co.ChangeOrderID && r.Published);
  if (released) throw new Conflict(`release ${released.ReleaseNum} of space '${space.Slug}' was published at change order '${co.Slug}': its release tag there is fixed`);
  if (publish.RevisionNum !== num) await deps.store.transact([{ op: 'put', kind: 'Mark', item: { ...publish, RevisionNum: num, UpdatedAt: deps.now().toISOString() } }]);
  return { TagID: co.PublishTagID, TagSlug: `${co.Slug}-co-publish`, UnitID: unit.UnitID, SpaceID: space.SpaceID, RevisionNum: num };
}

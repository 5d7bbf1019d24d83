import type { ToolchainType } from '../../config/documents.ts';
import { mergeData } from '../../config/merge.ts';
import type { Caller, Component, Link, Space, Unit } from '../../model/entities.ts';
import { BatonError, Conflict, Invalid, NotFound } from '../../model/errors.ts';
import type { Deps } from '../deps.ts';
import { listQueries, page } from '../lists.ts';
import type { StoreOp } from '../ports.ts';
import { findInSpace, findSpace, findUnit, findUnitRef, spaceAndUnit, withSpace } from '../resolve.ts';
import { listReply, newEntity, route } from '../route.ts';
import { CreateLink, CreateVariant, ListQuery, NoBody, NoQuery, Promote, ResolveConflicts, RestoreUnit, RevertUnit, UpgradeUnit, UploadVariant } from '../schemas.ts';
import { dataAt, newUnit, revisionNum, writeData } from '../units.ts';
import { applyConflicts, bounded, cloneOps, copyLinksOps, isStale, mergeInto, upgradeUnit, type UnitResult } from '../variants.ts';
import { releaseTargetId } from './spaces.ts';
import { findChangeOrder, promoteChangeOrder, upgradeUnitWithChangeOrder } from '../changeorders.ts';

/** Spaces cloned or promoted at once. */
const CONCURRENCY = 8;
/** The labels a variant takes from its upstream. */
const INHERITED = ['Component', 'Stage', 'Environment', 'Region'] as const;

const unitPath = '/space/{space_id}/unit/{unit_id}';


function failed(unit: Unit, space: Space, e: unknown): UnitResult {
  if (!(e instanceof BatonError)) throw e;
  return { UnitID: unit.UnitID, UnitSlug: unit.Slug, SpaceID: space.SpaceID, Action: 'Failed', Error: { Code: e.code, Message: e.message } };
}

/** Links with `Stale` derived from their upstream's head now. */
async function withStale(deps: Deps, links: Link[]): Promise<Link[]> {
  return Promise.all(
    links.map(async (l) => {
      const up = await deps.store.getUnit(l.ToSpaceID, l.ToUnitID);
      return { ...l, Stale: isStale(l, up) };
    }),
  );
}

async function findComponentOrNew(deps: Deps, caller: Caller, slug: string): Promise<{ component: Component; ops: StoreOp[] }> {
  const id = await deps.store.resolveSlug(`ORG#${caller.OrganizationID}`, 'component', slug);
  const existing = id ? await deps.store.getComponent(caller.OrganizationID, id) : undefined;
  if (existing) return { component: existing, ops: [] };
  const component: Component = { ...newEntity(deps, caller.OrganizationID, { Slug: slug }), ComponentID: deps.newId(), AllowedChangeWorkflowIDs: [], ChangeWorkflowRequired: false };
  return { component, ops: [{ op: 'create', kind: 'Component', item: component }] };
}

function newSpace(deps: Deps, caller: Caller, fields: Partial<Space> & { Slug: string }): Space {
  return { ...newEntity(deps, caller.OrganizationID, fields), SpaceID: deps.newId(), ...fields };
}

export const variantRoutes = [
  route({
    method: 'POST',
    path: '/variant/upload',
    name: 'UploadVariant',
    query: NoQuery,
    body: UploadVariant,
    async handle({ deps, caller, body }) {
      const { component, ops } = await findComponentOrNew(deps, caller, body.Component);
      const labels: Record<string, string> = { ...body.SpaceLabels, Component: body.Component, Variant: body.Variant };
      if (body.Stage) labels.Stage = body.Stage;
      if (body.Environment) labels.Environment = body.Environment;
      if (body.Region) labels.Region = body.Region;
      const space = newSpace(deps, caller, { Slug: `${body.Component}-${body.Variant}`, ComponentID: component.ComponentID, Labels: labels });
      const seen = new Set<string>();
      const units: Unit[] = [];
      ops.push({ op: 'create', kind: 'Space', item: space });
      for (const u of body.Units) {
        if (seen.has(u.Slug)) throw new Invalid(`two files make unit '${u.Slug}'; unit slugs must be unique in a space`);
        seen.add(u.Slug);
        const created = newUnit(deps, caller, space, { Slug: u.Slug, ToolchainType: u.ToolchainType }, u.Data, { source: 'Upload', description: `upload of ${u.Slug}` });
        ops.push({ op: 'create', kind: 'Unit', item: created.unit }, ...created.ops);
        units.push(withSpace(created.unit, space));
      }
      // One transaction: the component (when new), the space and every unit land together or not at all.
      await deps.store.transact(ops);
      return { status: 201, body: { Component: component, Space: space, Units: units } };
    },
  }),
  route({
    method: 'POST',
    path: '/variant',
    name: 'CreateVariant',
    query: NoQuery,
    body: CreateVariant,
    async handle({ deps, caller, body }) {
      const upstream = await findSpace(deps, caller, body.UpstreamSpaceID);
      const labels: Record<string, string> = {};
      for (const k of INHERITED) if (upstream.Labels[k]) labels[k] = upstream.Labels[k]!;
      const component = labels.Component ?? (upstream.ComponentID ? (await deps.store.getComponent(caller.OrganizationID, upstream.ComponentID))?.Slug : undefined);
      if (body.Stage) labels.Stage = body.Stage;
      if (body.Environment) labels.Environment = body.Environment;
      if (body.Region) labels.Region = body.Region;
      if (body.Namespace) labels.Namespace = body.Namespace;
      Object.assign(labels, body.SpaceLabels, { Variant: body.Name });
      const slug = body.Slug ?? (component ? `${component}-${body.Name}` : body.Name);
      const targetId = await releaseTargetId(deps, caller, body.ReleaseTargetID);
      const space = newSpace(deps, caller, { Slug: slug, Labels: labels, ComponentID: upstream.ComponentID, UpstreamSpaceID: upstream.SpaceID, ReleaseTargetID: targetId });
      await deps.store.createSpace(space);
      const [listed, upLinks] = await Promise.all([deps.store.listUnits(upstream.SpaceID), deps.store.listInSpace<Link>('Link', upstream.SpaceID)]);
      const upUnits = listed.sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
      const gates = body.UnitDeleteGates?.length ? Object.fromEntries(body.UnitDeleteGates.map((g) => [g, ''])) : undefined;
      const clones = await Promise.all(upUnits.map((u) => cloneOps(deps, caller, space, u, { namespace: body.Namespace, targetId, deleteGates: gates })));
      const byUpstream = new Map(clones.map((c, i) => [upUnits[i]!.UnitID, c.unit]));
      const linkOps = copyLinksOps(deps, caller, space, upLinks, byUpstream, new Set(clones.map((c) => c.link.Slug)));
      const results = await bounded(clones, CONCURRENCY, async (c) => {
        try {
          await deps.store.transact(c.ops);
          return { UnitID: c.unit.UnitID, UnitSlug: c.unit.Slug, SpaceID: space.SpaceID, Action: 'Clone', RevisionNums: [c.unit.HeadRevisionNum] } as UnitResult;
        } catch (e) {
          return failed(c.unit, space, e);
        }
      });
      if (linkOps.length) await deps.store.transact(linkOps);
      const failures = results.filter((r) => r.Action === 'Failed').length;
      return { status: failures ? 207 : 201, body: { Space: space, Units: results } };
    },
  }),
  route({
    method: 'POST',
    path: '/promote',
    name: 'Promote',
    query: NoQuery,
    body: Promote,
    async handle({ deps, caller, body }) {
      if (body.ChangeOrderID) {
        if (body.Squash) throw new Invalid('Squash does not apply to a change order promotion: its range is replayed as the change made it');
        const { co, base } = await findChangeOrder(deps, caller, undefined, body.ChangeOrderID);
        const r = await promoteChangeOrder(deps, caller, co, base, {
          targetStage: body.TargetStage,
          spaces: [...(body.Spaces ?? []), ...(body.Space ? [body.Space] : [])],
          whereSpace: body.WhereSpace,
          dryRun: body.DryRun,
          priorRevisions: body.PriorRevisions,
          force: body.Force,
          forceReason: body.ForceReason,
        });
        return { status: r.status, body: r.body };
      }
      if (!body.Space) throw new Invalid('name the Space to promote, or a ChangeOrderID');
      for (const k of ['TargetStage', 'Spaces', 'WhereSpace', 'PriorRevisions', 'Force', 'ForceReason'] as const) {
        if (body[k] !== undefined) throw new Invalid(`${k} applies only to a change order promotion`);
      }
      const space = await findSpace(deps, caller, body.Space);
      if (!space.UpstreamSpaceID) throw new Invalid(`space '${space.Slug}' has no upstream space to promote from; it was not made by cub variant create`);
      const upstream = await deps.store.getSpace(caller.OrganizationID, space.UpstreamSpaceID);
      if (!upstream) throw new NotFound(`the upstream space of '${space.Slug}' no longer exists`);
      const [units, upUnits, upLinks, links] = await Promise.all([
        deps.store.listUnits(space.SpaceID),
        deps.store.listUnits(upstream.SpaceID),
        deps.store.listInSpace<Link>('Link', upstream.SpaceID),
        deps.store.listInSpace<Link>('Link', space.SpaceID),
      ]);
      const have = new Set(units.map((u) => u.UpstreamUnitID).filter(Boolean));
      const slugs = new Set(units.map((u) => u.Slug));
      const missing = upUnits.filter((u) => !have.has(u.UnitID) && !slugs.has(u.Slug));
      const results: UnitResult[] = await bounded(units, CONCURRENCY, async (u) => {
        if (!links.some((l) => l.FromUnitID === u.UnitID && (l.UpdateType === 'UpgradeUnit' || l.UpdateType === 'MergeUnits'))) {
          return { UnitID: u.UnitID, UnitSlug: u.Slug, SpaceID: space.SpaceID, Action: 'Unchanged' } as UnitResult;
        }
        try {
          return await upgradeUnit(deps, caller, space, withSpace(u, space), { dryRun: body.DryRun, squash: body.Squash });
        } catch (e) {
          return failed(u, space, e);
        }
      });
      // New clones take the delete gates the variant's units were given when it was created.
      const gates = units.find((u) => u.DeleteGates && Object.keys(u.DeleteGates).length)?.DeleteGates;
      const clones = await Promise.all(missing.map((u) => cloneOps(deps, caller, space, u, { namespace: space.Labels.Namespace, targetId: space.ReleaseTargetID, deleteGates: gates })));
      for (const c of clones) {
        const r: UnitResult = { UnitID: c.unit.UnitID, UnitSlug: c.unit.Slug, SpaceID: space.SpaceID, Action: 'Clone', RevisionNums: [c.unit.HeadRevisionNum] };
        if (!body.DryRun) {
          try {
            await deps.store.transact(c.ops);
          } catch (e) {
            results.push(failed(c.unit, space, e));
            continue;
          }
        }
        results.push(r);
      }
      if (!body.DryRun && clones.length) {
        const byUpstream = new Map(clones.map((c, i) => [missing[i]!.UnitID, c.unit]));
        for (const u of units) if (u.UpstreamUnitID) byUpstream.set(u.UpstreamUnitID, u);
        const linkOps = copyLinksOps(deps, caller, space, upLinks.filter((l) => missing.some((m) => m.UnitID === l.FromUnitID)), byUpstream, new Set(links.map((l) => l.Slug)));
        if (linkOps.length) await deps.store.transact(linkOps);
      }
      const failures = results.filter((r) => r.Action === 'Failed').length;
      return { status: failures ? (failures === results.length ? 409 : 207) : 200, body: { SpaceID: space.SpaceID, SpaceSlug: space.Slug, DryRun: !!body.DryRun, Units: results } };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/upgrade`,
    name: 'UpgradeUnit',
    query: NoQuery,
    body: UpgradeUnit,
    async handle({ deps, caller, params, body }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      if (body.ChangeOrderID) {
        const { co } = await findChangeOrder(deps, caller, space, body.ChangeOrderID);
        const r = await upgradeUnitWithChangeOrder(deps, caller, co, space, unit, { dryRun: body.DryRun, priorRevisions: body.PriorRevisions });
        return { body: r };
      }
      if (!body.MergeSourceID) {
        if (body.MergeBaseRevisionNum !== undefined || body.MergeEndRevisionNum !== undefined) throw new Invalid('MergeBaseRevisionNum and MergeEndRevisionNum need MergeSourceID');
        return { body: await upgradeUnit(deps, caller, space, unit, { squash: body.Squash, dryRun: body.DryRun }) };
      }
      const { unit: source } = await findUnitRef(deps, caller, space, body.MergeSourceID);
      const link = (await deps.store.listInSpace<Link>('Link', space.SpaceID)).find((l) => l.FromUnitID === unit.UnitID && l.ToUnitID === source.UnitID);
      const base = body.MergeBaseRevisionNum ?? link?.UpstreamLastMergedRevisionNum ?? 0;
      const end = body.MergeEndRevisionNum ?? source.HeadRevisionNum;
      return { body: await mergeInto(deps, caller, space, unit, { source, base, end, link, squash: body.Squash, dryRun: body.DryRun }) };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/restore`,
    name: 'RestoreUnit',
    query: NoQuery,
    body: RestoreUnit,
    async handle({ deps, caller, params, body }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      const num = await revisionNum(deps, caller, space, unit, body.Revision);
      const w = await writeData(deps, caller, space, unit, await dataAt(deps, unit, num), { source: 'Restore', description: body.ChangeDescription ?? `restore revision ${num}`, restoredRevisionNum: num });
      return { body: { ...w.unit, RestoredRevisionNum: num, Changed: w.revision !== undefined } };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/revert`,
    name: 'RevertUnit',
    query: NoQuery,
    body: RevertUnit,
    async handle({ deps, caller, params, body }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      const [a, b] = body.Range.split(/-|\.\./).map(Number) as [number, number | undefined];
      const from = a;
      const to = b ?? a;
      if (from < 1 || to < from || to > unit.HeadRevisionNum) throw new Invalid(`revert range ${body.Range} must lie within revisions 1..${unit.HeadRevisionNum}, first before last`);
      const [before, after, head] = await Promise.all([dataAt(deps, unit, from - 1), dataAt(deps, unit, to), dataAt(deps, unit, unit.HeadRevisionNum)]);
      // Take the range out: merge its inverse (after → before) into the head; later changes stay.
      const reverted = mergeData(unit.ToolchainType as ToolchainType, after, before, head, []);
      const w = await writeData(deps, caller, space, unit, reverted.data, { source: 'Revert', description: body.ChangeDescription ?? `revert revisions ${from}..${to}` });
      return { body: { ...w.unit, Changed: w.revision !== undefined } };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/conflicts`,
    name: 'ResolveConflicts',
    query: NoQuery,
    body: ResolveConflicts,
    async handle({ deps, caller, params, body }) {
      const { space, unit } = await spaceAndUnit(deps, caller, params);
      if (body.Action === 'Apply') return { body: await applyConflicts(deps, caller, space, unit, !!body.DryRun) };
      if (!unit.Conflicts.length) throw new Conflict(`unit '${unit.Slug}' has no conflicts to dismiss`);
      if (body.DryRun) return { body: { unit, Changes: [] } };
      const next: Unit = { ...unit, Conflicts: [], Version: unit.Version + 1, UpdatedAt: deps.now().toISOString() };
      delete next.SpaceSlug;
      await deps.store.updateUnit(next, unit.Version, unit.Slug);
      return { body: { unit: withSpace(next, space), Changes: [] } };
    },
  }),
  route({
    method: 'GET',
    path: '/space/{space_id}/link',
    name: 'ListLinks',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const queries = await listQueries(deps, caller, 'Link', query, space);
      const links = (await withStale(deps, await deps.store.listInSpace<Link>('Link', space.SpaceID))).map((l) => withSpace(l, space));
      return listReply(await page(links, queries, query));
    },
  }),
  route({
    method: 'GET',
    path: '/space/{space_id}/link/{link_id}',
    name: 'GetLink',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const { item } = await findInSpace<Link>(deps, caller, space, 'Link', params.link_id!);
      return { body: (await withStale(deps, [item]))[0] };
    },
  }),
  route({
    method: 'POST',
    path: '/space/{space_id}/link',
    name: 'CreateLink',
    query: NoQuery,
    body: CreateLink,
    async handle({ deps, caller, params, body }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const from = await findUnit(deps, space, body.FromUnitID);
      const toHome = body.ToSpaceID ? await findSpace(deps, caller, body.ToSpaceID) : space;
      const { unit: to, space: toSpace } = await findUnitRef(deps, caller, toHome, body.ToUnitID);
      if (to.UnitID === from.UnitID) throw new Invalid('a link cannot point a unit at itself');
      const merging = body.UpdateType === 'UpgradeUnit' || body.UpdateType === 'MergeUnits';
      if (merging && body.Protect) throw new Invalid(`Protect is not allowed on ${body.UpdateType} links; protect paths with --protect on the writes instead`);
      if (body.UpdateType === 'TransformPaths' && (!body.UpstreamPaths?.length || !body.DownstreamSetters?.length)) throw new Invalid('a TransformPaths link needs UpstreamPaths and DownstreamSetters');
      for (const s of body.DownstreamSetters ?? []) {
        for (const p of s.Parameters) if (!body.UpstreamPaths?.some((u) => u.Name === p)) throw new Invalid(`DownstreamSetters parameter '${p}' is not one of the UpstreamPaths`);
      }
      if (merging && from.ToolchainType !== to.ToolchainType) throw new Invalid(`cannot merge ${to.ToolchainType} unit '${to.Slug}' into ${from.ToolchainType} unit '${from.Slug}'`);
      const existing = await deps.store.listInSpace<Link>('Link', space.SpaceID);
      if (body.UpdateType === 'UpgradeUnit' && existing.some((l) => l.FromUnitID === from.UnitID && l.UpdateType === 'UpgradeUnit')) {
        throw new Conflict(`unit '${from.Slug}' already has an UpgradeUnit link; a unit has one upstream`);
      }
      const now = deps.now().toISOString();
      const link: Link = {
        OrganizationID: caller.OrganizationID,
        SpaceID: space.SpaceID,
        LinkID: deps.newId(),
        Slug: body.Slug ?? `${from.Slug}-to-${toSpace.Slug}-${to.Slug}`.slice(0, 128).replace(/[-_]+$/, ''),
        DisplayName: body.DisplayName,
        Labels: body.Labels ?? {},
        Annotations: body.Annotations ?? {},
        FromUnitID: from.UnitID,
        ToUnitID: to.UnitID,
        ToSpaceID: toSpace.SpaceID,
        UpdateType: body.UpdateType,
        AutoUpdate: body.AutoUpdate,
        Protect: body.Protect,
        Squash: body.Squash,
        UpstreamLastMergedRevisionNum: 0,
        DownstreamLastMergedRevisionNum: 0,
        UpstreamPaths: body.UpstreamPaths,
        DownstreamSetters: body.DownstreamSetters,
        CreatedAt: now,
        UpdatedAt: now,
        Version: 1,
      };
      const ops: StoreOp[] = [{ op: 'create', kind: 'Link', item: link }];
      if (body.UpdateType === 'UpgradeUnit') {
        const next = { ...from, UpstreamUnitID: to.UnitID, UpstreamSpaceID: toSpace.SpaceID, UpstreamRevisionNum: 0, Version: from.Version + 1, UpdatedAt: now };
        delete (next as Partial<Unit>).SpaceSlug;
        ops.push({ op: 'update', kind: 'Unit', item: next, expectedVersion: from.Version });
      }
      await deps.store.transact(ops);
      return { status: 201, body: { ...withSpace(link, space), Stale: isStale(link, to) } };
    },
  }),
  route({
    method: 'DELETE',
    path: '/space/{space_id}/link/{link_id}',
    name: 'DeleteLink',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const { item } = await findInSpace<Link>(deps, caller, space, 'Link', params.link_id!);
      const ops: StoreOp[] = [{ op: 'delete', kind: 'Link', item }];
      const from = await deps.store.getUnit(space.SpaceID, item.FromUnitID);
      if (item.UpdateType === 'UpgradeUnit' && from?.UpstreamUnitID === item.ToUnitID) {
        const next = { ...from, UpstreamUnitID: undefined, UpstreamSpaceID: undefined, Version: from.Version + 1, UpdatedAt: deps.now().toISOString() };
        ops.push({ op: 'update', kind: 'Unit', item: next, expectedVersion: from.Version });
      }
      await deps.store.transact(ops);
      return { status: 204 };
    },
  }),
];

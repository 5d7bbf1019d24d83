import type { Caller, Link, LinkUpdateType, LinkView, Space, Unit } from '../model/entities.ts';
import { functionParams, isReadOnly } from '../config/functions.ts';
import { Conflict, Invalid } from '../model/errors.ts';
import type { StoreOp } from '../ports/store.ts';
import { findSpace, findUnit, findUnitRef } from './lookup.ts';
import { isStale } from './merge.ts';
import type { UnitDeps } from './ports.ts';

/** Links with `Stale` derived from their upstream's head now. */
export async function withStale(deps: UnitDeps, links: Link[]): Promise<LinkView[]> {
  return Promise.all(
    links.map(async (l) => {
      const up = await deps.store.getUnit(l.ToSpaceID, l.ToUnitID);
      return { ...l, Stale: isStale(l, up) };
    }),
  );
}

/** What a person gives to link a Unit of a Space to an upstream Unit. */
export interface CreateLinkInput extends Pick<
  Link,
  'UpdateType' | 'AutoUpdate' | 'Protect' | 'Squash' | 'UpstreamPaths' | 'DownstreamSetters' | 'DisplayName'
> {
  Slug?: string;
  Labels?: Record<string, string>;
  Annotations?: Record<string, string>;
  FromUnitID: string;
  ToUnitID: string;
  ToSpaceID?: string;
  UpdateType: LinkUpdateType;
}

/**
 * The document of a Link that carries values (TransformPaths, Insert) or resources (Upsert): what it
 * reads and what it sets must make sense before it is saved. Other Links carry neither.
 */
function checkCarrying(body: Pick<Link, 'UpdateType' | 'UpstreamPaths' | 'DownstreamSetters'>): void {
  const t = body.UpdateType;
  const paths = body.UpstreamPaths ?? [];
  const setters = body.DownstreamSetters ?? [];
  if (t !== 'TransformPaths' && t !== 'Insert' && t !== 'Upsert') {
    if (paths.length || setters.length)
      throw new Invalid(
        `UpstreamPaths and DownstreamSetters belong to TransformPaths, Insert and Upsert links, not ${t}`,
      );
    return;
  }
  if (t !== 'Upsert' && (!paths.length || !setters.length))
    throw new Invalid(`a ${t} link needs UpstreamPaths and DownstreamSetters`);
  const names = new Set<string>();
  for (const p of paths) {
    if (names.has(p.Name)) throw new Invalid(`UpstreamPaths name '${p.Name}' twice`);
    names.add(p.Name);
    if (!p.Path && t === 'TransformPaths')
      throw new Invalid(`UpstreamPaths '${p.Name}' needs a Path: a TransformPaths link reads single values`);
    if (!p.Path && !p.Resource) throw new Invalid(`UpstreamPaths '${p.Name}' needs a Path or a Resource`);
  }
  for (const s of setters) {
    functionParams(s.FunctionInvocation.FunctionName);
    if (isReadOnly(s.FunctionInvocation.FunctionName))
      throw new Invalid(
        `DownstreamSetters function '${s.FunctionInvocation.FunctionName}' only reads; a setter must write`,
      );
    for (const p of s.Parameters) {
      const u = paths.find((x) => x.Name === p);
      if (!u) throw new Invalid(`DownstreamSetters parameter '${p}' is not one of the UpstreamPaths`);
      if (!u.Path && t === 'Upsert')
        throw new Invalid(`DownstreamSetters parameter '${p}' reads no value: UpstreamPaths '${p}' has no Path`);
    }
  }
}

/** Links a Unit to an upstream Unit; an UpgradeUnit Link also makes that Unit its upstream, in the same transaction. */
export async function createLink(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  body: CreateLinkInput,
): Promise<LinkView> {
  const from = await findUnit(deps, space, body.FromUnitID);
  const toHome = body.ToSpaceID ? await findSpace(deps, caller, body.ToSpaceID) : space;
  const { unit: to, space: toSpace } = await findUnitRef(deps, caller, toHome, body.ToUnitID);
  if (to.UnitID === from.UnitID) throw new Invalid('a link cannot point a unit at itself');
  const merging = body.UpdateType === 'UpgradeUnit' || body.UpdateType === 'MergeUnits';
  if (merging && body.Protect)
    throw new Invalid(
      `Protect is not allowed on ${body.UpdateType} links; protect paths with --protect on the writes instead`,
    );
  checkCarrying(body);
  if (merging && from.ToolchainType !== to.ToolchainType)
    throw new Invalid(
      `cannot merge ${to.ToolchainType} unit '${to.Slug}' into ${from.ToolchainType} unit '${from.Slug}'`,
    );
  const existing = await deps.store.listInSpace<Link>('Link', space.SpaceID);
  if (
    body.UpdateType === 'UpgradeUnit' &&
    existing.some((l) => l.FromUnitID === from.UnitID && l.UpdateType === 'UpgradeUnit')
  ) {
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
    const next: Unit = {
      ...from,
      UpstreamUnitID: to.UnitID,
      UpstreamSpaceID: toSpace.SpaceID,
      UpstreamRevisionNum: 0,
      Version: from.Version + 1,
      UpdatedAt: now,
    };
    ops.push({ op: 'update', kind: 'Unit', item: next, expectedVersion: from.Version });
  }
  await deps.store.transact(ops);
  return { ...link, Stale: isStale(link, to) };
}

/** Deletes a Link; deleting a Unit's UpgradeUnit Link also forgets its upstream, in the same transaction. */
export async function deleteLink(deps: UnitDeps, space: Space, link: Link): Promise<void> {
  const ops: StoreOp[] = [{ op: 'delete', kind: 'Link', item: link }];
  const from = await deps.store.getUnit(space.SpaceID, link.FromUnitID);
  if (link.UpdateType === 'UpgradeUnit' && from?.UpstreamUnitID === link.ToUnitID) {
    const next: Unit = {
      ...from,
      UpstreamUnitID: undefined,
      UpstreamSpaceID: undefined,
      Version: from.Version + 1,
      UpdatedAt: deps.now().toISOString(),
    };
    ops.push({ op: 'update', kind: 'Unit', item: next, expectedVersion: from.Version });
  }
  await deps.store.transact(ops);
}

import { runFunction } from '../config/functions.ts';
import type { Caller, Link, Space, Unit } from '../model/entities.ts';
import type { UnitDeps } from './ports.ts';
import type { StoreOp } from '../ports/store.ts';
import { advance, dataAt, newUnit } from './revisions.ts';

/** How a clone is made in its new Space. */
export interface CloneOptions {
  namespace?: string;
  targetId?: string;
  deleteGates?: Record<string, string>;
  /** The upstream revision to clone (default: its head). */
  revision?: number;
}

/**
 * The store ops that clone an upstream Unit into a Space: the clone at the upstream's revision, an
 * UpgradeUnit Link from it whose cursor is that revision, and, with a namespace, a second revision
 * that fills it in.
 */
export async function cloneOps(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  upstream: Unit,
  o: CloneOptions,
): Promise<{ unit: Unit; link: Link; ops: StoreOp[] }> {
  const rev = o.revision ?? upstream.HeadRevisionNum;
  const data = await dataAt(deps, upstream, rev);
  const created = newUnit(
    deps,
    caller,
    space,
    {
      Slug: upstream.Slug,
      DisplayName: upstream.DisplayName,
      ToolchainType: upstream.ToolchainType,
      Labels: upstream.Labels,
      Annotations: upstream.Annotations,
      TargetID: o.targetId,
      UpstreamUnitID: upstream.UnitID,
      UpstreamSpaceID: upstream.SpaceID,
      UpstreamRevisionNum: rev,
      DeleteGates: o.deleteGates,
    },
    data,
    { source: 'Clone', description: `clone of ${upstream.Slug} revision ${rev}` },
  );
  let unit = created.unit;
  const ops = [...created.ops];
  if (o.namespace && unit.ToolchainType === 'Kubernetes/YAML') {
    const filled = runFunction('set-namespace', [o.namespace], data);
    if (filled.data !== data) {
      const step = advance(deps, caller, unit, data, filled.data, {
        source: 'FunctionInvocation',
        description: `set namespace ${o.namespace}`,
        functionInvocation: { FunctionName: 'set-namespace', Arguments: [o.namespace] },
      });
      unit = step.unit;
      ops.push(...step.ops);
    }
  }
  const now = deps.now().toISOString();
  const link: Link = {
    OrganizationID: caller.OrganizationID,
    SpaceID: space.SpaceID,
    LinkID: deps.newId(),
    Slug: linkSlug(unit.Slug),
    Labels: {},
    Annotations: {},
    FromUnitID: unit.UnitID,
    ToUnitID: upstream.UnitID,
    ToSpaceID: upstream.SpaceID,
    UpdateType: 'UpgradeUnit',
    UpstreamLastMergedRevisionNum: rev,
    DownstreamLastMergedRevisionNum: 1,
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  ops.unshift({ op: 'create', kind: 'Unit', item: unit });
  ops.push({ op: 'create', kind: 'Link', item: link });
  return { unit, link, ops };
}

function linkSlug(unitSlug: string): string {
  return `${unitSlug.slice(0, 119)}-upstream`;
}

/** The ops that copy an upstream Space's other Links of a cloned Unit onto its clone, mapping units inside that Space to their clones. */
export function copyLinksOps(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  upstreamLinks: Link[],
  clonesByUpstreamId: Map<string, Unit>,
  existingSlugs: Set<string>,
): StoreOp[] {
  const ops: StoreOp[] = [];
  const now = deps.now().toISOString();
  for (const l of upstreamLinks) {
    const from = clonesByUpstreamId.get(l.FromUnitID);
    if (!from || l.UpdateType === 'UpgradeUnit' || existingSlugs.has(l.Slug)) continue;
    const to = l.ToSpaceID === l.SpaceID ? clonesByUpstreamId.get(l.ToUnitID) : undefined;
    const copy: Link = {
      ...l,
      SpaceID: space.SpaceID,
      LinkID: deps.newId(),
      FromUnitID: from.UnitID,
      ToUnitID: to?.UnitID ?? l.ToUnitID,
      ToSpaceID: to ? space.SpaceID : l.ToSpaceID,
      UpstreamLastMergedRevisionNum: 0,
      DownstreamLastMergedRevisionNum: 0,
      CreatedAt: now,
      UpdatedAt: now,
      Version: 1,
      OrganizationID: caller.OrganizationID,
    };
    ops.push({ op: 'create', kind: 'Link', item: copy });
  }
  return ops;
}

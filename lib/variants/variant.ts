import {
  newEntity,
  type Caller,
  type Component,
  type Link,
  type Space,
  type ToolchainType,
  type Unit,
} from '../model/entities.ts';
import { BatonError, Invalid, NotFound } from '../model/errors.ts';
import type { StoreOp } from '../ports/store.ts';
import { bounded } from '../util/concurrency.ts';
import { cloneOps, copyLinksOps } from './clone.ts';
import { bySlug, findSpace, releaseTargetId } from './lookup.ts';
import { UnitAction, upgradeUnit, type UnitResult } from './merge.ts';
import { newUnit } from './revisions.ts';
import type { UnitDeps } from './ports.ts';

/** Spaces cloned or promoted at once. */
const CONCURRENCY = 8;
/** The labels a variant takes from its upstream. */
const INHERITED = ['Component', 'Stage', 'Environment', 'Region'] as const;

/** A Unit's result when its write failed with a domain error (anything else is rethrown). */
export function failedUnit(unit: Unit, space: Space, e: unknown): UnitResult {
  if (!(e instanceof BatonError)) throw e;
  return {
    UnitID: unit.UnitID,
    UnitSlug: unit.Slug,
    SpaceID: space.SpaceID,
    Action: UnitAction.Failed,
    Error: { Code: e.code, Message: e.message },
  };
}

async function findComponentOrNew(
  deps: UnitDeps,
  caller: Caller,
  slug: string,
): Promise<{ component: Component; ops: StoreOp[] }> {
  const id = await deps.store.componentIdBySlug(caller.OrganizationID, slug);
  const existing = id ? await deps.store.getComponent(caller.OrganizationID, id) : undefined;
  if (existing) return { component: existing, ops: [] };
  const component: Component = {
    ...newEntity(deps, caller.OrganizationID, { Slug: slug }),
    ComponentID: deps.newId(),
    AllowedChangeWorkflowIDs: [],
    ChangeWorkflowRequired: false,
  };
  return { component, ops: [{ op: 'create', kind: 'Component', item: component }] };
}

function newSpace(deps: UnitDeps, caller: Caller, fields: Partial<Space> & { Slug: string }): Space {
  return { ...newEntity(deps, caller.OrganizationID, fields), SpaceID: deps.newId(), ...fields };
}

/** Labels a Space of a variant carries, as the spec names them. */
interface VariantLabels {
  Stage?: string;
  Environment?: string;
  Region?: string;
  SpaceLabels?: Record<string, string>;
}

/** A base variant of a Component from files: the Component (when new), its Space and one Unit per file. */
export interface UploadInput extends VariantLabels {
  Component: string;
  Variant: string;
  Units: { Slug: string; Data: string; ToolchainType: ToolchainType }[];
}

/** Uploads a base variant in one transaction: the Component (when new), the Space and every Unit land together or not at all. */
export async function uploadVariant(
  deps: UnitDeps,
  caller: Caller,
  body: UploadInput,
): Promise<{ Component: Component; Space: Space; Units: Unit[] }> {
  const { component, ops } = await findComponentOrNew(deps, caller, body.Component);
  const labels: Record<string, string> = { ...body.SpaceLabels, Component: body.Component, Variant: body.Variant };
  if (body.Stage) labels.Stage = body.Stage;
  if (body.Environment) labels.Environment = body.Environment;
  if (body.Region) labels.Region = body.Region;
  const space = newSpace(deps, caller, {
    Slug: `${body.Component}-${body.Variant}`,
    ComponentID: component.ComponentID,
    Labels: labels,
  });
  const seen = new Set<string>();
  const units: Unit[] = [];
  ops.push({ op: 'create', kind: 'Space', item: space });
  for (const u of body.Units) {
    if (seen.has(u.Slug)) throw new Invalid(`two files make unit '${u.Slug}'; unit slugs must be unique in a space`);
    seen.add(u.Slug);
    const created = newUnit(deps, caller, space, { Slug: u.Slug, ToolchainType: u.ToolchainType }, u.Data, {
      source: 'Upload',
      description: `upload of ${u.Slug}`,
    });
    ops.push({ op: 'create', kind: 'Unit', item: created.unit }, ...created.ops);
    units.push(created.unit);
  }
  await deps.store.transact(ops);
  return { Component: component, Space: space, Units: units };
}

/** A variant of an upstream Space: a new Space whose Units are clones, linked UpgradeUnit to their upstreams. */
export interface CreateVariantInput extends VariantLabels {
  Name: string;
  UpstreamSpaceID: string;
  Slug?: string;
  ReleaseTargetID?: string;
  Namespace?: string;
  UnitDeleteGates?: string[];
}

/** Creates a variant: the Space, then each clone (with its Link and namespace revision) in a transaction of its own; a failed clone is reported, and promote makes it later. */
export async function createVariant(
  deps: UnitDeps,
  caller: Caller,
  body: CreateVariantInput,
): Promise<{ Space: Space; Units: UnitResult[] }> {
  const upstream = await findSpace(deps, caller, body.UpstreamSpaceID);
  const labels: Record<string, string> = {};
  for (const k of INHERITED) if (upstream.Labels[k]) labels[k] = upstream.Labels[k]!;
  const component =
    labels.Component ??
    (upstream.ComponentID
      ? (await deps.store.getComponent(caller.OrganizationID, upstream.ComponentID))?.Slug
      : undefined);
  if (body.Stage) labels.Stage = body.Stage;
  if (body.Environment) labels.Environment = body.Environment;
  if (body.Region) labels.Region = body.Region;
  if (body.Namespace) labels.Namespace = body.Namespace;
  Object.assign(labels, body.SpaceLabels, { Variant: body.Name });
  const slug = body.Slug ?? (component ? `${component}-${body.Name}` : body.Name);
  const targetId = await releaseTargetId(deps, caller, body.ReleaseTargetID);
  const space = newSpace(deps, caller, {
    Slug: slug,
    Labels: labels,
    ComponentID: upstream.ComponentID,
    UpstreamSpaceID: upstream.SpaceID,
    ReleaseTargetID: targetId,
  });
  await deps.store.createSpace(space);
  const [listed, upLinks] = await Promise.all([
    deps.store.listUnits(upstream.SpaceID),
    deps.store.listInSpace<Link>('Link', upstream.SpaceID),
  ]);
  const upUnits = listed.sort(bySlug);
  const gates = body.UnitDeleteGates?.length ? Object.fromEntries(body.UnitDeleteGates.map((g) => [g, ''])) : undefined;
  const clones = await Promise.all(
    upUnits.map((u) => cloneOps(deps, caller, space, u, { namespace: body.Namespace, targetId, deleteGates: gates })),
  );
  const byUpstream = new Map(clones.map((c, i) => [upUnits[i]!.UnitID, c.unit]));
  const linkOps = copyLinksOps(deps, caller, space, upLinks, byUpstream, new Set(clones.map((c) => c.link.Slug)));
  const results = await bounded(clones, CONCURRENCY, async (c) => {
    try {
      await deps.store.transact(c.ops);
      return {
        UnitID: c.unit.UnitID,
        UnitSlug: c.unit.Slug,
        SpaceID: space.SpaceID,
        Action: UnitAction.Clone,
        RevisionNums: [c.unit.HeadRevisionNum],
      } satisfies UnitResult;
    } catch (e) {
      return failedUnit(c.unit, space, e);
    }
  });
  if (linkOps.length) await deps.store.transact(linkOps);
  return { Space: space, Units: results };
}

/** What promoting a variant from its upstream did. */
export interface VariantPromotion {
  SpaceID: string;
  SpaceSlug: string;
  DryRun: boolean;
  Units: UnitResult[];
}

/** Promotes a variant from its upstream: upgrades every Unit that merges from a Link, and clones what the upstream has that it lacks (with the Links that come with it). */
export async function promoteVariant(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  o: { dryRun?: boolean; squash?: boolean },
): Promise<VariantPromotion> {
  if (!space.UpstreamSpaceID)
    throw new Invalid(
      `space '${space.Slug}' has no upstream space to promote from; it was not made by cub variant create`,
    );
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
    if (
      !links.some((l) => l.FromUnitID === u.UnitID && (l.UpdateType === 'UpgradeUnit' || l.UpdateType === 'MergeUnits'))
    ) {
      return {
        UnitID: u.UnitID,
        UnitSlug: u.Slug,
        SpaceID: space.SpaceID,
        Action: UnitAction.Unchanged,
      } satisfies UnitResult;
    }
    try {
      return await upgradeUnit(deps, caller, space, u, { dryRun: o.dryRun, squash: o.squash });
    } catch (e) {
      return failedUnit(u, space, e);
    }
  });
  // New clones take the delete gates the variant's units were given when it was created.
  const gates = units.find((u) => u.DeleteGates && Object.keys(u.DeleteGates).length)?.DeleteGates;
  const clones = await Promise.all(
    missing.map((u) =>
      cloneOps(deps, caller, space, u, {
        namespace: space.Labels.Namespace,
        targetId: space.ReleaseTargetID,
        deleteGates: gates,
      }),
    ),
  );
  for (const c of clones) {
    if (!o.dryRun) {
      try {
        await deps.store.transact(c.ops);
      } catch (e) {
        results.push(failedUnit(c.unit, space, e));
        continue;
      }
    }
    results.push({
      UnitID: c.unit.UnitID,
      UnitSlug: c.unit.Slug,
      SpaceID: space.SpaceID,
      Action: UnitAction.Clone,
      RevisionNums: [c.unit.HeadRevisionNum],
    });
  }
  if (!o.dryRun && clones.length) {
    const byUpstream = new Map(clones.map((c, i) => [missing[i]!.UnitID, c.unit]));
    for (const u of units) if (u.UpstreamUnitID) byUpstream.set(u.UpstreamUnitID, u);
    const linkOps = copyLinksOps(
      deps,
      caller,
      space,
      upLinks.filter((l) => missing.some((m) => m.UnitID === l.FromUnitID)),
      byUpstream,
      new Set(links.map((l) => l.Slug)),
    );
    if (linkOps.length) await deps.store.transact(linkOps);
  }
  return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, DryRun: !!o.dryRun, Units: results };
}

import { diffData, type PathChange } from '../config/diff.ts';
import type { ToolchainType } from '../config/documents.ts';
import { runFunction } from '../config/functions.ts';
import { applyChanges, mergeData } from '../config/merge.ts';
import type { Caller, Link, MergeConflict, Space, Unit } from '../model/entities.ts';
import { Conflict, Invalid } from '../model/errors.ts';
import type { Deps } from './deps.ts';
import type { StoreOp } from './ports.ts';
import { withSpace } from './resolve.ts';
import { advance, dataAt, newUnit, writeData } from './units.ts';

/** What happened to one Unit in an upgrade, clone or promotion. */
export interface UnitResult {
  UnitID: string;
  UnitSlug: string;
  SpaceID: string;
  Action: 'Upgrade' | 'Clone' | 'Mark' | 'Unchanged' | 'Failed';
  /** The revisions written (or that would be). */
  RevisionNums?: number[];
  /** The values that changed (or would), from the unit's head before to after. */
  Changes?: PathChange[];
  /** Upstream changes held back by protection. */
  Conflicts?: MergeConflict[];
  Error?: { Code: string; Message: string };
}

/** A transaction holds 100 items; a merge writes 2 per revision plus the Unit and its Link. */
const MAX_REVISIONS_PER_MERGE = 45;

/** The Links that merge into a Unit: its UpgradeUnit Link (clone lineage) first, then MergeUnits Links. */
export async function mergeLinksOf(deps: Deps, spaceId: string, unitId: string): Promise<Link[]> {
  const links = (await deps.store.listInSpace<Link>('Link', spaceId)).filter((l) => l.FromUnitID === unitId && (l.UpdateType === 'UpgradeUnit' || l.UpdateType === 'MergeUnits'));
  return links.sort((a, b) => (a.UpdateType === b.UpdateType ? 0 : a.UpdateType === 'UpgradeUnit' ? -1 : 1));
}

/** Whether a Link's upstream has revisions past its merge cursor. */
export function isStale(link: Link, upstream: Unit | undefined): boolean {
  return !!upstream && upstream.HeadRevisionNum > link.UpstreamLastMergedRevisionNum;
}

/** The options of one merge into a Unit. */
export interface MergeOptions {
  source: Unit;
  base: number;
  end: number;
  link?: Link;
  squash?: boolean;
  dryRun?: boolean;
  /** Marks to write with the merge, placed by the heads before and after it. */
  marks?: (headBefore: number, headAfter: number) => StoreOp[];
  /** Reads an upstream revision (data and description); a promotion shares one cache across its Spaces. */
  readUpstream?: UpstreamReader;
  /** What the mutation says made the merge (default: the Link's type). */
  mutationSource?: string;
}

/** Reads one revision of an upstream Unit. */
export type UpstreamReader = (unit: Unit, num: number) => Promise<{ data: string; description?: string }>;

/** Reads upstream revisions straight from the store. */
export function storeReader(deps: Deps): UpstreamReader {
  return async (unit, num) => (num === 0 ? { data: '' } : { data: await dataAt(deps, unit, num), description: (await deps.store.getRevision(unit.UnitID, num))?.Description });
}

/** Reads upstream revisions once per promotion, however many Spaces merge them. */
export function cachedReader(deps: Deps): UpstreamReader {
  const cache = new Map<string, Promise<{ data: string; description?: string }>>();
  const read = storeReader(deps);
  return (unit, num) => {
    const key = `${unit.UnitID}#${num}`;
    let v = cache.get(key);
    if (!v) cache.set(key, (v = read(unit, num)));
    return v;
  };
}

/**
 * Merges the source's changes in (base, end] into the Unit: one revision per source revision replayed
 * (one in all with squash), protected paths held as conflicts, the Link's cursor moved, all in one
 * transaction guarded by the Unit's and the Link's Versions, so a racing merge gets 409.
 */
export async function mergeInto(deps: Deps, caller: Caller, space: Space, unit: Unit, o: MergeOptions): Promise<UnitResult> {
  const { source, base, end } = o;
  if (base < 0 || end < base || end > source.HeadRevisionNum) {
    throw new Invalid(`merge range ${base}..${end} is outside unit '${source.Slug}' (revisions 1..${source.HeadRevisionNum})`);
  }
  if (unit.ChangeSetID) {
    const cs = await deps.store.getInSpace<{ Slug: string }>('ChangeSet', unit.SpaceID, unit.ChangeSetID);
    throw new Conflict(`unit '${unit.Slug}' is locked by open changeset '${cs?.Slug ?? unit.ChangeSetID}'; close it before merging into it`);
  }
  if (unit.ToolchainType !== source.ToolchainType) throw new Invalid(`cannot merge ${source.ToolchainType} unit '${source.Slug}' into ${unit.ToolchainType} unit '${unit.Slug}'`);
  const result: UnitResult = { UnitID: unit.UnitID, UnitSlug: unit.Slug, SpaceID: space.SpaceID, Action: 'Unchanged', RevisionNums: [], Changes: [], Conflicts: [] };
  if (end === base) {
    // Nothing to replay: only the cursor (when it moves) and any marks are written.
    const ops: StoreOp[] = o.marks ? o.marks(unit.HeadRevisionNum, unit.HeadRevisionNum) : [];
    if (o.link && end > o.link.UpstreamLastMergedRevisionNum) ops.push({ op: 'update', kind: 'Link', item: cursorMoved(o.link, end, unit.HeadRevisionNum, deps.now().toISOString()), expectedVersion: o.link.Version });
    if (ops.length && !o.dryRun) await deps.store.transact(ops);
    return result;
  }
  const steps: [number, number][] = end === base ? [] : o.squash || o.link?.Squash ? [[base, end]] : Array.from({ length: end - base }, (_, i) => [base + i, base + i + 1]);
  if (steps.length > MAX_REVISIONS_PER_MERGE) {
    throw new Invalid(`merging ${steps.length} revisions of '${source.Slug}' into '${unit.Slug}' is more than one write can hold (${MAX_REVISIONS_PER_MERGE}); use --squash`);
  }
  // Only the revisions a step starts or ends at are read: a squash reads two, a replay every one.
  const read = o.readUpstream ?? storeReader(deps);
  const needed = [...new Set(steps.flat())];
  const revs = new Map(await Promise.all(needed.map(async (n) => [n, await read(source, n)] as const)));
  const start = await dataAt(deps, unit, unit.HeadRevisionNum);
  const tool = unit.ToolchainType as ToolchainType;
  let current = start;
  let next: Unit = { ...unit };
  delete next.SpaceSlug;
  const ops: StoreOp[] = [];
  const held: MergeConflict[] = [];
  for (const [a, b] of steps) {
    const merged = mergeData(tool, revs.get(a)!.data, revs.get(b)!.data, current, unit.ProtectedPaths);
    for (const h of merged.held) held.push({ ...h, MergeSourceID: source.UnitID, UpstreamRevisionNum: b });
    if (merged.data === current) continue;
    const step = advance(deps, caller, next, current, merged.data, {
      source: o.mutationSource ?? o.link?.UpdateType ?? 'Merge',
      description: (b === a + 1 ? revs.get(b)!.description : undefined) || `merge ${source.Slug} ${a}..${b}`,
      merge: { MergeSourceID: source.UnitID, MergeBaseRevisionNum: a, MergeEndRevisionNum: b, LinkID: o.link?.LinkID },
    });
    next = step.unit;
    ops.push(...step.ops);
    result.RevisionNums!.push(next.HeadRevisionNum);
    current = merged.data;
  }
  // A newer report on a path replaces the older one.
  const heldKeys = new Set(held.map((h) => `${h.Resource} ${h.Path}`));
  next.Conflicts = [...unit.Conflicts.filter((c) => !heldKeys.has(`${c.Resource} ${c.Path}`)), ...dedupeLast(held)];
  if (unit.UpstreamUnitID === source.UnitID) next.UpstreamRevisionNum = end;
  next.Version = unit.Version + 1;
  next.UpdatedAt = deps.now().toISOString();
  result.Changes = diffData(tool, start, current);
  result.Conflicts = dedupeLast(held);
  result.Action = result.RevisionNums!.length || held.length ? 'Upgrade' : 'Unchanged';
  if (o.dryRun) return result;
  ops.unshift({ op: 'update', kind: 'Unit', item: next, expectedVersion: unit.Version });
  if (o.marks) ops.push(...o.marks(unit.HeadRevisionNum, next.HeadRevisionNum));
  if (o.link && end > o.link.UpstreamLastMergedRevisionNum) {
    ops.push({ op: 'update', kind: 'Link', item: cursorMoved(o.link, end, next.HeadRevisionNum, next.UpdatedAt), expectedVersion: o.link.Version });
  }
  await deps.store.transact(ops);
  return result;
}

/** A Link whose merge cursor moved to (upstream, downstream). */
function cursorMoved(link: Link, upstream: number, downstream: number, now: string): Link {
  const next = { ...link, UpstreamLastMergedRevisionNum: upstream, DownstreamLastMergedRevisionNum: downstream, Version: link.Version + 1, UpdatedAt: now };
  delete next.Stale;
  delete next.SpaceSlug;
  return next;
}

function dedupeLast(held: MergeConflict[]): MergeConflict[] {
  const m = new Map<string, MergeConflict>();
  for (const h of held) m.set(`${h.Resource} ${h.Path}`, h);
  return [...m.values()];
}

/** Upgrades a Unit through each of its merge Links whose upstream moved past the cursor. */
export async function upgradeUnit(deps: Deps, caller: Caller, space: Space, unit: Unit, opts: { squash?: boolean; dryRun?: boolean } = {}): Promise<UnitResult> {
  const links = await mergeLinksOf(deps, space.SpaceID, unit.UnitID);
  if (!links.length) throw new Invalid(`unit '${unit.Slug}' has no UpgradeUnit or MergeUnits link to upgrade from`);
  let current = unit;
  let combined: UnitResult | undefined;
  for (const link of links) {
    const source = await deps.store.getUnit(link.ToSpaceID, link.ToUnitID);
    if (!source || !isStale(link, source)) continue;
    const r = await mergeInto(deps, caller, space, current, { source, base: link.UpstreamLastMergedRevisionNum, end: source.HeadRevisionNum, link, ...opts });
    combined = combined ? { ...r, RevisionNums: [...combined.RevisionNums!, ...r.RevisionNums!], Changes: [...combined.Changes!, ...r.Changes!], Conflicts: [...combined.Conflicts!, ...r.Conflicts!], Action: combined.Action === 'Upgrade' ? 'Upgrade' : r.Action } : r;
    if (!opts.dryRun) current = (await deps.store.getUnit(space.SpaceID, unit.UnitID))!;
  }
  return combined ?? { UnitID: unit.UnitID, UnitSlug: unit.Slug, SpaceID: space.SpaceID, Action: 'Unchanged', RevisionNums: [], Changes: [], Conflicts: [] };
}

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
export async function cloneOps(deps: Deps, caller: Caller, space: Space, upstream: Unit, o: CloneOptions): Promise<{ unit: Unit; link: Link; ops: StoreOp[] }> {
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
      const step = advance(deps, caller, unit, data, filled.data, { source: 'FunctionInvocation', description: `set namespace ${o.namespace}`, functionInvocation: { FunctionName: 'set-namespace', Arguments: [o.namespace] } });
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
  return { unit: withSpace(unit, space), link, ops };
}

function linkSlug(unitSlug: string): string {
  return `${unitSlug.slice(0, 119)}-upstream`;
}

/** Runs tasks with at most `limit` at once, keeping their order in the results. */
export async function bounded<T, R>(items: T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The ops that copy an upstream Space's other Links of a cloned Unit onto its clone, mapping units inside that Space to their clones. */
export function copyLinksOps(deps: Deps, caller: Caller, space: Space, upstreamLinks: Link[], clonesByUpstreamId: Map<string, Unit>, existingSlugs: Set<string>): StoreOp[] {
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
    delete copy.SpaceSlug;
    delete copy.Stale;
    ops.push({ op: 'create', kind: 'Link', item: copy });
  }
  return ops;
}

/** Applies the upstream values of a Unit's recorded conflicts, clearing them (dry run: only says what would change). */
export async function applyConflicts(deps: Deps, caller: Caller, space: Space, unit: Unit, dryRun: boolean): Promise<{ unit: Unit; Changes: PathChange[]; RevisionNum?: number }> {
  if (!unit.Conflicts.length) throw new Conflict(`unit '${unit.Slug}' has no conflicts to apply`);
  const head = await dataAt(deps, unit, unit.HeadRevisionNum);
  const changes: PathChange[] = unit.Conflicts.map((c) => ({ Resource: c.Resource, Path: c.Path, Op: c.Op as PathChange['Op'], Value: c.UpstreamValue }));
  const applied = applyChanges(unit.ToolchainType as ToolchainType, head, changes, []);
  const diff = diffData(unit.ToolchainType as ToolchainType, head, applied.data);
  if (dryRun) return { unit, Changes: diff };
  const w = await writeData(deps, caller, space, unit, applied.data, { source: 'ApplyConflicts', description: 'take the upstream values of conflicts' }, { Conflicts: [] });
  return { unit: w.unit, Changes: diff, RevisionNum: w.revision };
}

import { diffData, type PathChange } from '../config/diff.ts';
import { mergeData } from '../config/merge.ts';
import type { Caller, Link, MergeConflict, Space, StoredRevision, Unit } from '../model/entities.ts';
import { Conflict, Invalid } from '../model/errors.ts';
import { decompress } from '../config/hash.ts';
import type { UnitDeps } from './ports.ts';
import type { StoreOp } from '../ports/store.ts';
import { TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import { sharedRead } from '../util/concurrency.ts';
import { findUnitRef } from './lookup.ts';
import { advance, dataAt, noRevision } from './revisions.ts';

/** What a promotion or upgrade did to one Unit. */
export const UnitAction = {
  /** Merged upstream revisions in (or would). */
  Upgrade: 'Upgrade',
  /** Cloned from its upstream into the Space. */
  Clone: 'Clone',
  /** Nothing to merge: only marked as carrying the change. */
  Mark: 'Mark',
  /** Nothing written. */
  Unchanged: 'Unchanged',
  /** Refused or failed; `Error` says why. */
  Failed: 'Failed',
} as const;
export type UnitAction = (typeof UnitAction)[keyof typeof UnitAction];

/** What happened to one Unit in an upgrade, clone or promotion. */
export interface UnitResult {
  UnitID: string;
  UnitSlug: string;
  SpaceID: string;
  Action: UnitAction;
  /** The revisions written (or that would be). */
  RevisionNums?: number[];
  /** The values that changed (or would), from the unit's head before to after. */
  Changes?: PathChange[];
  /** Upstream changes held back by protection. */
  Conflicts?: MergeConflict[];
  Error?: { Code: string; Message: string };
}

/** A merge writes 2 items per revision, plus the Unit, its Link and 3 marks (and room to spare), in one transaction. */
const MAX_REVISIONS_PER_MERGE = Math.floor((TRANSACTION_MAX_ITEMS - 10) / 2);

/** The Links that merge into a Unit: its UpgradeUnit Link (clone lineage) first, then MergeUnits Links. */
export async function mergeLinksOf(deps: UnitDeps, spaceId: string, unitId: string): Promise<Link[]> {
  const links = (await deps.store.listInSpace<Link>('Link', spaceId)).filter(
    (l) => l.FromUnitID === unitId && (l.UpdateType === 'UpgradeUnit' || l.UpdateType === 'MergeUnits'),
  );
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
  /** On a dry run, told the Unit as it would be written and its data then, so a caller can preview what depends on it. */
  onPreview?: (next: Unit, data: string) => void;
  /** Reads an upstream revision (data and description); a promotion shares one cache across its Spaces. */
  readUpstream?: UpstreamReader;
  /** The Unit's head data when the caller read it already (a promotion reads a Space's heads in one request). */
  headData?: (unit: Unit) => string | undefined;
  /** What the mutation says made the merge (default: the Link's type). */
  mutationSource?: string;
  /** Writes the merge's ops (default: one transaction now); a promotion gathers a Space's Units to write them together. */
  write?: (ops: StoreOp[]) => Promise<void>;
}

/** Reads one revision of an upstream Unit. */
export type UpstreamReader = (unit: Unit, num: number) => Promise<{ data: string; description?: string }>;

/** Reads upstream revisions straight from the store. */
export function storeReader(deps: UnitDeps): UpstreamReader {
  return async (unit, num) => {
    if (num === 0) return { data: '' };
    // One read gives both the data and the description.
    const rev = await deps.store.getRevision(unit.UnitID, num);
    if (!rev) throw noRevision(unit, num);
    return { data: decompress(rev.Data), description: rev.Description };
  };
}

/**
 * Reads upstream revisions in batches: the reads asked for in one turn of the event loop (Spaces
 * promoted side by side ask for theirs together) go to the store as one request.
 */
function batchingReader(deps: UnitDeps): UpstreamReader {
  type Ask = {
    unit: Unit;
    num: number;
    resolve: (r: { data: string; description?: string }) => void;
    reject: (e: unknown) => void;
  };
  let pending: Ask[] = [];
  const flush = async () => {
    const batch = pending;
    pending = [];
    try {
      const revs = await deps.store.getRevisions(batch.map((b) => ({ UnitID: b.unit.UnitID, RevisionNum: b.num })));
      const byKey = new Map(revs.map((r) => [`${r.UnitID}#${r.RevisionNum}`, r]));
      for (const b of batch) {
        const rev = byKey.get(`${b.unit.UnitID}#${b.num}`);
        if (rev) b.resolve({ data: decompress(rev.Data), description: rev.Description });
        else b.reject(noRevision(b.unit, b.num));
      }
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  };
  return (unit, num) => {
    if (num === 0) return Promise.resolve({ data: '' });
    return new Promise((resolve, reject) => {
      if (!pending.length) setImmediate(() => void flush());
      pending.push({ unit, num, resolve, reject });
    });
  };
}

/** Reads upstream revisions once per promotion, however many Spaces merge them, batched. */
export function cachedReader(deps: UnitDeps): PrimedReader {
  const cache = new Map<string, Promise<{ data: string; description?: string }>>();
  const read = batchingReader(deps);
  const reader = ((unit: Unit, num: number) =>
    sharedRead(cache, `${unit.UnitID}#${num}`, () => read(unit, num))) as PrimedReader;
  reader.prime = (revs) => {
    for (const r of revs)
      if (!cache.has(`${r.UnitID}#${r.RevisionNum}`))
        cache.set(
          `${r.UnitID}#${r.RevisionNum}`,
          Promise.resolve({ data: decompress(r.Data), description: r.Description }),
        );
  };
  return reader;
}

/** A cached reader that can be given revisions read ahead (one batch for what a whole promotion will merge from). */
export interface PrimedReader extends UpstreamReader {
  prime(revs: StoredRevision[]): void;
}

/**
 * Merges the source's changes in (base, end] into the Unit: one revision per source revision replayed
 * (one in all with squash), protected paths held as conflicts, the Link's cursor moved, all in one
 * transaction guarded by the Unit's and the Link's Versions, so a racing merge gets 409.
 */
export async function mergeInto(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  o: MergeOptions,
): Promise<UnitResult> {
  const { source, base, end } = o;
  if (base < 0 || end < base || end > source.HeadRevisionNum) {
    throw new Invalid(
      `merge range ${base}..${end} is outside unit '${source.Slug}' (revisions 1..${source.HeadRevisionNum})`,
    );
  }
  if (unit.ChangeSetID) {
    const cs = await deps.store.getInSpace<{ Slug: string }>('ChangeSet', unit.SpaceID, unit.ChangeSetID);
    throw new Conflict(
      `unit '${unit.Slug}' is locked by open changeset '${cs?.Slug ?? unit.ChangeSetID}'; close it before merging into it`,
    );
  }
  if (unit.ToolchainType !== source.ToolchainType)
    throw new Invalid(
      `cannot merge ${source.ToolchainType} unit '${source.Slug}' into ${unit.ToolchainType} unit '${unit.Slug}'`,
    );
  const result: UnitResult = {
    UnitID: unit.UnitID,
    UnitSlug: unit.Slug,
    SpaceID: space.SpaceID,
    Action: 'Unchanged',
    RevisionNums: [],
    Changes: [],
    Conflicts: [],
  };
  if (end === base) {
    // Nothing to replay: only the cursor (when it moves) and any marks are written.
    const ops: StoreOp[] = o.marks ? o.marks(unit.HeadRevisionNum, unit.HeadRevisionNum) : [];
    if (o.link && end > o.link.UpstreamLastMergedRevisionNum)
      ops.push({
        op: 'update',
        kind: 'Link',
        item: cursorMoved(o.link, end, unit.HeadRevisionNum, deps.now().toISOString()),
        expectedVersion: o.link.Version,
        before: o.link,
      });
    if (ops.length && !o.dryRun) await (o.write ?? ((x) => deps.store.transact(x)))(ops);
    if (o.dryRun && o.onPreview) o.onPreview(unit, await dataAt(deps, unit, unit.HeadRevisionNum));
    return result;
  }
  const steps: [number, number][] =
    end === base
      ? []
      : o.squash || o.link?.Squash
        ? [[base, end]]
        : Array.from({ length: end - base }, (_, i) => [base + i, base + i + 1]);
  if (steps.length > MAX_REVISIONS_PER_MERGE) {
    throw new Invalid(
      `merging ${steps.length} revisions of '${source.Slug}' into '${unit.Slug}' is more than one write can hold (${MAX_REVISIONS_PER_MERGE}); use --squash`,
    );
  }
  // Only the revisions a step starts or ends at are read: a squash reads two, a replay every one.
  const read = o.readUpstream ?? storeReader(deps);
  const needed = [...new Set(steps.flat())];
  const revs = new Map(await Promise.all(needed.map(async (n) => [n, await read(source, n)] as const)));
  const start = o.headData?.(unit) ?? (await dataAt(deps, unit, unit.HeadRevisionNum));
  const tool = unit.ToolchainType;
  let current = start;
  let next: Unit = { ...unit };
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
  if (o.dryRun) {
    o.onPreview?.(next, current);
    return result;
  }
  ops.unshift({ op: 'update', kind: 'Unit', item: next, expectedVersion: unit.Version, before: unit });
  if (o.marks) ops.push(...o.marks(unit.HeadRevisionNum, next.HeadRevisionNum));
  if (o.link && end > o.link.UpstreamLastMergedRevisionNum) {
    ops.push({
      op: 'update',
      kind: 'Link',
      item: cursorMoved(o.link, end, next.HeadRevisionNum, next.UpdatedAt),
      expectedVersion: o.link.Version,
      before: o.link,
    });
  }
  await (o.write ?? ((x) => deps.store.transact(x)))(ops);
  return result;
}

/** A Link whose merge cursor moved to (upstream, downstream). */
function cursorMoved(link: Link, upstream: number, downstream: number, now: string): Link {
  return {
    ...link,
    UpstreamLastMergedRevisionNum: upstream,
    DownstreamLastMergedRevisionNum: downstream,
    Version: link.Version + 1,
    UpdatedAt: now,
  };
}

function dedupeLast(held: MergeConflict[]): MergeConflict[] {
  const m = new Map<string, MergeConflict>();
  for (const h of held) m.set(`${h.Resource} ${h.Path}`, h);
  return [...m.values()];
}

/** Upgrades a Unit through each of its merge Links whose upstream moved past the cursor. */
export async function upgradeUnit(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  opts: { squash?: boolean; dryRun?: boolean } = {},
): Promise<UnitResult> {
  const links = await mergeLinksOf(deps, space.SpaceID, unit.UnitID);
  if (!links.length) throw new Invalid(`unit '${unit.Slug}' has no UpgradeUnit or MergeUnits link to upgrade from`);
  let current = unit;
  let combined: UnitResult | undefined;
  for (const link of links) {
    const source = await deps.store.getUnit(link.ToSpaceID, link.ToUnitID);
    if (!source || !isStale(link, source)) continue;
    const r = await mergeInto(deps, caller, space, current, {
      source,
      base: link.UpstreamLastMergedRevisionNum,
      end: source.HeadRevisionNum,
      link,
      ...opts,
    });
    combined = combined
      ? {
          ...r,
          RevisionNums: [...combined.RevisionNums!, ...r.RevisionNums!],
          Changes: [...combined.Changes!, ...r.Changes!],
          Conflicts: [...combined.Conflicts!, ...r.Conflicts!],
          Action: combined.Action === UnitAction.Upgrade ? UnitAction.Upgrade : r.Action,
        }
      : r;
    if (!opts.dryRun) current = (await deps.store.getUnit(space.SpaceID, unit.UnitID))!;
  }
  return (
    combined ?? {
      UnitID: unit.UnitID,
      UnitSlug: unit.Slug,
      SpaceID: space.SpaceID,
      Action: 'Unchanged',
      RevisionNums: [],
      Changes: [],
      Conflicts: [],
    }
  );
}

/** Merges a named source Unit (`unit` or `space/unit`) into a Unit over (base, end]: by default from the Link's cursor to the source's head. */
export async function mergeFromSource(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  o: { source: string; base?: number; end?: number; squash?: boolean; dryRun?: boolean },
): Promise<UnitResult> {
  const { unit: source } = await findUnitRef(deps, caller, space, o.source);
  const link = (await deps.store.listInSpace<Link>('Link', space.SpaceID)).find(
    (l) => l.FromUnitID === unit.UnitID && l.ToUnitID === source.UnitID,
  );
  const base = o.base ?? link?.UpstreamLastMergedRevisionNum ?? 0;
  const end = o.end ?? source.HeadRevisionNum;
  return mergeInto(deps, caller, space, unit, { source, base, end, link, squash: o.squash, dryRun: o.dryRun });
}

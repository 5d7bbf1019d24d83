/**
 * What one promotion shares across its Spaces, and how it reads them before writing: the ChangeOrder's
 * marks and one cache of upstream revisions (`promoteContext`), the Spaces read a group at a time with
 * their Units' heads in one batch (`readAhead`). The promotion of one Space is space.ts.
 */

/** What one promotion shares across its Spaces. */
import { marksOf, type CoMarks } from '../marks.ts';
import type { ChangeDeps } from '../ports.ts';
import { decompress } from '../../config/hash.ts';
import {
  DESCRIBING_TOOLCHAIN,
  type ChangeOrder,
  type Link,
  type PriorRevisions,
  type Space,
  type StoredRevision,
  type Unit,
} from '../../model/entities.ts';
import { cachedReader, type UpstreamReader } from '../../variants/merge.ts';

export interface PromoteContext {
  co: ChangeOrder;
  marks: CoMarks;
  prior: PriorRevisions;
  dryRun: boolean;
  read: UpstreamReader;
  upstreamUnits: Map<string, Unit>;
  /** The Units of each upstream Space, listed once per promotion however many Spaces clone from it. */
  upstreamLists: Map<string, Promise<Unit[]>>;
  /** The Links of each upstream Space, read once per promotion. */
  upstreamLinks: Map<string, Promise<Link[]>>;
  /** Whether any Space may follow this one's Units (false spares a Link read per unchanged Unit). */
  hasFollowers(spaceId: string): boolean;
  /** The slugs of the organization's Spaces, when the promotion read them. */
  spaceSlugs: Map<string, string>;
  /**
   * On a dry run, the Units as this promotion would leave them (head and data), so a later MergeUnits
   * wave previews merging from what an earlier wave would write, as the real run does.
   */
  preview: Map<string, { unit: Unit; data: string; storedHead: number }>;
  /** Invoke: protect the paths the Invocation writes. */
  protect: boolean;
  /** Each Unit's head data, read for a whole Space in one request before its Units merge: UnitID → (head, data). */
  heads: Map<string, { head: number; data: string }>;
  /**
   * Reads revisions in one batch request together with the upstream revisions the promotion will merge
   * from, while those are still unread (the first read-ahead's heads take them along): the revisions of
   * `keys` come back, the upstream ones go to `read`.
   */
  batch(keys: RevisionKey[]): Promise<StoredRevision[]>;
}

type RevisionKey = { UnitID: string; RevisionNum: number };
const revisionKey = (k: RevisionKey) => `${k.UnitID}#${k.RevisionNum}`;

/** A Space's own Units and Links, as its promotion reads them before anything is written there. */
export interface SpaceRead {
  units: Unit[];
  links: Link[];
}

/** How a promotion reads each Space it promotes (a read-ahead over its Spaces, or one Space at a time). */
export type SpaceReads = (space: Space) => Promise<SpaceRead>;

/** One Space's Units and Links, read for it alone. */
export function readSpace(deps: ChangeDeps, space: Space): Promise<SpaceRead> {
  return Promise.all([deps.store.listUnits(space.SpaceID), deps.store.listInSpace<Link>('Link', space.SpaceID)]).then(
    ([units, links]) => ({ units, links }),
  );
}

/** How many Spaces one read-ahead covers: as many as a promotion runs at once. */
export const READ_AHEAD_SPACES = 16;

/**
 * Reads the Spaces a promotion will promote, in the order it starts them, a group at a time: when a
 * Space is started that no read covers yet, it and the next Spaces of the list are read together (each
 * Space's Units and Links), then the head data of every Unit among them that may merge, in one batch
 * request (up to 100 Units) rather than one per Space. Each Space's read is used once; a Space not in
 * the list is read alone; the group after the one being started is read next, one group ahead. Heads
 * are checked against each Unit's head when used, and each Unit's write against the Version read, so a
 * read a moment before its Space starts is as good as one read then (an edit in between is a 409).
 */
export function readAhead(
  deps: ChangeDeps,
  ctx: PromoteContext,
  spaces: Space[],
  size = READ_AHEAD_SPACES,
): SpaceReads {
  const index = new Map(spaces.map((s, i) => [s.SpaceID, i]));
  const pending = new Map<string, Promise<SpaceRead>>();
  let next = 0;
  /** The last group's heads read: the group after it starts reading then. */
  let last: Promise<void> = Promise.resolve();
  const readGroup = (i: number, after: Promise<void>) => {
    const group = spaces.slice(i, i + size);
    next = i + group.length;
    // Each Space's read stands alone: one that fails fails its Space only.
    const reads = group.map((s) => after.then(() => readSpace(deps, s)));
    const heads = Promise.allSettled(reads).then(async (settled) => {
      const keys = settled
        .flatMap((r) => {
          if (r.status === 'rejected') return [];
          const linked = new Set(
            r.value.links.filter((l) => l.UpdateType === ctx.co.UpdateType).map((l) => l.FromUnitID),
          );
          return r.value.units.filter(
            (u) =>
              linked.has(u.UnitID) &&
              u.ToolchainType !== DESCRIBING_TOOLCHAIN &&
              u.HeadRevisionNum > 0 &&
              !ctx.marks.end.has(u.UnitID) &&
              !ctx.heads.has(u.UnitID),
          );
        })
        .map((u) => ({ UnitID: u.UnitID, RevisionNum: u.HeadRevisionNum }));
      try {
        for (const rev of await ctx.batch(keys.length > 1 ? keys : []))
          ctx.heads.set(rev.UnitID, { head: rev.RevisionNum, data: decompress(rev.Data) });
      } catch {
        // Not read ahead: each Unit reads its own head as it merges.
      }
    });
    group.forEach((s, k) => {
      const one = heads.then(() => reads[k]!);
      // A Space never started (its Stage's failure budget spent) leaves its read unused: not an unhandled failure.
      one.catch(() => undefined);
      pending.set(s.SpaceID, one);
    });
    last = heads;
  };
  return (space) => {
    const i = index.get(space.SpaceID);
    if (i === undefined) return readSpace(deps, space);
    if (i >= next) readGroup(i, Promise.resolve());
    // One group ahead: when the newest group's first Space starts, the group after it is read (once this one
    // has been), so the Spaces that start next find their reads done instead of waiting on them.
    if (i >= next - size && next < spaces.length) readGroup(next, last);
    const p = pending.get(space.SpaceID);
    pending.delete(space.SpaceID);
    return p ?? readSpace(deps, space);
  };
}

/** Upstream revisions read ahead for one promotion, at most this many (a larger change reads the rest as it merges). */
const PRIME_MAX = 500;

/**
 * The revisions the targets' merges read from their upstream Spaces along the clone lineage: each Unit
 * the change moved there, from its start (the merge base) to its end. Read in one batch for the promotion
 * rather than in a batch per Space as their merges start.
 */
export function upstreamRange(marks: CoMarks, targets: Space[]): { UnitID: string; RevisionNum: number }[] {
  const ups = new Set(targets.map((t) => t.UpstreamSpaceID).filter((x): x is string => !!x));
  const keys: { UnitID: string; RevisionNum: number }[] = [];
  for (const end of marks.end.values()) {
    if (!ups.has(end.SpaceID)) continue;
    // A Unit the change did not move (or made) is not merged from.
    const start = marks.start.get(end.UnitID)?.RevisionNum;
    if (start === undefined || start >= end.RevisionNum) continue;
    for (let n = Math.max(1, start); n <= end.RevisionNum && keys.length < PRIME_MAX; n++)
      keys.push({ UnitID: end.UnitID, RevisionNum: n });
  }
  return keys;
}

/** A promotion's shared context: the ChangeOrder's marks, read once, and one cache of upstream revisions. */
export async function promoteContext(
  deps: ChangeDeps,
  co: ChangeOrder,
  o: {
    prior?: PriorRevisions;
    dryRun?: boolean;
    marks?: CoMarks;
    spaces?: Space[];
    protect?: boolean;
    targets?: Space[];
  },
): Promise<PromoteContext> {
  // With the organization's Spaces known, an UpgradeUnit change knows which Spaces nothing is cloned from.
  const upstreams =
    o.spaces && co.UpdateType === 'UpgradeUnit'
      ? new Set(o.spaces.map((s) => s.UpstreamSpaceID).filter(Boolean))
      : undefined;
  const preview = new Map<string, { unit: Unit; data: string; storedHead: number }>();
  const stored = cachedReader(deps);
  const marks = o.marks ?? (await marksOf(deps, co));
  // The upstream side, read once for the promotion: with the first batch of heads, or on the first merge's read.
  let upstream = o.targets && co.UpdateType === 'UpgradeUnit' ? upstreamRange(marks, o.targets) : [];
  let primed: Promise<unknown> = Promise.resolve();
  const batch = (keys: RevisionKey[]): Promise<StoredRevision[]> => {
    const ups = upstream;
    upstream = [];
    const upSet = new Set(ups.map(revisionKey));
    const want = new Set(keys.map(revisionKey));
    // One key once: a Space that is another target's upstream may be asked for both ways.
    const all = [
      ...new Map(
        [...ups, ...keys].map((k) => [revisionKey(k), { UnitID: k.UnitID, RevisionNum: k.RevisionNum }]),
      ).values(),
    ];
    const read = all.length ? deps.store.getRevisions(all) : Promise.resolve([]);
    // Unread (the store failing), the upstream revisions are read one by one as merges ask.
    if (ups.length)
      primed = read.then(
        (revs) => stored.prime(revs.filter((r) => upSet.has(revisionKey(r)))),
        () => undefined,
      );
    return read.then((revs) => revs.filter((r) => want.has(revisionKey(r))));
  };
  // The Units and Links of the Spaces the targets are cloned from, read now rather than when the first
  // target's merges have run (each is read once per promotion; a failed read fails the Spaces that use it).
  const upstreamLists = new Map<string, Promise<Unit[]>>();
  const upstreamLinks = new Map<string, Promise<Link[]>>();
  if (co.UpdateType === 'UpgradeUnit') {
    for (const id of new Set((o.targets ?? []).map((t) => t.UpstreamSpaceID).filter((x): x is string => !!x))) {
      const [units, links] = [deps.store.listUnits(id), deps.store.listInSpace<Link>('Link', id)];
      units.catch(() => undefined);
      links.catch(() => undefined);
      upstreamLists.set(id, units);
      upstreamLinks.set(id, links);
    }
  }
  return {
    co,
    marks,
    prior: o.prior ?? co.PriorRevisions,
    dryRun: !!o.dryRun,
    // A revision an earlier wave would write (past the stored head) reads as the Unit would end up:
    // a preview of a replay reads like a squash, whose end is the same.
    read: async (unit, num) => {
      const p = preview.get(unit.UnitID);
      if (p && num > p.storedHead) return { data: p.data };
      // Its failure is `primed`'s to absorb: the revision is then read alone.
      if (upstream.length) batch([]).catch(() => undefined);
      await primed;
      return stored(unit, num);
    },
    upstreamUnits: new Map(),
    upstreamLists,
    upstreamLinks,
    hasFollowers: (id) => !upstreams || upstreams.has(id),
    spaceSlugs: new Map((o.spaces ?? []).map((s) => [s.SpaceID, s.Slug])),
    preview,
    protect: !!o.protect,
    heads: new Map(),
    batch,
  };
}

import {
  DESCRIBING_TOOLCHAIN,
  isLinkChange,
  MarkRole,
  type Caller,
  type Mark,
  type ChangeOrder,
  type Link,
  type PriorRevisions,
  type Progress,
  type Space,
  type Unit,
} from '../model/entities.ts';
import { BatonError, Conflict, Invalid, NotFound } from '../model/errors.ts';
import type { StoreOp } from '../ports/store.ts';
import { chunk, TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import { nextTurn, sharedRead } from '../util/concurrency.ts';
import { decompress } from '../config/hash.ts';
import { cloneOps, copyLinksOps } from '../variants/clone.ts';
import { mergeInto, UnitAction, type UnitResult } from '../variants/merge.ts';
import { intervalMarks, type CoMarks, MARK_OPS_PER_TRANSACTION } from './marks.ts';
import type { ChangeDeps } from './ports.ts';
import { recordTaken } from './progress.ts';
import { promoteInvokeSpace } from './invoke.ts';
import { promoteLinkSpace } from './link-change.ts';
import { promoteContext, readSpace, type PromoteContext, type SpaceReads } from './promote-context.ts';

/** What a promotion did in one Space. */
export const SpaceAction = {
  /** The Space took the change in this promotion. */
  Promote: 'Promote',
  /** The Space had taken it before. */
  Unchanged: 'Unchanged',
  /** Not started: more of the Stage's Spaces had failed than its failure budget allows. */
  NotStarted: 'NotStarted',
  /** Not promoted: a gate refused, or its upstream Space has not taken the change. */
  Blocked: 'Blocked',
  /** A Unit's write failed; the rest landed and a rerun repairs. */
  Failed: 'Failed',
} as const;
export type SpaceAction = (typeof SpaceAction)[keyof typeof SpaceAction];

/** Why a Unit was left as it was, or only marked. */
export const UnitReason = {
  /** It carries the change already (a rerun, or a repair). */
  AlreadyTaken: 'AlreadyTaken',
  /** The change changes nothing in it: only marked, where its followers (or its release) have it. */
  NoChange: 'NoChange',
  /** Its upstream Unit is not covered by the change (made after it, or with nothing to carry). */
  NotCovered: 'NotCovered',
  /** Made in this Space: the change has nothing to bring it. */
  CreatedInSpace: 'CreatedInSpace',
  /** Its upstream was made after the ChangeOrder. */
  CreatedAfterChangeOrder: 'CreatedAfterChangeOrder',
  /** It merged its upstream to exactly the change's end before the ChangeOrder reached it (a variant made after the change): both Tags on its head. */
  AlreadyHasChange: 'AlreadyHasChange',
} as const;
export type UnitReason = (typeof UnitReason)[keyof typeof UnitReason];

/** One Unit's part of a promotion: merged as any upgrade, or, in a ChangeOrder of Invoke or of the Links' type, its Invocation run (`Invoke`) or its Links resolved (`Resolve`). */
export type PromotedUnit = Omit<UnitResult, 'Action'> & {
  Action: UnitResult['Action'] | 'Invoke' | 'Resolve';
  Reason?: UnitReason;
};

/** The result of promoting one Space. */
export interface SpaceResult {
  SpaceID: string;
  SpaceSlug: string;
  Action: SpaceAction;
  Error?: string;
  Units: PromotedUnit[];
}

/**
 * Where a Unit the change leaves unchanged is marked: at the revision the Spaces that follow it have
 * merged to, or where it was released when that is later; at its head only when nothing follows it and
 * it was never released. So a Space below takes none of this Space's own edits with the change, and a
 * Release of the change bundles the Unit as deployed.
 */
export async function restingRevision(
  deps: ChangeDeps,
  ctx: PromoteContext,
  space: Space,
  unit: Unit,
): Promise<number> {
  const follow = ctx.hasFollowers(space.SpaceID)
    ? (await deps.store.linksInto(unit.UnitID)).filter(
        (l) => l.UpdateType === ctx.co.UpdateType && ctx.co.InScopeSpaceIDs.includes(l.SpaceID),
      )
    : [];
  const at = [...follow.map((l) => l.UpstreamLastMergedRevisionNum), unit.LastReleasedRevisionNum].filter(
    (n) => n > 0 && n <= unit.HeadRevisionNum,
  );
  return at.length ? Math.max(...at) : unit.HeadRevisionNum;
}

/**
 * Promotes one Space: clones what the change carries that it lacks (at the start, then replays), upgrades
 * each Unit behind over the ChangeOrder's range (marks written with each Unit's merge), marks every other
 * Unit, then records the Space's progress. A Unit that already carries the end mark took the change.
 */
export async function promoteSpace(
  deps: ChangeDeps,
  caller: Caller,
  ctx: PromoteContext,
  space: Space,
  reads?: SpaceReads,
): Promise<SpaceResult> {
  const { co, marks } = ctx;
  const res: SpaceResult = { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Promote, Units: [] };
  if (co.UpdateType === 'Invoke' || isLinkChange(co)) {
    // Nothing to merge: the Invocation runs on the Units the selection picks here, or each Unit resolves its Links at the sources' end.
    const r =
      co.UpdateType === 'Invoke'
        ? await promoteInvokeSpace(deps, caller, co, marks, space, { dryRun: ctx.dryRun, protect: ctx.protect })
        : await promoteLinkSpace(deps, caller, co, marks, space, { dryRun: ctx.dryRun });
    res.Units = r.units;
    const failed = r.units.filter((u) => u.Error);
    if (failed.length) {
      res.Action = SpaceAction.Failed;
      res.Error = failed.map((u) => `${u.UnitSlug}: ${u.Error!.Message}`).join('; ');
    } else if (!ctx.dryRun) await recordTaken(deps, co, space, deps.now().toISOString());
    return res;
  }
  const { units: unitsList, links } = await (reads ? reads(space) : readSpace(deps, space));
  const now = deps.now().toISOString();
  const linkOf = new Map(links.filter((l) => l.UpdateType === co.UpdateType).map((l) => [l.FromUnitID, l]));
  const units = unitsList.filter((u) => u.ToolchainType !== DESCRIBING_TOOLCHAIN);
  const markOnly: StoreOp[] = [];
  // 1. Find what the change carries that this Space lacks: cloned at the start revision, and the replay below brings it up.
  const work: { unit: Unit; link?: Link; fresh?: boolean }[] = units.map((u) => ({
    unit: u,
    link: linkOf.get(u.UnitID),
  }));
  const toClone: Unit[] = [];
  if (co.UpdateType === 'UpgradeUnit' && space.UpstreamSpaceID) {
    const have = new Set(units.map((u) => u.UpstreamUnitID));
    const upstream = await sharedRead(ctx.upstreamLists, space.UpstreamSpaceID, () =>
      deps.store.listUnits(space.UpstreamSpaceID!),
    );
    for (const u of upstream) if (!ctx.upstreamUnits.has(u.UnitID)) ctx.upstreamUnits.set(u.UnitID, u);
    for (const up of upstream.filter((x) => !have.has(x.UnitID) && x.ToolchainType !== DESCRIBING_TOOLCHAIN)) {
      const s = marks.start.get(up.UnitID);
      const e = marks.end.get(up.UnitID);
      if (!s || !e) {
        res.Units.push({
          UnitID: up.UnitID,
          UnitSlug: up.Slug,
          SpaceID: space.SpaceID,
          Action: UnitAction.Unchanged,
          Reason: UnitReason.CreatedAfterChangeOrder,
        });
        continue;
      }
      if (s.RevisionNum === e.RevisionNum && ctx.prior !== 'All') {
        res.Units.push({
          UnitID: up.UnitID,
          UnitSlug: up.Slug,
          SpaceID: space.SpaceID,
          Action: UnitAction.Unchanged,
          Reason: UnitReason.NotCovered,
        });
        continue;
      }
      if (s.RevisionNum === 0) continue;
      toClone.push(up);
    }
  }
  // The Space took the change only when every Unit the change covers there carries it: none missing, each marked.
  if (!toClone.length && units.length && units.every((u) => marks.end.has(u.UnitID))) {
    // A repair, or a run that stopped after its writes: record that the Space did.
    res.Units.push(
      ...units.map((u) => ({
        UnitID: u.UnitID,
        UnitSlug: u.Slug,
        SpaceID: space.SpaceID,
        Action: UnitAction.Unchanged,
        Reason: UnitReason.AlreadyTaken,
      })),
    );
    if (!ctx.dryRun) await finishSpace(deps, caller, ctx, space, links, now);
    return res;
  }
  for (const up of toClone) {
    const clone = await cloneOps(deps, caller, space, up, {
      revision: marks.start.get(up.UnitID)!.RevisionNum,
      namespace: space.Labels.Namespace,
      targetId: space.ReleaseTargetID,
    });
    if (!ctx.dryRun) await deps.store.transact(clone.ops);
    res.Units.push({
      UnitID: clone.unit.UnitID,
      UnitSlug: clone.unit.Slug,
      SpaceID: space.SpaceID,
      Action: UnitAction.Clone,
      RevisionNums: [clone.unit.HeadRevisionNum],
    });
    work.push({ unit: clone.unit, link: clone.link, fresh: true });
  }
  // 2. and 3. Upgrade each Unit behind over the ChangeOrder's range, marking start and end with its write.
  // The head data of every Unit that may merge here, in one request for the Space rather than one per Unit.
  const merging = work.filter(
    (w) =>
      w.link &&
      !w.fresh &&
      w.unit.HeadRevisionNum > 0 &&
      !marks.end.has(w.unit.UnitID) &&
      !ctx.heads.has(w.unit.UnitID),
  );
  if (merging.length > 1) {
    for (const rev of await ctx.batch(
      merging.map((w) => ({ UnitID: w.unit.UnitID, RevisionNum: w.unit.HeadRevisionNum })),
    )) {
      ctx.heads.set(rev.UnitID, { head: rev.RevisionNum, data: decompress(rev.Data) });
    }
  }
  // Each Unit's write (its revisions, head, marks and cursor) is gathered, then the Space's Units land
  // together, in as few transactions as they fit; a Unit refused there fails alone, as its own write would.
  const groups: { ops: StoreOp[]; fail: (e: Conflict) => void }[] = [];
  // The merges below are this process's CPU, with no I/O between them: each Space starts them on a turn of its own, so
  // what arrived while the Space before merged (other Spaces' reads and heads) is taken in and that Space's write goes
  // out first. The engine then writes while this process merges, rather than each waiting on the other.
  await nextTurn();
  for (const { unit, link, fresh } of work) {
    const r = await promoteUnit(
      deps,
      caller,
      ctx,
      space,
      unit,
      link,
      !!fresh,
      now,
      ctx.dryRun ? undefined : (ops, fail) => groups.push({ ops, fail }),
    );
    ctx.heads.delete(unit.UnitID);
    if (r.marks) markOnly.push(...r.marks);
    res.Units.push(r.result);
  }
  if (ctx.dryRun) {
    const failed = res.Units.filter((u) => u.Error);
    if (failed.length) return spaceFailed(res, failed);
    // What a later wave merges from: the marks this Space would write, as if written.
    for (const op of markOnly) setMark(ctx.marks, op.item as Mark);
    return res;
  }
  // 4. After them, only when every Unit's write landed: the marks of the Units the change leaves
  // unchanged, and the Space's progress with the last of them unless the Links of the Space above are
  // still to copy onto its Units (then it is recorded after that).
  const linksToCopy =
    co.UpdateType === 'UpgradeUnit' && !!space.UpstreamSpaceID && (await upstreamLinksOf(deps, ctx, space)).length > 0;
  const refusedBefore = res.Units.some((u) => u.Error);
  const tail = refusedBefore ? [] : chunk(markOnly, MARK_OPS_PER_TRANSACTION);
  const progressOp: StoreOp = {
    op: 'create',
    kind: 'Progress',
    item: {
      ChangeOrderID: co.ChangeOrderID,
      BaseSpaceID: co.SpaceID,
      SpaceID: space.SpaceID,
      ResolvedAt: now,
      Version: 1,
    } satisfies Progress,
  };
  const withProgress = !linksToCopy && !refusedBefore;
  if (withProgress) {
    if (tail.length && tail.at(-1)!.length < TRANSACTION_MAX_ITEMS) tail.at(-1)!.push(progressOp);
    else tail.push([progressOp]);
  }
  const outcomes = await deps.store.transactGroups([...groups.map((g) => g.ops), ...tail], { tail: tail.length });
  for (const [i, g] of groups.entries()) if (outcomes[i] instanceof Conflict) g.fail(outcomes[i]);
  const failed = res.Units.filter((u) => u.Error);
  if (failed.length) return spaceFailed(res, failed);
  for (const [i, part] of tail.entries()) {
    const outcome = outcomes[groups.length + i];
    // The progress alone refused: the Space was recorded as having taken the change already.
    if (outcome instanceof Conflict && !(part.length === 1 && part[0] === progressOp)) throw outcome;
  }
  if (!withProgress) await finishSpace(deps, caller, ctx, space, links, now);
  return res;
}

/** A Space whose Units did not all take the change: Failed, naming each Unit's reason. */
function spaceFailed(res: SpaceResult, failed: PromotedUnit[]): SpaceResult {
  res.Action = SpaceAction.Failed;
  res.Error = failed.map((u) => `${u.UnitSlug}: ${u.Error!.Message}`).join('; ');
  return res;
}

/** The last steps of a Space that took the change (a rerun too): the Links of the Space above copied, then its progress recorded. */
async function finishSpace(
  deps: ChangeDeps,
  caller: Caller,
  ctx: PromoteContext,
  space: Space,
  links: Link[],
  now: string,
): Promise<void> {
  if (ctx.co.UpdateType === 'UpgradeUnit' && space.UpstreamSpaceID)
    await copyUpstreamLinks(deps, caller, ctx, space, links);
  await recordTaken(deps, ctx.co, space, now);
}

/** One Unit's part of a promotion (also `cub unit update --upgrade --change-order`): merge the range with its marks, or say why not. */
export async function promoteUnit(
  deps: ChangeDeps,
  caller: Caller,
  ctx: PromoteContext,
  space: Space,
  unit: Unit,
  link: Link | undefined,
  fresh: boolean,
  now: string,
  defer?: (ops: StoreOp[], fail: (e: Conflict) => void) => void,
): Promise<{ result: PromotedUnit; marks?: StoreOp[] }> {
  const { co, marks } = ctx;
  const r: PromotedUnit = {
    UnitID: unit.UnitID,
    UnitSlug: unit.Slug,
    SpaceID: space.SpaceID,
    Action: UnitAction.Unchanged,
  };
  try {
    if (marks.end.has(unit.UnitID)) {
      r.Reason = UnitReason.AlreadyTaken;
      return { result: r };
    }
    const s = link ? marks.start.get(link.ToUnitID) : undefined;
    const e = link ? marks.end.get(link.ToUnitID) : undefined;
    if (!link || !s || !e) {
      // A Unit the change does not cover: made here, or upstream after the ChangeOrder. Marked where it rests, with the Space's last write.
      r.Action = UnitAction.Mark;
      r.Reason = link ? UnitReason.NotCovered : UnitReason.CreatedInSpace;
      const at = await restingRevision(deps, ctx, space, unit);
      return { result: r, marks: intervalMarks(co, unit, at, at, now) };
    }
    let source = ctx.preview.get(link.ToUnitID)?.unit ?? ctx.upstreamUnits.get(link.ToUnitID);
    if (!source) {
      source = await deps.store.getUnit(link.ToSpaceID, link.ToUnitID);
      if (source) ctx.upstreamUnits.set(source.UnitID, source);
    }
    if (!source) throw new NotFound(`upstream unit of '${unit.Slug}' no longer exists`);
    const from = source;
    let current = unit;
    let cursorLink = link;
    const start = s.RevisionNum;
    const end = e.RevisionNum;
    const cursor = fresh ? start : link.UpstreamLastMergedRevisionNum;
    if (cursor > start && cursor === end) {
      // It already has the change, and nothing after it (made from its upstream once the change was there):
      // the change's start and end both mark its head, and it is reported as having it.
      return {
        result: { ...r, Action: UnitAction.Mark, Reason: UnitReason.AlreadyHasChange },
        marks: intervalMarks(co, unit, unit.HeadRevisionNum, unit.HeadRevisionNum, now),
      };
    }
    if (cursor > start) {
      const baseSlug =
        ctx.spaceSlugs.get(co.SpaceID) ??
        (cursor > end ? (await deps.store.getSpace(co.OrganizationID, co.SpaceID))?.Slug : undefined) ??
        co.SpaceID;
      if (cursor > end)
        throw new Conflict(
          `unit '${unit.Slug}' has already merged past the change order's start (revision ${start} of '${from.Slug}'): it took revisions ${start + 1}..${cursor}, past the change's end (revision ${end}), so it has the change and more; take it out of the change order's scope (cub changeorder update --space ${baseSlug} ${co.Slug} --remove-space ${space.Slug})`,
        );
      throw new Conflict(
        `unit '${unit.Slug}' has already merged past the change order's start (revision ${start} of '${from.Slug}'): it took revisions ${start + 1}..${cursor}`,
      );
    }
    if (cursor < start) {
      if (ctx.prior === 'Error') {
        const descs = await Promise.all(
          Array.from({ length: start - cursor }, (_, i) => ctx.read(from, cursor + 1 + i)),
        );
        const upSpace =
          ctx.spaceSlugs.get(link.ToSpaceID) ??
          (await deps.store.getSpace(co.OrganizationID, link.ToSpaceID))?.Slug ??
          link.ToSpaceID;
        throw new Conflict(
          `unit '${unit.Slug}' has revisions before the change order's start not yet merged through link '${link.Slug}': ${descs.map((d, i) => `revision ${cursor + 1 + i} of '${upSpace}/${from.Slug}' (${d.description || 'no description'})`).join(', ')}`,
        );
      }
      if (start === end && ctx.prior === 'Skip')
        return {
          result: { ...r, Action: UnitAction.Mark, Reason: UnitReason.NoChange },
          marks: await restMarks(deps, ctx, space, unit, now),
        };
      if (ctx.prior === 'Include' || ctx.prior === 'All') {
        const pre = await mergeInto(deps, caller, space, current, {
          source: from,
          base: cursor,
          end: start,
          link,
          dryRun: ctx.dryRun,
          readUpstream: ctx.read,
        });
        r.RevisionNums = pre.RevisionNums;
        r.Changes = pre.Changes;
        if (!ctx.dryRun) {
          current = (await deps.store.getUnit(space.SpaceID, unit.UnitID))!;
          cursorLink = (await deps.store.getInSpace<Link>('Link', space.SpaceID, link.LinkID))!;
        }
      }
    }
    if (start === end && cursor === start) {
      // The change changes nothing here: marked where the Unit rests, with the Space's last write.
      return {
        result: { ...r, Action: UnitAction.Mark, Reason: UnitReason.NoChange },
        marks: await restMarks(deps, ctx, space, unit, now),
      };
    }
    const merged = await mergeInto(deps, caller, space, current, {
      source: from,
      base: start,
      end,
      link: cursorLink,
      dryRun: ctx.dryRun,
      readUpstream: ctx.read,
      headData: (u) => {
        const h = ctx.heads.get(u.UnitID);
        return h && h.head === u.HeadRevisionNum ? h.data : undefined;
      },
      marks: (before, after) => intervalMarks(co, current, before, after, now),
      // Given to the Space to write with its other Units: refused there, the Unit fails as if its own write had been.
      write: defer
        ? async (ops) => {
            const landed: PromotedUnit = { ...r };
            defer(ops, (e) => {
              for (const k of Object.keys(r)) delete (r as unknown as Record<string, unknown>)[k];
              Object.assign(r, landed, { Action: UnitAction.Failed, Error: { Code: e.code, Message: e.message } });
            });
          }
        : undefined,
      onPreview: ctx.dryRun ? (next, data) => previewTaken(ctx, current, next, data, now) : undefined,
    });
    r.Action = merged.RevisionNums!.length ? UnitAction.Upgrade : UnitAction.Mark;
    if (!merged.RevisionNums!.length) r.Reason = UnitReason.AlreadyTaken;
    r.RevisionNums = [...(r.RevisionNums ?? []), ...merged.RevisionNums!];
    r.Changes = [...(r.Changes ?? []), ...merged.Changes!];
    r.Conflicts = merged.Conflicts;
  } catch (err) {
    if (!(err instanceof BatonError)) throw err;
    r.Action = UnitAction.Failed;
    r.Error = { Code: err.code, Message: err.message };
  }
  return { result: r };
}

/**
 * Copies the Links of the Space above onto this Space's Units that come from the Units they start at
 * (clones made by this promotion included): Links travel with a promotion, independently of the change.
 * A Link whose slug the Space already has is left alone, so a rerun copies nothing twice.
 */
async function copyUpstreamLinks(
  deps: ChangeDeps,
  caller: Caller,
  ctx: PromoteContext,
  space: Space,
  have: Link[],
): Promise<void> {
  const upstream = await upstreamLinksOf(deps, ctx, space);
  if (!upstream.length) return;
  const byUpstream = new Map(
    (await deps.store.listUnits(space.SpaceID)).filter((u) => u.UpstreamUnitID).map((u) => [u.UpstreamUnitID!, u]),
  );
  const ops = copyLinksOps(deps, caller, space, upstream, byUpstream, new Set(have.map((l) => l.Slug)));
  for (const part of chunk(ops, TRANSACTION_MAX_ITEMS)) await deps.store.transact(part);
}

/** The Links of the Space above that travel with a promotion (all but its clone Links), read once per promotion. */
async function upstreamLinksOf(deps: ChangeDeps, ctx: PromoteContext, space: Space): Promise<Link[]> {
  return (
    await sharedRead(ctx.upstreamLinks, space.UpstreamSpaceID!, () =>
      deps.store.listInSpace<Link>('Link', space.UpstreamSpaceID!),
    )
  ).filter((l) => l.UpdateType !== 'UpgradeUnit');
}

/** Places one mark in a ChangeOrder's marks, as read. */
function setMark(marks: CoMarks, m: Mark): void {
  (m.Role === MarkRole.start ? marks.start : m.Role === MarkRole.end ? marks.end : marks.publish).set(m.UnitID, m);
}

/** A dry run's Unit as the promotion would leave it: its data for later waves to read, its marks as if written. */
function previewTaken(ctx: PromoteContext, before: Unit, next: Unit, data: string, now: string): void {
  ctx.preview.set(before.UnitID, { unit: next, data, storedHead: before.HeadRevisionNum });
  for (const op of intervalMarks(ctx.co, before, before.HeadRevisionNum, next.HeadRevisionNum, now))
    setMark(ctx.marks, op.item as Mark);
}

/** The marks of a Unit the change leaves unchanged, at the revision where it rests. */
async function restMarks(
  deps: ChangeDeps,
  ctx: PromoteContext,
  space: Space,
  unit: Unit,
  now: string,
): Promise<StoreOp[]> {
  const at = await restingRevision(deps, ctx, space, unit);
  return intervalMarks(ctx.co, unit, at, at, now);
}

/** Upgrades one Unit with a ChangeOrder's range: a repair, not a promotion, so it is not gated and clones nothing. */
export async function upgradeUnitWithChangeOrder(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  space: Space,
  unit: Unit,
  o: { dryRun?: boolean; priorRevisions?: PriorRevisions },
): Promise<PromotedUnit> {
  if (co.AbortedReason) throw new Conflict(`change order '${co.Slug}' was aborted (${co.AbortedReason})`);
  const promoteHere = async () =>
    `cub variant promote ${space.Slug} --change-order ${(await deps.store.getSpace(co.OrganizationID, co.SpaceID))?.Slug ?? co.SpaceID}/${co.Slug}`;
  if (co.UpdateType === 'Invoke')
    throw new Invalid(
      `change order '${co.Slug}' is an Invoke change order: there is no upstream revision to merge; promote it into the Space (${await promoteHere()})`,
    );
  if (isLinkChange(co))
    throw new Invalid(
      `change order '${co.Slug}' is ${/^[AEIOU]/.test(co.UpdateType) ? 'an' : 'a'} ${co.UpdateType} change order: its Units take it by resolving their Links at the sources' end, not by a merge; promote it into the Space (${await promoteHere()})`,
    );
  const link = (await deps.store.listInSpace<Link>('Link', space.SpaceID)).find(
    (l) => l.FromUnitID === unit.UnitID && l.UpdateType === co.UpdateType,
  );
  if (!link)
    throw new Invalid(`unit '${unit.Slug}' has no ${co.UpdateType} link for change order '${co.Slug}' to follow`);
  const ctx = await promoteContext(deps, co, { prior: o.priorRevisions, dryRun: o.dryRun });
  if (!ctx.marks.end.has(link.ToUnitID))
    throw new Conflict(`the upstream of unit '${unit.Slug}' has not taken change order '${co.Slug}'`);
  const { result, marks } = await promoteUnit(deps, caller, ctx, space, unit, link, false, deps.now().toISOString());
  if (result.Error) throw new Conflict(result.Error.Message);
  if (marks?.length && !o.dryRun) await deps.store.transact(marks);
  return result;
}

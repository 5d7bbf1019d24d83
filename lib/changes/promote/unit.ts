/** Step 3, per Unit: merging the ChangeOrder's range into a Unit, or marking where it rests, with its marks in the same write. */
import { intervalMarks, type CoMarks } from '../marks.ts';
import type { ChangeDeps } from '../ports.ts';
import { promoteContext, type PromoteContext } from './context.ts';
import { UnitReason, PromotedUnit } from './types.ts';
import {
  isLinkChange,
  MarkRole,
  type Caller,
  type Mark,
  type ChangeOrder,
  type Link,
  type PriorRevisions,
  type Space,
  type Unit,
} from '../../model/entities.ts';
import { BatonError, Conflict, Invalid, NotFound } from '../../model/errors.ts';
import type { StoreOp } from '../../ports/store.ts';
import { mergeInto, UnitAction } from '../../variants/merge.ts';

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

/** Places one mark in a ChangeOrder's marks, as read. */
export function setMark(marks: CoMarks, m: Mark): void {
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

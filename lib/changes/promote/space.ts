/** Step 3 of a promotion: each Space, never throwing (a failure is the Space's result), within its Stage's failure budget. */
import { promoteInvokeSpace } from '../invoke.ts';
import { promoteLinkSpace } from '../link-change.ts';
import { MARK_OPS_PER_TRANSACTION } from '../marks.ts';
import type { ChangeDeps } from '../ports.ts';
import { recordTaken, takenOp } from '../progress.ts';
import { readSpace, type PromoteContext, type SpaceReads, readAhead } from './context.ts';

import { SpaceAction, type SpaceResult, UnitReason, PromotedUnit } from './types.ts';
import { promoteUnit, setMark } from './unit.ts';
import { decompress } from '../../config/hash.ts';
import {
  DESCRIBING_TOOLCHAIN,
  isLinkChange,
  type Caller,
  type Mark,
  type ChangeOrder,
  type Link,
  type Space,
  type Unit,
} from '../../model/entities.ts';
import { BatonError, Conflict } from '../../model/errors.ts';
import type { StoreOp } from '../../ports/store.ts';
import { chunk, TRANSACTION_MAX_ITEMS } from '../../util/chunk.ts';
import { nextTurn, sharedRead } from '../../util/concurrency.ts';
import { cloneOps, copyLinksOps } from '../../variants/clone.ts';
import { UnitAction } from '../../variants/merge.ts';

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
  const progressOp = takenOp(co, space, now);
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

/** Promotes one Space, reporting whatever went wrong as that Space's result (never thrown). */
export function promoter(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  baseId: string,
  taken: Set<string>,
  ctx: () => PromoteContext,
  ahead?: Space[],
): (space: Space) => Promise<SpaceResult> {
  const blocked = (space: Space) =>
    co.UpdateType === 'UpgradeUnit' &&
    !!space.UpstreamSpaceID &&
    space.UpstreamSpaceID !== baseId &&
    !taken.has(space.UpstreamSpaceID);
  // The Spaces it will promote, in the order it is given them, read a group at a time.
  const reads = ahead
    ? readAhead(
        deps,
        ctx(),
        ahead.filter((s) => !taken.has(s.SpaceID) && !blocked(s)),
      )
    : undefined;
  return async (space) => {
    if (taken.has(space.SpaceID))
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Unchanged, Units: [] };
    if (blocked(space)) {
      return {
        SpaceID: space.SpaceID,
        SpaceSlug: space.Slug,
        Action: SpaceAction.Blocked,
        Error: `its upstream space has not taken change order '${co.Slug}'`,
        Units: [],
      };
    }
    try {
      const r = await promoteSpace(deps, caller, ctx(), space, reads);
      // Units in slug order, whatever order the Space listed them in (by id).
      r.Units.sort((a, b) => (a.UnitSlug < b.UnitSlug ? -1 : a.UnitSlug > b.UnitSlug ? 1 : 0));
      return r;
    } catch (e) {
      // Whatever failed — a rule, a conflict, the database going away — the Space is reported, never lost: what it
      // wrote landed whole per Unit (each Unit's revision and marks are one transaction), and a rerun finishes it.
      const message =
        e instanceof BatonError
          ? e.message
          : `stopped part-way (${(e as Error).name ?? 'error'}: ${(e as Error).message ?? String(e)}); some of its Units may have taken the change: promote again to finish`;
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Failed, Error: message, Units: [] };
    }
  };
}

/**
 * A promoter that stops starting Spaces once more than `allowance` of the Stage's Spaces have failed
 * (its failure budget): the rest are `NotStarted`. `counter` carries failures counted before (a job's
 * other parts).
 */
export function budgeted(
  promoteOne: (s: Space) => Promise<SpaceResult>,
  allowance: number | undefined,
  stage: string | undefined,
  counter: { failed: number },
): (s: Space) => Promise<SpaceResult> {
  if (allowance === undefined) return promoteOne;
  return async (space) => {
    if (counter.failed > allowance) {
      return {
        SpaceID: space.SpaceID,
        SpaceSlug: space.Slug,
        Action: SpaceAction.NotStarted,
        Error: `not started: more than ${allowance} space(s) of stage '${stage}' failed, its failure budget; promote again once they are fixed`,
        Units: [],
      };
    }
    const r = await promoteOne(space);
    if (r.Action === SpaceAction.Failed) counter.failed++;
    return r;
  };
}

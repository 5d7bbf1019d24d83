/**
 * A promotion, top-down (lib/changes/promote/): the request (this file: the ChangeOrder's lease, then the steps
 * in order, in the request or handed to a job) → plan.ts (which Spaces, in which Stage, in which waves) →
 * gates.ts (what must hold, evaluated before anything is written) → space.ts (each Space, with context.ts:
 * what they share and read ahead) → unit.ts (each Unit's merge and marks) → record.ts (what the answer says
 * and the ChangeOrder records) → ../reevaluate.ts (the Stage reached). job.ts runs the same steps as a job;
 * explain.ts stops after the gates; types.ts holds what the steps pass between them.
 */
import { runsAsJob } from '../jobs.ts';
import { marksOf } from '../marks.ts';
import type { ChangeDeps } from '../ports.ts';
import { recordOn } from '../progress.ts';
import { promoteContext } from './context.ts';

import { GateReads, gateReads, gate } from './gates.ts';
import { startPromoteJob } from './job.ts';
import { conclude, promotionRecord, releaseLease, withStageReached } from './record.ts';
import { budgeted, promoter } from './space.ts';
import { type SpaceResult, PROMOTE_CONCURRENCY, type PromoteOptions, type PromoteOutcome } from './types.ts';
import { afterPromotion } from '../reevaluate.ts';
import type { Caller, ChangeOrder, Space } from '../../model/entities.ts';
import { BatonError, Conflict, Invalid, Unavailable } from '../../model/errors.ts';
import { bounded } from '../../util/concurrency.ts';

/**
 * Promotes a ChangeOrder into a Stage (the next by default) or into named Spaces. The Stage's gates are
 * evaluated once, over every Space of the Stage before (the base for the first), before anything is
 * written; naming a later Stage does not skip an earlier one that has not taken the change.
 */
export async function promoteChangeOrder(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  base: Space,
  o: PromoteOptions,
): Promise<PromoteOutcome> {
  if (o.dryRun) return promoteHeld(deps, caller, co, base, o);
  // What the gates read is read while the lease is taken, not after. Taken from the ChangeOrder as this request read it
  // (its Version unchanged), no promotion held the lease from that read on, so none wrote since: these reads are as good
  // as reads made after it. Taken only after a conflict, they are read again.
  const early = gateReads(deps, caller, co);
  const held = await acquireLease(deps, caller, co);
  const lease = { id: held.LeaseID, co: held.co, released: false };
  try {
    return await promoteHeld(deps, caller, co, base, o, lease, held.co.Version === co.Version + 1 ? early : undefined);
  } finally {
    // Given back with the promotion's record when it got that far; otherwise here.
    if (!lease.released) await releaseLease(deps, co, lease.id).catch(() => undefined);
  }
}

/** How long a promotion may hold its ChangeOrder before another may take over (its holder having died). */
export const PROMOTION_LEASE_MS = 10 * 60 * 1000;

/** Takes the ChangeOrder's promotion lease, or refuses (409) while another promotion holds it. */
async function acquireLease(
  deps: ChangeDeps,
  caller: Caller,
  coRef: ChangeOrder,
): Promise<{ LeaseID: string; co: ChangeOrder }> {
  const id = deps.newId();
  for (let attempt = 0; ; attempt++) {
    // The ChangeOrder as the request read it, first; read again only after a conflict.
    const co =
      attempt === 0
        ? coRef
        : (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID))!;
    const now = deps.now();
    const held = co.PromotionLease;
    if (held && Date.parse(held.ExpiresAt) > now.getTime()) {
      const job = await deps.store.getJob?.(held.LeaseID).catch(() => undefined);
      if (job?.State === 'Running')
        throw new Conflict(
          `change order '${co.Slug}' is being promoted already by job ${job.JobID} (${job.SpacesDone} of ${job.Total} space(s) done): promotion in progress; follow it with cub job get ${job.JobID}`,
        );
      throw new Conflict(
        `change order '${co.Slug}' is being promoted already (by ${held.UserID === caller.UserID ? 'you' : `user ${held.UserID}`}, since ${held.AcquiredAt}): promotion in progress; try again when it has finished (its claim lapses at ${held.ExpiresAt})`,
      );
    }
    const lease = {
      LeaseID: id,
      UserID: caller.UserID,
      AcquiredAt: now.toISOString(),
      ExpiresAt: new Date(now.getTime() + PROMOTION_LEASE_MS).toISOString(),
    };
    try {
      const written: ChangeOrder = { ...co, PromotionLease: lease, Version: co.Version + 1 };
      await deps.store.transact([{ op: 'update', kind: 'ChangeOrder', item: written, expectedVersion: co.Version }]);
      return { LeaseID: id, co: written };
    } catch (e) {
      if (!(e instanceof Conflict) || attempt >= 5) throw e;
    }
  }
}

async function promoteHeld(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  base: Space,
  o: PromoteOptions,
  lease?: { id: string; co: ChangeOrder; released: boolean },
  early?: GateReads,
): Promise<PromoteOutcome> {
  const g = await gate(deps, caller, co, base, o, undefined, early);
  if ('early' in g) return g.early;
  if ('explained' in g) throw new Invalid('an explanation is asked of explainPromotion');
  const remaining = g.targets.filter((t) => !g.taken.has(t.SpaceID)).length;
  if (lease && runsAsJob(deps, remaining, o.async)) {
    // The job holds the lease (named by it) and gives it back when it records the promotion.
    const job = await startPromoteJob(deps, caller, co, base, o, g, lease.id);
    lease.released = true;
    return { outcome: 'Accepted', job };
  }
  const ctx = await promoteContext(deps, co, {
    prior: o.priorRevisions,
    dryRun: o.dryRun,
    marks: g.marks,
    spaces: g.spaces,
    protect: o.protect,
    targets: g.targets.filter((t) => !g.taken.has(t.SpaceID)),
  });
  const spaces: SpaceResult[] = [];
  const counter = { failed: 0 };
  for (const [i, wave] of g.waves.entries()) {
    // A later wave merges from Units the earlier one just marked: read the marks again.
    if (i > 0 && !o.dryRun) ctx.marks = await marksOf(deps, co);
    const promoteOne = promoter(deps, caller, co, base.SpaceID, g.taken, () => ctx, wave);
    spaces.push(
      ...(await bounded(
        wave,
        deps.promoteConcurrency ?? PROMOTE_CONCURRENCY,
        budgeted(promoteOne, g.allowance, g.stageName, counter),
      )),
    );
  }
  const { outcome, result, failures } = conclude(co, { ...g, total: g.targets.length }, spaces, !!o.dryRun);
  if (o.dryRun) return { outcome, result };
  // The Stage the change reached, from what the gates read and the Spaces that took it now: recorded in the same write.
  const record = await withStageReached(
    deps,
    caller,
    co,
    g.context,
    spaces,
    promotionRecord(
      deps,
      caller,
      co,
      result,
      failures,
      g.failedGates,
      g.targets.map((t) => t.SpaceID),
      o.forceReason,
      lease?.id,
      g.allowance,
    ),
  );
  // The record of what happened is written as soon as the store answers again, or the answer says it could not be.
  const recorded = await persist(() => recordOn(deps, co, record.change, record.events, [], lease?.co));
  if (recorded && lease) lease.released = true;
  if (!recorded) {
    result.Unrecorded = true;
    result.Message = `${result.Message ?? `change order '${co.Slug}' promoted`}; this promotion could not be recorded on the change order: the database is not answering (this answer is its only record; promote again once it is back)`;
    return { outcome: 'Partial', result };
  }
  if (co.ChangeWorkflow && !record.reached) await afterPromotion(deps, caller, co, 'a promotion');
  return { outcome, result };
}

/** Runs a write, trying again a few times over about two seconds while the store does not answer; whether it landed. */
async function persist(write: () => Promise<void>): Promise<boolean> {
  for (const wait of [0, 250, 500, 1000]) {
    if (wait) await new Promise((r) => setTimeout(r, wait));
    try {
      await write();
      return true;
    } catch (e) {
      if (e instanceof BatonError && !(e instanceof Unavailable)) throw e;
    }
  }
  return false;
}

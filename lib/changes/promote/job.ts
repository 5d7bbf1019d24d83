/** A promotion as a job (lib/changes/jobs.ts): what the request hands its workers, and what each part and the end do. */
import { startJob, type JobHandler } from '../jobs.ts';
import { marksOf } from '../marks.ts';
import type { ChangeDeps } from '../ports.ts';
import { recordOn } from '../progress.ts';
import { promoteContext, type PromoteContext } from './context.ts';

import { conclude, promotionRecord, releaseLease, withStageReached } from './record.ts';
import { budgeted, promoter } from './space.ts';
import {
  SpaceAction,
  type SpaceResult,
  PROMOTE_CONCURRENCY,
  type Gated,
  type PromoteOptions,
  type PromoteResult,
} from './types.ts';
import { afterPromotion } from '../reevaluate.ts';
import type { GateContext } from '../stages.ts';
import type { Caller, ChangeOrder, GateResult, Space } from '../../model/entities.ts';
import type { JobRecord } from '../../ports/jobs.ts';
import { TooLarge } from '../../model/errors.ts';
import { bounded } from '../../util/concurrency.ts';

/** What a promotion job carries from the request to its workers. */
interface PromoteJobPlan {
  ChangeOrderID: string;
  SpaceID: string;
  BaseSpaceID: string;
  Options: PromoteOptions;
  Stage?: string;
  Gates: GateResult[];
  FailedGates: GateResult[];
  /** The Spaces (targets, and their upstreams) that had taken the change when it was planned. */
  Taken: string[];
  TargetIDs: string[];
  /** The target Stage's failure budget, in Spaces. */
  Allowance?: number;
}

export async function startPromoteJob(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  base: Space,
  o: PromoteOptions,
  g: Gated,
  leaseId: string,
): Promise<JobRecord> {
  const relevant = new Set(g.targets.flatMap((t) => [t.SpaceID, ...(t.UpstreamSpaceID ? [t.UpstreamSpaceID] : [])]));
  const plan: PromoteJobPlan = {
    ChangeOrderID: co.ChangeOrderID,
    SpaceID: co.SpaceID,
    BaseSpaceID: base.SpaceID,
    Options: o,
    Stage: g.stageName,
    Gates: g.gates,
    FailedGates: g.failedGates,
    Taken: [...g.taken].filter((id) => relevant.has(id)),
    TargetIDs: g.targets.map((t) => t.SpaceID),
    Allowance: g.allowance,
  };
  // In this process the workers take up what the request read: its marks and Spaces for the first wave, and what the gates read for the Stage reached.
  jobContexts.set(
    `${leaseId}:0`,
    promoteContext(deps, co, {
      prior: o.priorRevisions,
      marks: g.marks,
      spaces: g.spaces,
      protect: o.protect,
      targets: g.targets.filter((t) => !g.taken.has(t.SpaceID)),
    }),
  );
  jobGates.set(leaseId, g.context);
  // Jobs this process started but another finished (or that never end) stay in this map: keep the last few.
  if (jobGates.size > 16) jobGates.delete(jobGates.keys().next().value!);
  try {
    return await startJob(deps, caller, {
      jobId: leaseId,
      kind: 'Promote',
      waves: g.waves,
      plan,
      subject: { ChangeOrderID: co.ChangeOrderID, ChangeOrderSlug: co.Slug, SpaceID: co.SpaceID, Stage: g.stageName },
    });
  } catch (e) {
    jobContexts.delete(`${leaseId}:0`);
    jobGates.delete(leaseId);
    throw e;
  }
}

/** Each worker's promotion context, per job and wave (a later wave reads the marks again), the last few kept. */
const jobContexts = new Map<string, Promise<PromoteContext>>();
/** What the gates read for a job started in this process: the Stage it reaches is then recorded with it, unread. */
const jobGates = new Map<string, GateContext>();
/** Jobs whose end recorded the Stage reached (nothing left to re-evaluate after). */
const stageRecorded = new Set<string>();

/** A promotion as a job: each part promotes its Spaces with the code a request runs; the end records it on the ChangeOrder. */
export const promoteJob: JobHandler<PromoteJobPlan, SpaceResult> = {
  async run(deps, job, plan, wave, spaces) {
    const key = `${job.JobID}:${wave}`;
    let ctx = jobContexts.get(key);
    const co = ctx
      ? (await ctx).co
      : await deps.store.getInSpace<ChangeOrder>('ChangeOrder', plan.SpaceID, plan.ChangeOrderID);
    if (!co)
      return {
        results: spaces.map((s) => ({
          SpaceID: s.SpaceID,
          SpaceSlug: s.Slug,
          Action: SpaceAction.Failed,
          Error: 'the change order was deleted while it was being promoted',
          Units: [],
        })),
      };
    // A recall stops the job starting Spaces: the ChangeOrder is read afresh for each part after the wave's first.
    const latest = ctx ? await deps.store.getInSpace<ChangeOrder>('ChangeOrder', plan.SpaceID, plan.ChangeOrderID) : co;
    if (latest?.Recall)
      return {
        results: spaces.map((s) => ({
          SpaceID: s.SpaceID,
          SpaceSlug: s.Slug,
          Action: SpaceAction.NotStarted,
          Error: `not started: the change order was recalled (${latest.Recall!.SpaceSlug} reported ${latest.Recall!.Matched} at ${latest.Recall!.RecalledAt})`,
          Units: [],
        })),
      };
    if (!ctx) {
      ctx = (async () =>
        promoteContext(deps, co, {
          prior: plan.Options.priorRevisions,
          marks: await marksOf(deps, co),
          spaces: await deps.store.listSpaces(co.OrganizationID),
          protect: plan.Options.protect,
        }))();
      jobContexts.set(key, ctx);
      ctx.catch(() => jobContexts.delete(key));
      if (jobContexts.size > 4) jobContexts.delete(jobContexts.keys().next().value!);
    }
    const c = await ctx;
    const one = promoter(deps, job.Caller as Caller, co, plan.BaseSpaceID, new Set(plan.Taken), () => c, spaces);
    // The budget counts the failures of the parts written before this one.
    return {
      results: await bounded(
        spaces,
        deps.promoteConcurrency ?? PROMOTE_CONCURRENCY,
        budgeted(one, plan.Allowance, plan.Stage, { failed: job.SpacesFailed ?? 0 }),
      ),
    };
  },
  gaveUp: (spaces, error) =>
    spaces.map((s) => ({
      SpaceID: s.SpaceID,
      SpaceSlug: s.Slug,
      Action: SpaceAction.Failed,
      Error: `the job's worker gave up on it after every attempt (${error}); some of its Units may have taken the change: promote again to finish`,
      Units: [],
    })),
  summary: (r) => ({ SpaceID: r.SpaceID, Action: r.Action, ...(r.Error ? { Error: r.Error } : {}) }),
  async finish(deps, job, plan, results, end) {
    const co = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', plan.SpaceID, plan.ChangeOrderID))!;
    for (const k of [...jobContexts.keys()]) if (k.startsWith(`${job.JobID}:`)) jobContexts.delete(k);
    const { outcome, result, failures } = conclude(
      co,
      { stageName: plan.Stage, gates: plan.Gates, failedGates: plan.FailedGates, total: plan.TargetIDs.length },
      results,
      false,
    );
    const caller = job.Caller as Caller;
    // Started in this process: the Stage reached is recorded with the promotion, from what the gates read.
    const gate = jobGates.get(job.JobID);
    jobGates.delete(job.JobID);
    const record = await withStageReached(
      deps,
      caller,
      co,
      gate,
      results,
      promotionRecord(
        deps,
        caller,
        co,
        result,
        failures,
        plan.FailedGates,
        plan.TargetIDs,
        plan.Options.forceReason,
        job.JobID,
        plan.Allowance,
      ),
    );
    if (record.reached) stageRecorded.add(job.JobID);
    if (stageRecorded.size > 16) stageRecorded.delete(stageRecorded.values().next().value!);
    const { Spaces: _each, ...head } = result;
    try {
      await recordOn(deps, co, record.change, record.events, end(outcome === 'Partial' ? 207 : 200, head));
    } catch (e) {
      // Too large to record (the job ends with that 413): the lease the record would have given back is given back.
      if (e instanceof TooLarge) await releaseLease(deps, co, job.JobID);
      throw e;
    }
  },
  answer: (head, results) => ({ ...(head as Omit<PromoteResult, 'Spaces'>), Spaces: results }),
  async after(deps, job, plan) {
    if (stageRecorded.delete(job.JobID)) return;
    await afterPromotion(
      deps,
      job.Caller as Caller,
      { SpaceID: plan.SpaceID, ChangeOrderID: plan.ChangeOrderID },
      'a promotion job',
    );
  },
};

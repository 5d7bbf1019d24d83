import { failureAllowance, requireVerb, type Explanation, type Caller, type ChangeOrder, type GateResult, type Link, type PriorRevisions, type Space } from '../model/entities.ts';
import { BatonError, Conflict, GateRefused, Invalid, Unavailable } from '../model/errors.ts';
import { evaluateGates, evaluatePrerequisite, refusal, tolerate } from '../gates/prerequisites.ts';
import { DetailType, SOURCE, type BatonEvent } from '../events/contracts.ts';
import { bounded } from '../util/concurrency.ts';
import { matches, parseWhere } from '../where/index.ts';
import { findSpace } from '../variants/lookup.ts';
import { marksOf } from './marks.ts';
import { planPromotion } from './plan.ts';
import type { ChangeDeps } from './ports.ts';
import { advanceStage, computeStage, contextAfter, recordOn, stageAdvance } from './progress.ts';
import { promoteContext, promoteSpace, SpaceAction, type SpaceResult } from './promote-space.ts';
import { gateContext, gateState, orgSpaces, readsAttestations, takenOnly, type GateContext } from './stages.ts';
import { mergeWaves } from './waves.ts';
import { runsAsJob, startJob, type JobHandler } from './jobs.ts';
import { holdGates } from './holds.ts';
import type { CoMarks } from './marks.ts';
import type { PromoteContext } from './promote-space.ts';
import type { Deps } from '../ports/deps.ts';
import type { JobRecord } from '../ports/store.ts';

/** Spaces of one Stage promoted at once. */
export const PROMOTE_CONCURRENCY = 16;

/** What one promotion did. */
export interface PromoteResult {
  ChangeOrderID: string;
  Stage?: string;
  DryRun: boolean;
  Forced: boolean;
  Gates: GateResult[];
  Spaces: SpaceResult[];
  Landed: number;
  Total: number;
  Message?: string;
  /** Set when the failures could not be recorded on the ChangeOrder (the database did not answer): the answer is the only record. */
  Unrecorded?: boolean;
}

/**
 * How a promotion ended: every Space took the change (`Done`), or some did not (`Partial`; a rerun
 * repairs), or it runs on as a job (`Accepted`). A gate refusal is thrown as `GateRefused`.
 */
export type PromoteOutcome = { outcome: 'Done' | 'Partial'; result: PromoteResult } | { outcome: 'Accepted'; job: JobRecord };

/** Options of a promotion with a ChangeOrder. */
export interface PromoteOptions {
  targetStage?: string;
  spaces?: string[];
  whereSpace?: string;
  dryRun?: boolean;
  priorRevisions?: PriorRevisions;
  force?: boolean;
  forceReason?: string;
  /** Invoke only: protect the paths the Invocation writes. */
  protect?: boolean;
  /** Run as a job (true), in the request (false), or as the size of the plan decides (unset). */
  async?: boolean;
  /** Evaluate the gates with what each read and what would open it, and stop there (nothing is written). */
  explain?: boolean;
}

/** The target Spaces a promotion names (by reference, or by a where over the ChangeOrder's scope), each in scope. */
async function namedTargets(deps: ChangeDeps, caller: Caller, co: ChangeOrder, o: PromoteOptions): Promise<Space[]> {
  const named: Space[] = [];
  for (const ref of o.spaces ?? []) named.push(await findSpace(deps, caller, ref));
  if (o.whereSpace) {
    const q = parseWhere(o.whereSpace, 'Space');
    named.push(...(await orgSpaces(deps, caller, [q])).filter((s) => co.InScopeSpaceIDs.includes(s.SpaceID) && matches(q, s)));
  }
  for (const s of named) if (!co.InScopeSpaceIDs.includes(s.SpaceID)) throw new Invalid(`space '${s.Slug}' is not in the scope of change order '${co.Slug}'`);
  return named;
}

/** The Space IDs each target merges from by MergeUnits Links, for ordering waves. */
async function mergeSources(deps: ChangeDeps, targets: Space[]): Promise<Map<string, Set<string>>> {
  return new Map(
    await Promise.all(targets.map(async (t) => [t.SpaceID, new Set((await deps.store.listInSpace<Link>('Link', t.SpaceID)).filter((l) => l.UpdateType === 'MergeUnits').map((l) => l.ToSpaceID))] as const)),
  );
}

/**
 * Promotes a ChangeOrder into a Stage (the next by default) or into named Spaces. The Stage's gates are
 * evaluated once, over every Space of the Stage before (the base for the first), before anything is
 * written; naming a later Stage does not skip an earlier one that has not taken the change.
 */
export async function promoteChangeOrder(deps: ChangeDeps, caller: Caller, co: ChangeOrder, base: Space, o: PromoteOptions): Promise<PromoteOutcome> {
  if (o.dryRun) return promoteHeld(deps, caller, co, base, o);
  const held = await acquireLease(deps, caller, co);
  const lease = { id: held.LeaseID, co: held.co, released: false };
  try {
    return await promoteHeld(deps, caller, co, base, o, lease);
  } finally {
    // Given back with the promotion's record when it got that far; otherwise here.
    if (!lease.released) await releaseLease(deps, co, lease.id).catch(() => undefined);
  }
}

/** How long a promotion may hold its ChangeOrder before another may take over (its holder having died). */
export const PROMOTION_LEASE_MS = 10 * 60 * 1000;

/** Takes the ChangeOrder's promotion lease, or refuses (409) while another promotion holds it. */
async function acquireLease(deps: ChangeDeps, caller: Caller, coRef: ChangeOrder): Promise<{ LeaseID: string; co: ChangeOrder }> {
  const id = deps.newId();
  for (let attempt = 0; ; attempt++) {
    // The ChangeOrder as the request read it, first; read again only after a conflict.
    const co = attempt === 0 ? coRef : (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID))!;
    const now = deps.now();
    const held = co.PromotionLease;
    if (held && Date.parse(held.ExpiresAt) > now.getTime()) {
      const job = await (deps as Deps).store.getJob?.(held.LeaseID).catch(() => undefined);
      if (job?.State === 'Running') throw new Conflict(`change order '${co.Slug}' is being promoted already by job ${job.JobID} (${job.SpacesDone} of ${job.Total} space(s) done): promotion in progress; follow it with cub job get ${job.JobID}`);
      throw new Conflict(`change order '${co.Slug}' is being promoted already (by ${held.UserID === caller.UserID ? 'you' : `user ${held.UserID}`}, since ${held.AcquiredAt}): promotion in progress; try again when it has finished (its claim lapses at ${held.ExpiresAt})`);
    }
    const lease = { LeaseID: id, UserID: caller.UserID, AcquiredAt: now.toISOString(), ExpiresAt: new Date(now.getTime() + PROMOTION_LEASE_MS).toISOString() };
    try {
      const written: ChangeOrder = { ...co, PromotionLease: lease, Version: co.Version + 1 };
      await deps.store.transact([{ op: 'update', kind: 'ChangeOrder', item: written, expectedVersion: co.Version }]);
      return { LeaseID: id, co: written };
    } catch (e) {
      if (!(e instanceof Conflict) || attempt >= 5) throw e;
    }
  }
}

/** Gives the lease back, if this promotion still holds it. */
async function releaseLease(deps: ChangeDeps, coRef: ChangeOrder, id: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const co = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID))!;
    if (co.PromotionLease?.LeaseID !== id) return;
    try {
      await deps.store.transact([{ op: 'update', kind: 'ChangeOrder', item: { ...co, PromotionLease: undefined, Version: co.Version + 1 }, expectedVersion: co.Version }]);
      return;
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
    }
  }
}

/** Gates as records keep them: without an explanation's evidence. */
const recorded = (gates: GateResult[]): GateResult[] => gates.map(({ Evidence: _e, Opens: _o, ...g }) => g);

/** Why a promotion into the next Stage (or the one named) would or would not go ahead: every gate, with what it read and what would open it. */
export interface Explained {
  stageName?: string;
  stageIndex: number;
  targets: Space[];
  before: Space[];
  gates: GateResult[];
  failedGates: GateResult[];
  message?: string;
}

/** Explains the next promotion of a ChangeOrder (or into `targetStage`, or into named Spaces): reads only. */
export async function explainPromotion(deps: ChangeDeps, caller: Caller, co: ChangeOrder, base: Space, o: Pick<PromoteOptions, 'targetStage' | 'spaces' | 'whereSpace'>): Promise<Explanation> {
  const g = await gate(deps, caller, co, base, { ...o, dryRun: true, explain: true });
  const pick = (s: Space) => ({ SpaceID: s.SpaceID, SpaceSlug: s.Slug });
  if ('early' in g) return { ChangeOrderID: co.ChangeOrderID, Slug: co.Slug, Targets: [], Over: [], Open: false, Gates: [], Message: 'result' in g.early ? g.early.result.Message : undefined };
  if (!('explained' in g)) throw new Error('unreachable: an explanation stops at the gates');
  const e = g.explained;
  return { ChangeOrderID: co.ChangeOrderID, Slug: co.Slug, ...(e.stageName ? { Stage: e.stageName } : {}), Targets: e.targets.map(pick), Over: e.before.map(pick), Open: e.failedGates.length === 0, Gates: e.gates, ...(e.message ? { Message: e.message } : {}) };
}

/** A promotion planned and gated, ready to run: in the request, or as a job. */
interface Gated {
  stageName?: string;
  targets: Space[];
  /** The targets in the order they run: MergeUnits waves one after another, otherwise one wave. */
  waves: Space[][];
  gates: GateResult[];
  failedGates: GateResult[];
  /** The Spaces that had taken the change when the promotion was planned. */
  taken: Set<string>;
  marks: CoMarks;
  /** The organization's Spaces, as read for the plan. */
  spaces: Space[];
  /** What the gates read (Stages, progress, the CEL view), for the Stage reached afterwards. */
  context: GateContext;
  /** How many of the target Stage's Spaces may fail before the promotion stops starting more (its failure budget). */
  allowance?: number;
}

/** Plans a promotion and evaluates its gates (refusing, unless forced, when one fails); nothing is written. */
async function gate(deps: ChangeDeps, caller: Caller, co: ChangeOrder, base: Space, o: PromoteOptions): Promise<{ early: PromoteOutcome } | { explained: Explained } | Gated> {
  if (co.AbortedReason) throw new Conflict(`change order '${co.Slug}' was aborted (${co.AbortedReason}); promote a new one`);
  if (o.force && !o.forceReason) throw new Invalid('--force needs --force-reason, which the change order records');
  if (o.protect && co.UpdateType !== 'Invoke') throw new Invalid('--protect is refused here: promoting a change order along the clone lineage or over MergeUnits links is a merge, which protection holds paths against');
  const [marks, context] = await Promise.all([marksOf(deps, co), gateContext(deps, caller, co)]);
  const { spaces, stages, progress, view } = context;
  const named = o.spaces?.length || o.whereSpace ? await namedTargets(deps, caller, co, o) : undefined;
  const plan = planPromotion(stages, base, (id) => progress.has(id), named ? { named } : { targetStage: o.targetStage });
  if ('noWorkflow' in plan) throw new Invalid(`change order '${co.Slug}' has no workflow: name the spaces to promote`);
  if ('unknownStage' in plan) throw new Invalid(`the workflow of change order '${co.Slug}' has no stage '${plan.unknownStage}'; stages: ${stages.map((s) => s.name).join(', ')}`);
  if ('everyStageReached' in plan) {
    return { early: { outcome: 'Done', result: { ChangeOrderID: co.ChangeOrderID, DryRun: !!o.dryRun, Forced: false, Gates: [], Spaces: [], Landed: 0, Total: 0, Message: `change order '${co.Slug}' has reached every stage` } } };
  }
  const { stageIndex, targets } = plan;
  if (!o.dryRun) requireVerb(caller, targets.filter((t) => !progress.has(t.SpaceID)), 'Edit', `promote change order '${co.Slug}' into it`);
  const stageName = stageIndex >= 0 ? stages[stageIndex]?.name : undefined;
  // Gates: every earlier Stage must have taken the change; the target Stage's prerequisites hold over the Stage before.
  const gates: GateResult[] = [];
  if (stageIndex >= 0) {
    const prereqs = stages[stageIndex]!.prerequisites;
    // "Taken" needs only progress; Releases, Units and revisions are read only for the prerequisites that use them.
    // Each earlier Stage, and the Stage before, forgive what their failure budgets allow.
    const earlierIds = new Set(plan.earlier.map((s) => s.SpaceID));
    for (const st of stages.slice(0, stageIndex)) {
      const mine = st.spaces.filter((s) => earlierIds.has(s.SpaceID));
      if (mine.length) gates.push(...tolerate(evaluateGates([], view, mine.map((s) => ({ ...takenOnly(s, progress), explain: o.explain }))), st));
    }
    const attest = readsAttestations(co, prereqs) ? caller : undefined;
    const beforeStates = (await Promise.all(plan.before.map((s) => (prereqs.length ? gateState(deps, co, marks, progress, s, { attest }) : takenOnly(s, progress))))).map((s) => ({ ...s, explain: o.explain }));
    if (stageIndex === 0) gates.push(...beforeStates.flatMap((s) => prereqs.map((p) => evaluatePrerequisite(p, view, s))));
    else gates.push(...tolerate(evaluateGates(prereqs, view, beforeStates), stages.slice(0, stageIndex).findLast((s) => s.spaces.length) ?? { spaces: plan.before }));
  }
  // Holds in force over the Spaces still to take the change, the ChangeOrder's workflow, or the organization.
  const untaken = targets.filter((t) => !progress.has(t.SpaceID)).map((t) => t.SpaceID);
  if (untaken.length) gates.push(...(await holdGates(deps as Deps, caller, { action: 'promote', spaceIds: untaken, changeWorkflowId: co.ChangeWorkflowID })));
  const failedGates = gates.filter((g) => !g.Satisfied);
  if (o.explain) return { explained: { stageName, stageIndex, targets, before: plan.before, gates, failedGates, message: failedGates.length ? refusal(stageName ?? targets.map((t) => t.Slug).join(', '), failedGates, new Map([...stages.flatMap((s) => s.spaces), base].map((s) => [s.SpaceID, s]))) : undefined } };
  if (failedGates.length && !o.force) {
    for (const name of new Set(failedGates.map((g) => g.Prerequisite))) deps.telemetry?.count('GateRefusals', 1, { Gate: name });
    const spaceNames = new Map([...stages.flatMap((s) => s.spaces), base].map((s) => [s.SpaceID, s]));
    const result: PromoteResult = { ChangeOrderID: co.ChangeOrderID, Stage: stageName, DryRun: !!o.dryRun, Forced: false, Gates: gates, Spaces: [], Landed: 0, Total: targets.length };
    result.Message = refusal(stageName ?? targets.map((t) => t.Slug).join(', '), failedGates, spaceNames);
    result.Spaces = targets.map((t) => ({ SpaceID: t.SpaceID, SpaceSlug: t.Slug, Action: SpaceAction.Blocked, Units: [] }));
    throw new GateRefused(result.Message, result);
  }
  // Spaces of a wave are independent; MergeUnits waves put a Space after any target Space it merges from.
  const waves = co.UpdateType === 'MergeUnits' ? mergeWaves(targets, await mergeSources(deps, targets)) : [targets];
  return { stageName, targets, waves, gates, failedGates, taken: new Set(progress.keys()), marks, spaces, context, allowance: stageIndex >= 0 ? failureAllowance(stages[stageIndex]!.def, targets.length) : undefined };
}

/** Promotes one Space, reporting whatever went wrong as that Space's result (never thrown). */
function promoter(deps: ChangeDeps, caller: Caller, co: ChangeOrder, baseId: string, taken: Set<string>, ctx: () => PromoteContext): (space: Space) => Promise<SpaceResult> {
  return async (space) => {
    if (taken.has(space.SpaceID)) return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Unchanged, Units: [] };
    if (co.UpdateType === 'UpgradeUnit' && space.UpstreamSpaceID && space.UpstreamSpaceID !== baseId && !taken.has(space.UpstreamSpaceID)) {
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Blocked, Error: `its upstream space has not taken change order '${co.Slug}'`, Units: [] };
    }
    try {
      const r = await promoteSpace(deps, caller, ctx(), space);
      // Units in slug order, whatever order the Space listed them in (by id).
      r.Units.sort((a, b) => (a.UnitSlug < b.UnitSlug ? -1 : a.UnitSlug > b.UnitSlug ? 1 : 0));
      return r;
    } catch (e) {
      // Whatever failed — a rule, a conflict, the database going away — the Space is reported, never lost: what it
      // wrote landed whole per Unit (each Unit's revision and marks are one transaction), and a rerun finishes it.
      const message = e instanceof BatonError ? e.message : `stopped part-way (${(e as Error).name ?? 'error'}: ${(e as Error).message ?? String(e)}); some of its Units may have taken the change: promote again to finish`;
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Failed, Error: message, Units: [] };
    }
  };
}

/**
 * A promoter that stops starting Spaces once more than `allowance` of the Stage's Spaces have failed
 * (its failure budget): the rest are `NotStarted`. `counter` carries failures counted before (a job's
 * other parts).
 */
function budgeted(promoteOne: (s: Space) => Promise<SpaceResult>, allowance: number | undefined, stage: string | undefined, counter: { failed: number }): (s: Space) => Promise<SpaceResult> {
  if (allowance === undefined) return promoteOne;
  return async (space) => {
    if (counter.failed > allowance) {
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.NotStarted, Error: `not started: more than ${allowance} space(s) of stage '${stage}' failed, its failure budget; promote again once they are fixed`, Units: [] };
    }
    const r = await promoteOne(space);
    if (r.Action === SpaceAction.Failed) counter.failed++;
    return r;
  };
}

/** What every Space came to, as the answer says it: landed, failures, and the outcome. */
function conclude(co: ChangeOrder, g: Pick<Gated, 'stageName' | 'gates' | 'failedGates'> & { total: number }, spaces: SpaceResult[], dryRun: boolean): { outcome: 'Done' | 'Partial'; result: PromoteResult; failures: SpaceResult[] } {
  const result: PromoteResult = { ChangeOrderID: co.ChangeOrderID, Stage: g.stageName, DryRun: dryRun, Forced: g.failedGates.length > 0, Gates: g.gates, Spaces: spaces, Landed: 0, Total: g.total };
  result.Landed = spaces.filter((s) => s.Action === SpaceAction.Promote || s.Action === SpaceAction.Unchanged).length;
  const failures = spaces.filter((s) => s.Action === SpaceAction.Failed || s.Action === SpaceAction.Blocked || s.Action === SpaceAction.NotStarted);
  if (failures.length) result.Message = `${result.Landed} of ${result.Total} space(s) ${dryRun ? 'would take' : 'took'} change order '${co.Slug}'; ${failures.map((f) => `'${f.SpaceSlug}': ${f.Error}`).join('; ')}`;
  return { outcome: failures.length ? 'Partial' : 'Done', result, failures };
}

/** What the ChangeOrder records of a promotion (promoted Spaces, override, failures; the lease given back) and the events that say so. */
function promotionRecord(deps: ChangeDeps, caller: Caller, co: ChangeOrder, result: PromoteResult, failures: SpaceResult[], failedGates: GateResult[], targets: string[], forceReason: string | undefined, leaseId: string | undefined, allowance?: number) {
  deps.telemetry?.count('Promotions');
  deps.telemetry?.count('UnitsPromoted', result.Spaces.flatMap((s) => s.Units).filter((u) => u.RevisionNums?.length).length);
  const now = deps.now().toISOString();
  const stageName = result.Stage;
  const promoted = result.Spaces.filter((s) => s.Action === SpaceAction.Promote).map((s) => s.SpaceID);
  const events: BatonEvent[] = [];
  if (failures.length) events.push({ source: SOURCE, detailType: DetailType.PromotionFailed, detail: { OrganizationID: co.OrganizationID, ChangeOrderID: co.ChangeOrderID, Slug: co.Slug, Stage: stageName, SpaceIDs: failures.map((f) => f.SpaceID) } });
  if (result.Forced) {
    events.push({
      source: SOURCE,
      detailType: DetailType.PromotionOverridden,
      detail: { OrganizationID: co.OrganizationID, ChangeOrderID: co.ChangeOrderID, Slug: co.Slug, Stage: stageName, SpaceIDs: targets, FailedGates: recorded(failedGates), Reason: forceReason!, UserID: caller.UserID },
    });
  }
  const change = (c: ChangeOrder): Partial<ChangeOrder> => ({
    Promotions: promoted.length ? [...c.Promotions, { PromotedAt: now, SpaceIDs: promoted, Stage: stageName, UserID: caller.UserID }] : c.Promotions,
    PromotionOverrides: result.Forced ? [...c.PromotionOverrides, { FailedGates: recorded(failedGates), OverriddenAt: now, Reason: forceReason!, SpaceIDs: targets, Stage: stageName, UserID: caller.UserID }] : c.PromotionOverrides,
    ...(result.Spaces.some((s) => s.Action === SpaceAction.NotStarted)
      ? {
          PromotionHalts: [
            ...(c.PromotionHalts ?? []),
            { HaltedAt: now, Stage: stageName, UserID: caller.UserID, Allowance: allowance ?? 0, FailedSpaceIDs: result.Spaces.filter((s) => s.Action === SpaceAction.Failed).map((s) => s.SpaceID), NotStartedSpaceIDs: result.Spaces.filter((s) => s.Action === SpaceAction.NotStarted).map((s) => s.SpaceID) },
          ],
        }
      : {}),
    PromotionFailures: failures.length
      ? [
          ...c.PromotionFailures,
          {
            FailedAt: now,
            UserID: caller.UserID,
            Stage: stageName,
            Spaces: failures.map((f) => ({ SpaceID: f.SpaceID, SpaceSlug: f.SpaceSlug, Action: f.Action, Error: f.Error, Units: f.Units.filter((u) => u.Error).map((u) => ({ UnitID: u.UnitID, UnitSlug: u.UnitSlug, Error: u.Error!.Message })) })),
          },
        ]
      : c.PromotionFailures,
    // The lease goes back in the same write that records the promotion.
    ...(leaseId && c.PromotionLease?.LeaseID === leaseId ? { PromotionLease: undefined } : {}),
  });
  return { change, events };
}

async function promoteHeld(deps: ChangeDeps, caller: Caller, co: ChangeOrder, base: Space, o: PromoteOptions, lease?: { id: string; co: ChangeOrder; released: boolean }): Promise<PromoteOutcome> {
  const g = await gate(deps, caller, co, base, o);
  if ('early' in g) return g.early;
  if ('explained' in g) throw new Invalid('an explanation is asked of explainPromotion');
  const toDo = g.targets.filter((t) => !g.taken.has(t.SpaceID)).length;
  if (lease && runsAsJob(deps as Deps, toDo, o.async)) {
    // The job holds the lease (named by it) and gives it back when it records the promotion.
    const job = await startPromoteJob(deps as Deps, caller, co, base, o, g, lease.id);
    lease.released = true;
    return { outcome: 'Accepted', job };
  }
  const ctx = await promoteContext(deps, co, { prior: o.priorRevisions, dryRun: o.dryRun, marks: g.marks, spaces: g.spaces, protect: o.protect });
  const promoteOne = promoter(deps, caller, co, base.SpaceID, g.taken, () => ctx);
  const spaces: SpaceResult[] = [];
  const counter = { failed: 0 };
  for (const [i, wave] of g.waves.entries()) {
    // A later wave merges from Units the earlier one just marked: read the marks again.
    if (i > 0 && !o.dryRun) ctx.marks = await marksOf(deps, co);
    spaces.push(...(await bounded(wave, deps.promoteConcurrency ?? PROMOTE_CONCURRENCY, budgeted(promoteOne, g.allowance, g.stageName, counter))));
  }
  const { outcome, result, failures } = conclude(co, { ...g, total: g.targets.length }, spaces, !!o.dryRun);
  if (o.dryRun) return { outcome, result };
  const { change, events } = promotionRecord(deps, caller, co, result, failures, g.failedGates, g.targets.map((t) => t.SpaceID), o.forceReason, lease?.id, g.allowance);
  // The Stage the change reached, from what the gates read and the Spaces that took it now: recorded in the same write.
  const promoted = spaces.filter((s) => s.Action === SpaceAction.Promote).map((s) => s.SpaceID);
  const reached = co.ChangeWorkflow ? await computeStage(deps, caller, co, contextAfter(co, g.context, promoted, deps.now().toISOString())).catch(() => undefined) : undefined;
  const withStage = (c: ChangeOrder) => ({ ...change(c), ...(reached ? stageAdvance(c, reached).change : {}) });
  const allEvents = (c: ChangeOrder) => [...events, ...(reached ? stageAdvance(c, reached).events : [])];
  // The record of what happened is written as soon as the store answers again, or the answer says it could not be.
  const recorded = await persist(() => recordOn(deps, co, withStage, allEvents, [], lease?.co));
  if (recorded && lease) lease.released = true;
  if (!recorded) {
    result.Unrecorded = true;
    result.Message = `${result.Message ?? `change order '${co.Slug}' promoted`}; this promotion could not be recorded on the change order: the database is not answering (this answer is its only record; promote again once it is back)`;
    return { outcome: 'Partial', result };
  }
  if (co.ChangeWorkflow && !reached) await advanceStage(deps, caller, co).catch((e: unknown) => deps.telemetry?.error('advancing the stage after a promotion failed; the next event re-evaluates it', e));
  return { outcome, result };
}

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

async function startPromoteJob(deps: Deps, caller: Caller, co: ChangeOrder, base: Space, o: PromoteOptions, g: Gated, leaseId: string): Promise<JobRecord> {
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
  jobContexts.set(`${leaseId}:0`, promoteContext(deps, co, { prior: o.priorRevisions, marks: g.marks, spaces: g.spaces, protect: o.protect }));
  jobGates.set(leaseId, g.context);
  // Jobs this process started but another finished (or that never end) leave their entries: keep the last few.
  if (jobGates.size > 16) jobGates.delete(jobGates.keys().next().value!);
  try {
    return await startJob(deps, caller, { jobId: leaseId, kind: 'Promote', waves: g.waves, plan, subject: { ChangeOrderID: co.ChangeOrderID, ChangeOrderSlug: co.Slug, SpaceID: co.SpaceID, Stage: g.stageName } });
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
    const co = ctx ? (await ctx).co : await deps.store.getInSpace<ChangeOrder>('ChangeOrder', plan.SpaceID, plan.ChangeOrderID);
    if (!co) return { results: spaces.map((s) => ({ SpaceID: s.SpaceID, SpaceSlug: s.Slug, Action: SpaceAction.Failed, Error: 'the change order was deleted while it was being promoted', Units: [] })) };
    if (!ctx) {
      ctx = (async () => promoteContext(deps, co, { prior: plan.Options.priorRevisions, marks: await marksOf(deps, co), spaces: await deps.store.listSpaces(co.OrganizationID), protect: plan.Options.protect }))();
      jobContexts.set(key, ctx);
      ctx.catch(() => jobContexts.delete(key));
      if (jobContexts.size > 4) jobContexts.delete(jobContexts.keys().next().value!);
    }
    const c = await ctx;
    const one = promoter(deps, job.Caller as Caller, co, plan.BaseSpaceID, new Set(plan.Taken), () => c);
    // The budget counts the failures of the parts written before this one.
    return { results: await bounded(spaces, deps.promoteConcurrency ?? PROMOTE_CONCURRENCY, budgeted(one, plan.Allowance, plan.Stage, { failed: job.SpacesFailed ?? 0 })) };
  },
  gaveUp: (spaces, error) =>
    spaces.map((s) => ({ SpaceID: s.SpaceID, SpaceSlug: s.Slug, Action: SpaceAction.Failed, Error: `the job's worker gave up on it after every attempt (${error}); some of its Units may have taken the change: promote again to finish`, Units: [] })),
  summary: (r) => ({ SpaceID: r.SpaceID, Action: r.Action, ...(r.Error ? { Error: r.Error } : {}) }),
  async finish(deps, job, plan, results, end) {
    const co = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', plan.SpaceID, plan.ChangeOrderID))!;
    for (const k of [...jobContexts.keys()]) if (k.startsWith(`${job.JobID}:`)) jobContexts.delete(k);
    const { outcome, result, failures } = conclude(co, { stageName: plan.Stage, gates: plan.Gates, failedGates: plan.FailedGates, total: plan.TargetIDs.length }, results, false);
    const caller = job.Caller as Caller;
    const { change, events } = promotionRecord(deps, caller, co, result, failures, plan.FailedGates, plan.TargetIDs, plan.Options.forceReason, job.JobID, plan.Allowance);
    // Started in this process: the Stage reached is recorded with the promotion, from what the gates read.
    const gate = jobGates.get(job.JobID);
    jobGates.delete(job.JobID);
    const promoted = results.filter((s) => s.Action === SpaceAction.Promote).map((s) => s.SpaceID);
    const reached = gate && co.ChangeWorkflow ? await computeStage(deps, caller, co, contextAfter(co, gate, promoted, deps.now().toISOString())).catch(() => undefined) : undefined;
    if (reached) stageRecorded.add(job.JobID);
    if (stageRecorded.size > 16) stageRecorded.delete(stageRecorded.values().next().value!);
    await recordOn(deps, co, (c) => ({ ...change(c), ...(reached ? stageAdvance(c, reached).change : {}) }), (c) => [...events, ...(reached ? stageAdvance(c, reached).events : [])], end(outcome === 'Partial' ? 207 : 200, result));
  },
  async after(deps, job, plan) {
    if (stageRecorded.delete(job.JobID)) return;
    await advanceStage(deps, job.Caller as Caller, { SpaceID: plan.SpaceID, ChangeOrderID: plan.ChangeOrderID }).catch((e: unknown) => deps.telemetry?.error('advancing the stage after a promotion job failed; the next event re-evaluates it', e));
  },
};

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

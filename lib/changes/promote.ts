import {
  failureAllowance,
  requireVerb,
  type Explanation,
  type Caller,
  type ChangeOrder,
  type GateResult,
  type Hold,
  type Link,
  type Space,
} from '../model/entities.ts';
import { BatonError, Conflict, GateRefused, Invalid, Unavailable } from '../model/errors.ts';
import { evaluateGates, evaluatePrerequisite, refusal, tolerate } from '../gates/prerequisites.ts';
import { bounded } from '../util/concurrency.ts';
import { matches, parseWhere } from '../where/index.ts';
import { findSpace } from '../variants/lookup.ts';
import { marksOf, withPublishMarks, type CoMarks } from './marks.ts';
import { planPromotion } from './plan.ts';
import type { ChangeDeps } from './ports.ts';
import { advanceStage, computeStage, contextAfter, recordOn, stageAdvance } from './progress.ts';
import { SpaceAction, type SpaceResult } from './promote-space.ts';
import { promoteContext } from './promote-context.ts';
import {
  gateContext,
  gateState,
  orgSpaces,
  peopleOnce,
  readsAttestations,
  readsChanged,
  stateKey,
  takenOnly,
  type GateContext,
  type Known,
} from './stages.ts';
import { mergeWaves } from './waves.ts';
import { runsAsJob } from './jobs.ts';
import { startPromoteJob } from './promote-job.ts';
import {
  budgeted,
  conclude,
  promoter,
  promotionRecord,
  PROMOTE_CONCURRENCY,
  type Gated,
  type PromoteOptions,
  type PromoteOutcome,
  type PromoteResult,
} from './promote-steps.ts';
import { holdGates, holdsInForce } from './holds.ts';

export { PROMOTE_CONCURRENCY, type PromoteOptions, type PromoteOutcome, type PromoteResult } from './promote-steps.ts';

/** The target Spaces a promotion names (by reference, or by a where over the ChangeOrder's scope), each in scope. */
async function namedTargets(deps: ChangeDeps, caller: Caller, co: ChangeOrder, o: PromoteOptions): Promise<Space[]> {
  const named: Space[] = [];
  for (const ref of o.spaces ?? []) named.push(await findSpace(deps, caller, ref));
  if (o.whereSpace) {
    const q = parseWhere(o.whereSpace, 'Space');
    named.push(
      ...(await orgSpaces(deps, caller, [q])).filter((s) => co.InScopeSpaceIDs.includes(s.SpaceID) && matches(q, s)),
    );
  }
  for (const s of named)
    if (!co.InScopeSpaceIDs.includes(s.SpaceID))
      throw new Invalid(`space '${s.Slug}' is not in the scope of change order '${co.Slug}'`);
  return named;
}

/** The Space IDs each target merges from by MergeUnits Links, for ordering waves. */
async function mergeSources(deps: ChangeDeps, targets: Space[]): Promise<Map<string, Set<string>>> {
  return new Map(
    await Promise.all(
      targets.map(
        async (t) =>
          [
            t.SpaceID,
            new Set(
              (await deps.store.listInSpace<Link>('Link', t.SpaceID))
                .filter((l) => l.UpdateType === 'MergeUnits')
                .map((l) => l.ToSpaceID),
            ),
          ] as const,
      ),
    ),
  );
}

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

/** Gives the lease back, if this promotion still holds it. */
async function releaseLease(deps: ChangeDeps, coRef: ChangeOrder, id: string): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const co = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID))!;
    if (co.PromotionLease?.LeaseID !== id) return;
    try {
      await deps.store.transact([
        {
          op: 'update',
          kind: 'ChangeOrder',
          item: { ...co, PromotionLease: undefined, Version: co.Version + 1 },
          expectedVersion: co.Version,
        },
      ]);
      return;
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
    }
  }
}

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
export async function explainPromotion(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  base: Space,
  o: Pick<PromoteOptions, 'targetStage' | 'spaces' | 'whereSpace'>,
  known?: Known,
): Promise<Explanation> {
  const g = await gate(deps, caller, co, base, { ...o, dryRun: true, explain: true }, known);
  const pick = (s: Space) => ({ SpaceID: s.SpaceID, SpaceSlug: s.Slug });
  if ('early' in g)
    return {
      ChangeOrderID: co.ChangeOrderID,
      Slug: co.Slug,
      Targets: [],
      Over: [],
      Open: false,
      Gates: [],
      Message: 'result' in g.early ? g.early.result.Message : undefined,
    };
  if (!('explained' in g)) throw new Error('unreachable: an explanation stops at the gates');
  const e = g.explained;
  const failed = await failedTargets(deps, co, e.targets);
  return {
    ChangeOrderID: co.ChangeOrderID,
    Slug: co.Slug,
    ...(e.stageName ? { Stage: e.stageName } : {}),
    Targets: e.targets.map(pick),
    Over: e.before.map(pick),
    Open: e.failedGates.length === 0,
    Gates: e.gates,
    ...(e.message ? { Message: e.message } : {}),
    ...(failed.length ? { Failed: failed } : {}),
  };
}

/** The Spaces a promotion would go to whose last promotion failed or was blocked there, and have not taken the change since: why, as recorded. */
async function failedTargets(
  deps: ChangeDeps,
  co: ChangeOrder,
  targets: Space[],
): Promise<NonNullable<Explanation['Failed']>> {
  if (!co.PromotionFailures?.length || !targets.length) return [];
  const taken = new Set(
    (await deps.store.progressOf(co.ChangeOrderID)).filter((p) => !p.RestoredAt).map((p) => p.SpaceID),
  );
  const out: NonNullable<Explanation['Failed']> = [];
  for (const t of targets) {
    if (taken.has(t.SpaceID)) continue;
    const last = [...co.PromotionFailures].reverse().find((f) => f.Spaces.some((x) => x.SpaceID === t.SpaceID));
    const entry = last?.Spaces.find((x) => x.SpaceID === t.SpaceID);
    if (!last || !entry) continue;
    const error = entry.Error ?? entry.Units.map((u) => `${u.UnitSlug}: ${u.Error}`).join('; ');
    out.push({ SpaceID: t.SpaceID, SpaceSlug: t.Slug, FailedAt: last.FailedAt, Error: error || entry.Action });
  }
  return out;
}

/** What the gates of a promotion read first, together: the ChangeOrder's marks, its Spaces and progress, and the holds in force. */
interface GateReads {
  marks: Promise<CoMarks>;
  context: Promise<GateContext>;
  holds: Promise<Hold[]>;
}

/** Starts the reads the gates make first (each failure is the gates' to report, when they await it). */
function gateReads(deps: ChangeDeps, caller: Caller, co: ChangeOrder): GateReads {
  // A merge reads no publish marks: they are read later only when a gate needs them (an Invoke reads them to pick its Units).
  const r = {
    marks: marksOf(deps, co, { publish: co.UpdateType === 'Invoke' }),
    context: gateContext(deps, caller, co),
    holds: holdsInForce(deps, caller),
  };
  for (const p of Object.values(r)) p.catch(() => undefined);
  return r;
}

/** Plans a promotion and evaluates its gates (refusing, unless forced, when one fails); nothing is written. */
async function gate(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  base: Space,
  o: PromoteOptions,
  known?: Known,
  early?: GateReads,
): Promise<{ early: PromoteOutcome } | { explained: Explained } | Gated> {
  if (co.AbortedReason)
    throw new Conflict(`change order '${co.Slug}' was aborted (${co.AbortedReason}); promote a new one`);
  if (o.force && !o.forceReason) throw new Invalid('--force needs --force-reason, which the change order records');
  if (o.protect && co.UpdateType !== 'Invoke')
    throw new Invalid(
      '--protect is refused here: promoting a change order along the clone lineage or over MergeUnits links is a merge, which protection holds paths against',
    );
  // The holds in force are read alongside what the plan needs (they are filtered by the Spaces it finds).
  const reads = known ? undefined : (early ?? gateReads(deps, caller, co));
  const holds = reads?.holds ?? holdsInForce(deps, caller);
  holds.catch(() => undefined);
  const [read, context] = reads ? await Promise.all([reads.marks, reads.context]) : [known!.marks, known!.context];
  let marks = read;
  const { spaces, stages, progress, view } = context;
  const named = o.spaces?.length || o.whereSpace ? await namedTargets(deps, caller, co, o) : undefined;
  const plan = planPromotion(
    stages,
    base,
    (id) => progress.has(id),
    named ? { named } : { targetStage: o.targetStage },
  );
  if ('noWorkflow' in plan) throw new Invalid(`change order '${co.Slug}' has no workflow: name the spaces to promote`);
  if ('unknownStage' in plan)
    throw new Invalid(
      `the workflow of change order '${co.Slug}' has no stage '${plan.unknownStage}'; stages: ${stages.map((s) => s.name).join(', ')}`,
    );
  if ('everyStageReached' in plan) {
    return {
      early: {
        outcome: 'Done',
        result: {
          ChangeOrderID: co.ChangeOrderID,
          DryRun: !!o.dryRun,
          Forced: false,
          Gates: [],
          Spaces: [],
          Landed: 0,
          Total: 0,
          Message: `change order '${co.Slug}' has reached every stage`,
        },
      },
    };
  }
  const { stageIndex, targets } = plan;
  if (!o.dryRun)
    requireVerb(
      caller,
      targets.filter((t) => !progress.has(t.SpaceID)),
      'Edit',
      `promote change order '${co.Slug}' into it`,
    );
  const stageName = stageIndex >= 0 ? stages[stageIndex]?.name : undefined;
  // Gates: every earlier Stage must have taken the change; the target Stage's prerequisites hold over the Stage before.
  const gates: GateResult[] = [];
  if (stageIndex >= 0) {
    const prereqs = stages[stageIndex]!.prerequisites;
    if (prereqs.length) marks = await withPublishMarks(deps, co, marks);
    // "Taken" needs only progress; Releases, Units and revisions are read only for the prerequisites that use them.
    // Each earlier Stage, and the Stage before, forgive what their failure budgets allow.
    const earlierIds = new Set(plan.earlier.map((s) => s.SpaceID));
    for (const st of stages.slice(0, stageIndex)) {
      const mine = st.spaces.filter((s) => earlierIds.has(s.SpaceID));
      if (mine.length)
        gates.push(
          ...tolerate(
            evaluateGates(
              [],
              view,
              mine.map((s) => ({ ...takenOnly(s, progress), explain: o.explain })),
            ),
            st,
          ),
        );
    }
    const attest = readsAttestations(co, prereqs) ? caller : undefined;
    const people = peopleOnce(deps, caller);
    // An explanation of its own also reads attestations of other content (which it names as not counting); one sharing the rollout's reads does not.
    const read = { attest, changed: readsChanged(co, prereqs), people, otherContent: !!o.explain && !known };
    const stateOf = (s: Space) =>
      known?.states.get(stateKey(s.SpaceID, read)) ?? gateState(deps, co, marks, progress, s, read);
    const beforeStates = (
      await Promise.all(plan.before.map((s) => (prereqs.length ? stateOf(s) : takenOnly(s, progress))))
    ).map((s) => ({ ...s, explain: o.explain }));
    if (stageIndex === 0)
      gates.push(...beforeStates.flatMap((s) => prereqs.map((p) => evaluatePrerequisite(p, view, s))));
    else
      gates.push(
        ...tolerate(
          evaluateGates(prereqs, view, beforeStates),
          stages.slice(0, stageIndex).findLast((s) => s.spaces.length) ?? { spaces: plan.before },
        ),
      );
  }
  // Holds in force over the Spaces still to take the change, the ChangeOrder's workflow, or the organization.
  const untaken = targets.filter((t) => !progress.has(t.SpaceID)).map((t) => t.SpaceID);
  if (untaken.length)
    gates.push(
      ...(await holdGates(
        deps,
        caller,
        { action: 'promote', spaceIds: untaken, changeWorkflowId: co.ChangeWorkflowID },
        holds,
      )),
    );
  const failedGates = gates.filter((g) => !g.Satisfied);
  if (o.explain)
    return {
      explained: {
        stageName,
        stageIndex,
        targets,
        before: plan.before,
        gates,
        failedGates,
        message: failedGates.length
          ? refusal(
              stageName ?? targets.map((t) => t.Slug).join(', '),
              failedGates,
              new Map([...stages.flatMap((s) => s.spaces), base].map((s) => [s.SpaceID, s])),
            )
          : undefined,
      },
    };
  if (failedGates.length && !o.force) {
    for (const name of new Set(failedGates.map((g) => g.Prerequisite)))
      deps.telemetry?.count('GateRefusals', 1, { Gate: name });
    const spaceNames = new Map([...stages.flatMap((s) => s.spaces), base].map((s) => [s.SpaceID, s]));
    const result: PromoteResult = {
      ChangeOrderID: co.ChangeOrderID,
      Stage: stageName,
      DryRun: !!o.dryRun,
      Forced: false,
      Gates: gates,
      Spaces: [],
      Landed: 0,
      Total: targets.length,
    };
    result.Message = refusal(stageName ?? targets.map((t) => t.Slug).join(', '), failedGates, spaceNames);
    result.Spaces = targets.map((t) => ({
      SpaceID: t.SpaceID,
      SpaceSlug: t.Slug,
      Action: SpaceAction.Blocked,
      Units: [],
    }));
    throw new GateRefused(result.Message, result);
  }
  // Spaces of a wave are independent; MergeUnits waves put a Space after any target Space it merges from.
  const waves = co.UpdateType === 'MergeUnits' ? mergeWaves(targets, await mergeSources(deps, targets)) : [targets];
  return {
    stageName,
    targets,
    waves,
    gates,
    failedGates,
    taken: new Set(progress.keys()),
    marks,
    spaces,
    context,
    allowance: stageIndex >= 0 ? failureAllowance(stages[stageIndex]!.def, targets.length) : undefined,
  };
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
  const { change, events } = promotionRecord(
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
  );
  // The Stage the change reached, from what the gates read and the Spaces that took it now: recorded in the same write.
  const promoted = spaces.filter((s) => s.Action === SpaceAction.Promote).map((s) => s.SpaceID);
  const reached = co.ChangeWorkflow
    ? await computeStage(deps, caller, co, contextAfter(co, g.context, promoted, deps.now().toISOString())).catch(
        () => undefined,
      )
    : undefined;
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
  if (co.ChangeWorkflow && !reached)
    await advanceStage(deps, caller, co).catch((e: unknown) =>
      deps.telemetry?.error('advancing the stage after a promotion failed; the next event re-evaluates it', e),
    );
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

/** Step 2 of a promotion: its gates, read and evaluated before anything is written (refusing unless forced), and the plan ready to run. */
import { holdGates, holdsInForce } from '../holds.ts';
import { requireOverrideApprovals, windowGatesFor } from '../windows.ts';
import { marksOf, withPublishMarks, type CoMarks } from '../marks.ts';
import type { ChangeDeps } from '../ports.ts';
import { planPromotion, namedTargets, mergeSources } from './plan.ts';
import {
  SpaceAction,
  type Explained,
  type Gated,
  type PromoteOptions,
  type PromoteOutcome,
  type PromoteResult,
} from './types.ts';
import {
  gateContext,
  gateState,
  peopleOnce,
  readsAttestations,
  readsChanged,
  stateKey,
  takenOnly,
  type GateContext,
  type Known,
} from '../stages.ts';
import { mergeWaves } from '../waves.ts';
import { evaluateGates, evaluatePrerequisite, refusal, tolerate } from '../../gates/prerequisites.ts';
import {
  failureAllowance,
  requireVerb,
  type Caller,
  type ChangeOrder,
  type GateResult,
  type DeployWindow,
  type Hold,
  type Space,
} from '../../model/entities.ts';
import { Conflict, GateRefused, Invalid } from '../../model/errors.ts';

/** What the gates of a promotion read first, together: the ChangeOrder's marks, its Spaces and progress, the holds in force and the deploy windows. */
export interface GateReads {
  /** Read on first call (an explanation whose gates read no marks never reads them), or started with the rest. */
  marks: () => Promise<CoMarks>;
  context: Promise<GateContext>;
  holds: Promise<Hold[]>;
  windows: Promise<DeployWindow[]>;
}

/**
 * Starts the reads the gates make first (each failure is the gates' to report, when they await it). With
 * `marks: false` (an explanation) the marks wait until a gate asks: at 10,000 Spaces they are 22 of its 34 requests.
 */
export function gateReads(deps: ChangeDeps, caller: Caller, co: ChangeOrder, o: { marks?: boolean } = {}): GateReads {
  let marks: Promise<CoMarks> | undefined;
  // A merge reads no publish marks: they are read later only when a gate needs them (an Invoke reads them to pick its Units).
  const readMarks = () => (marks ??= marksOf(deps, co, { publish: co.UpdateType === 'Invoke' }));
  const r = {
    marks: readMarks,
    context: gateContext(deps, caller, co),
    holds: holdsInForce(deps, caller),
    windows: deps.store.listWindows(caller.OrganizationID),
  };
  if (o.marks !== false) readMarks().catch(() => undefined);
  for (const p of [r.context, r.holds, r.windows]) p.catch(() => undefined);
  return r;
}

/** Plans a promotion and evaluates its gates (refusing, unless forced, when one fails); nothing is written. */
export async function gate(
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
  const reads = known ? undefined : (early ?? gateReads(deps, caller, co, { marks: !o.explain }));
  const holds = reads?.holds ?? holdsInForce(deps, caller);
  holds.catch(() => undefined);
  const windows = reads?.windows ?? deps.store.listWindows(caller.OrganizationID);
  windows.catch(() => undefined);
  const context = reads ? await reads.context : known!.context;
  const readMarks = reads ? reads.marks : () => Promise.resolve(known!.marks);
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
  // Read only when a prerequisite needs them (with the publish marks) or the promotion goes on.
  let marks: CoMarks | undefined;
  if (stageIndex >= 0) {
    const prereqs = stages[stageIndex]!.prerequisites;
    if (prereqs.length) marks = await withPublishMarks(deps, co, await readMarks());
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
      known?.states.get(stateKey(s.SpaceID, read)) ?? gateState(deps, co, marks!, progress, s, read);
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
        {
          action: 'promote',
          spaceIds: untaken,
          changeWorkflowId: co.ChangeWorkflowID,
          changeOrderId: co.ChangeOrderID,
        },
        holds,
      )),
    );
  // Deploy windows over the same Spaces: those of the Stage promoted into, or the Stages the named Spaces are in.
  if (untaken.length) {
    const stageOf = new Map(stages.flatMap((st) => st.spaces.map((s) => [s.SpaceID, st.name] as const)));
    gates.push(
      ...(await windowGatesFor(
        deps,
        caller,
        'promote',
        {
          spaces: targets.filter((t) => !progress.has(t.SpaceID)),
          changeWorkflowId: co.ChangeWorkflowID,
          stageOf: (s) => stageName ?? stageOf.get(s.SpaceID),
        },
        windows,
      )),
    );
  }
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
  // Breaking glass through a window that asks for override approvals needs them from other people first.
  if (failedGates.length) requireOverrideApprovals(co, caller, failedGates);
  // Spaces of a wave are independent; MergeUnits waves put a Space after any target Space it merges from.
  const waves = co.UpdateType === 'MergeUnits' ? mergeWaves(targets, await mergeSources(deps, targets)) : [targets];
  return {
    stageName,
    targets,
    waves,
    gates,
    failedGates,
    taken: new Set(progress.keys()),
    marks: marks ?? (await readMarks()),
    spaces,
    context,
    allowance: stageIndex >= 0 ? failureAllowance(stages[stageIndex]!.def, targets.length) : undefined,
  };
}

/**
 * What re-runs a Stage's gates, each trigger named here: the Stage a ChangeOrder has reached is computed
 * (`computeStage`: the latest Stage every Space of which took it, Completed once Final holds over the last)
 * and recorded if later (`advanceStage`, never back) when
 * - a promotion is recorded (`stageReachedBy`, in the promotion's own write, from what its gates read;
 *   `afterPromotion` when that could not be computed): promote/request.ts and promote/job.ts;
 * - a Release of it is recorded in a Space (`afterRelease`): progress.ts;
 * - its workflow is replaced (`afterWorkflowChange`): workflows.ts;
 * - a Release's live status changes, or an attestation is recorded or revoked in a Space: the Stage consumer
 *   (`consumeStageEvent` in stage-events.ts, on the bus's STAGE_RULE) re-evaluates every ChangeOrder in flight
 *   that reached it (`reevaluateFor`), after checking a live-status change for a recall (recall.ts).
 */
import { marksOf } from './marks.ts';
import type { ChangeDeps } from './ports.ts';

import {
  gateContext,
  gateState,
  gateView,
  peopleOnce,
  readsAttestations,
  readsChanged,
  stateKey,
  type GateContext,
  type Known,
} from './stages.ts';
import { deriveProgress, lastNonEmpty, reachedStage, recordedStageIndex } from './state.ts';
import { DetailType, SOURCE, type BatonEvent } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { evaluateGates } from '../gates/prerequisites.ts';
import { COMPLETED, type Caller, type ChangeOrder, type Progress } from '../model/entities.ts';
import { retryOnConflict } from '../util/retry.ts';

/** The latest Stage every Space of which took the change, or Completed once the last also satisfies Final. */
export async function computeStage(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  known?: GateContext,
  read?: Known,
): Promise<{ stage?: string; index: number }> {
  const { stages, progress, view } = known ?? read?.context ?? (await gateContext(deps, caller, co));
  const index = reachedStage(stages, (id) => progress.has(id));
  if (index < 0) return { index };
  if (lastNonEmpty(stages, index)) {
    const final = co.ChangeWorkflow?.Final?.Prerequisites ?? [];
    // Nothing to hold the last Stage back: Completed, without reading a single Space's state.
    if (!final.length) return { stage: COMPLETED, index: stages.length };
    const marks = read?.marks ?? (await marksOf(deps, co));
    const o = {
      attest: readsAttestations(co, final) ? caller : undefined,
      changed: readsChanged(co, final),
      people: peopleOnce(deps, caller),
    };
    // A state the caller already read (the rollout's cells of the last Stage) is not read again.
    const states = await Promise.all(
      stages[index]!.spaces.map(
        (s) => read?.states.get(stateKey(s.SpaceID, o)) ?? gateState(deps, co, marks, progress, s, o),
      ),
    );
    if (evaluateGates(final, view, states).every((g) => g.Satisfied)) return { stage: COMPLETED, index: stages.length };
  }
  return { stage: stages[index]!.name, index };
}

/** Records the Stage the change has reached, if later than the recorded one: it never moves back. */
export async function advanceStage(
  deps: ChangeDeps,
  caller: Caller,
  coRef: { SpaceID: string; ChangeOrderID: string },
): Promise<void> {
  await retryOnConflict(
    async () => {
      const co = await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID);
      if (!co?.ChangeWorkflow) return;
      const { stage, index } = await computeStage(deps, caller, co);
      if (!stage || index <= recordedStageIndex(co)) return;
      const detail = {
        OrganizationID: co.OrganizationID,
        SpaceID: co.SpaceID,
        ChangeOrderID: co.ChangeOrderID,
        Slug: co.Slug,
        Stage: stage,
        PreviousStage: co.Stage,
      };
      const events = eventOps(deps, [
        { source: SOURCE, detailType: DetailType.ChangeOrderStageAdvanced, detail },
        ...(stage === COMPLETED ? [{ source: SOURCE, detailType: DetailType.ChangeOrderCompleted, detail }] : []),
      ]);
      await deps.store.transact([
        {
          op: 'update',
          kind: 'ChangeOrder',
          item: { ...co, Stage: stage, UpdatedAt: deps.now().toISOString(), Version: co.Version + 1 },
          expectedVersion: co.Version,
        },
        ...events,
      ]);
    },
    // Another writer kept moving the ChangeOrder: the next event re-evaluates it.
    () => undefined,
  );
}

/**
 * The context the gates read, after `taken` Spaces took the change (as recorded by the promotion that
 * just ran): what `gateContext` would read again, without reading it.
 */
export function contextAfter(co: ChangeOrder, ctx: GateContext, taken: string[], now: string): GateContext {
  const progress = new Map(ctx.progress);
  for (const id of taken)
    if (!progress.has(id))
      progress.set(id, {
        ChangeOrderID: co.ChangeOrderID,
        BaseSpaceID: co.SpaceID,
        SpaceID: id,
        ResolvedAt: now,
        Version: 1,
      });
  return {
    ...ctx,
    progress,
    view: gateView(
      { ...co, ...deriveProgress(co, [...progress.values()], new Map(ctx.spaces.map((s) => [s.SpaceID, s]))) },
      ctx.spaces,
    ),
  };
}

/** The Stage field and the events of a ChangeOrder moving from its recorded Stage to `stage`, if that is later. */
export function stageAdvance(
  co: ChangeOrder,
  stage: { stage?: string; index: number },
): { change: Partial<ChangeOrder>; events: BatonEvent[] } {
  if (!stage.stage || stage.index <= recordedStageIndex(co)) return { change: {}, events: [] };
  const detail = {
    OrganizationID: co.OrganizationID,
    SpaceID: co.SpaceID,
    ChangeOrderID: co.ChangeOrderID,
    Slug: co.Slug,
    Stage: stage.stage,
    PreviousStage: co.Stage,
  };
  return {
    change: { Stage: stage.stage },
    events: [
      { source: SOURCE, detailType: DetailType.ChangeOrderStageAdvanced, detail },
      ...(stage.stage === COMPLETED ? [{ source: SOURCE, detailType: DetailType.ChangeOrderCompleted, detail }] : []),
    ],
  };
}

/**
 * After a live-status change: the Stages of the ChangeOrders that Space took may advance (to Completed, say).
 * `first` runs on each before (a recall, lib/changes/stage-events.ts).
 */
export async function reevaluateFor(
  deps: ChangeDeps,
  caller: Caller,
  spaceId: string,
  first?: (co: ChangeOrder, progress: Progress) => Promise<void>,
): Promise<void> {
  // The organization's ChangeOrders in flight that reached the Space (their progress there read by key), not its history of ChangeOrders.
  const reaching = await deps.store.changeOrdersReaching(caller.OrganizationID, spaceId, { inFlight: true });
  for (const { co, progress } of reaching) {
    if (first) await first(co, progress);
    await advanceStage(deps, caller, co);
  }
}

/**
 * Trigger: a promotion's Spaces took the change. The Stage it reached, from what the promotion's gates read
 * (nothing read again), to record in the promotion's own write; undefined without a workflow or when it could
 * not be computed (then `afterPromotion` re-evaluates once the record is written).
 */
export async function stageReachedBy(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  gates: GateContext | undefined,
  promoted: string[],
): Promise<{ stage?: string; index: number } | undefined> {
  if (!gates || !co.ChangeWorkflow) return undefined;
  return computeStage(deps, caller, co, contextAfter(co, gates, promoted, deps.now().toISOString())).catch(
    () => undefined,
  );
}

/** Trigger: a promotion was recorded without the Stage it reached (`what`: the promotion, as its error says). */
export async function afterPromotion(
  deps: ChangeDeps,
  caller: Caller,
  co: { SpaceID: string; ChangeOrderID: string },
  what: string,
): Promise<void> {
  await advanceStage(deps, caller, co).catch((e: unknown) =>
    deps.telemetry?.error(`advancing the stage after ${what} failed; the next event re-evaluates it`, e),
  );
}

/** Trigger: a Release of the ChangeOrder was recorded in one of its Spaces (a Released gate may now hold). */
export const afterRelease = (deps: ChangeDeps, caller: Caller, co: ChangeOrder): Promise<void> =>
  advanceStage(deps, caller, co);

/** Trigger: the ChangeOrder's workflow was replaced (its Stages and gates are new). */
export const afterWorkflowChange = (deps: ChangeDeps, caller: Caller, co: ChangeOrder): Promise<void> =>
  advanceStage(deps, caller, co);

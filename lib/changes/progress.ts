import {
  COMPLETED,
  type Caller,
  type ChangeOrder,
  type ChangeOrderView,
  type Progress,
  type Release,
  type Space,
  type Unit,
} from '../model/entities.ts';
import { Conflict, Unprocessable } from '../model/errors.ts';
import { evaluateGates, evaluatePrerequisite } from '../gates/prerequisites.ts';
import { DetailType, SOURCE, type BatonEvent } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { retryOnConflict } from '../util/retry.ts';
import type { StoreOp } from '../ports/store.ts';
import { marksIn, marksOf } from './marks.ts';
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
import { effectiveProgress } from './selection.ts';
import { deriveProgress, lastNonEmpty, reachedStage, recordedStageIndex } from './state.ts';

/** A ChangeOrder with State and the Space sets derived from its progress; Completed from Final over the last Stage when asked. */
export async function derive(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  opts: { completed?: boolean; spaces?: Map<string, Space> } = {},
): Promise<ChangeOrderView> {
  // A list derives many ChangeOrders from one reading of the organization's Spaces.
  const spaces =
    opts.spaces ?? new Map((await deps.store.listSpaces(caller.OrganizationID)).map((s) => [s.SpaceID, s]));
  const progress = await effectiveProgress(deps, co, await deps.store.progressOf(co.ChangeOrderID), spaces);
  const out: ChangeOrderView = { ...co, ...deriveProgress(co, progress, spaces) };
  if (opts.completed && co.ChangeWorkflow && co.Stage !== COMPLETED)
    out.Completed = (await computeStage(deps, caller, co)).stage === COMPLETED;
  return out;
}

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
 * Applies a change to the ChangeOrder record (failures, overrides, promotions, the Stage reached), with
 * the events it decides on the record as written, retrying a lost race. `known` is the record as the
 * caller last wrote it: tried first, read again only when someone else wrote since.
 */
export async function recordOn(
  deps: ChangeDeps,
  coRef: ChangeOrder,
  change: (co: ChangeOrder) => Partial<ChangeOrder>,
  events: BatonEvent[] | ((co: ChangeOrder) => BatonEvent[]) = [],
  also: StoreOp[] = [],
  known?: ChangeOrder,
): Promise<void> {
  let attempt = 0;
  await retryOnConflict(
    async () => {
      const co =
        attempt++ === 0 && known
          ? known
          : (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID))!;
      const evs = typeof events === 'function' ? events(co) : events;
      await deps.store.transact([
        {
          op: 'update',
          kind: 'ChangeOrder',
          item: { ...co, ...change(co), UpdatedAt: deps.now().toISOString(), Version: co.Version + 1 },
          expectedVersion: co.Version,
        },
        ...eventOps(deps, evs),
        ...also,
      ]);
    },
    () => {
      throw new Conflict('the change order kept changing; retry');
    },
  );
}

/** Records that a Space took the ChangeOrder (once; a rerun finds it there). */
export async function recordTaken(deps: ChangeDeps, co: ChangeOrder, space: Space, now: string): Promise<void> {
  try {
    await deps.store.transact([
      {
        op: 'create',
        kind: 'Progress',
        item: {
          ChangeOrderID: co.ChangeOrderID,
          BaseSpaceID: co.SpaceID,
          SpaceID: space.SpaceID,
          ResolvedAt: now,
          Version: 1,
        } satisfies Progress,
      },
    ]);
  } catch (e) {
    if (!(e instanceof Conflict)) throw e;
  }
}

/**
 * After a Release is published in a Space: each ChangeOrder the Space took and had not released yet
 * is released there when this Release carries it; then its Stage may advance.
 */
export async function recordRelease(deps: ChangeDeps, caller: Caller, space: Space, release: Release): Promise<void> {
  // The ChangeOrders that reached the Space and have a Release (or a restore's) still to record there: read by the
  // Space's progress, not the organization's ChangeOrders; each progress read again by key before it is written.
  const reaching = await deps.store.changeOrdersReaching(caller.OrganizationID, space.SpaceID, { toRelease: true });
  // The Space's Units, listed once for every ChangeOrder whose marks on them are read.
  let units: Promise<Unit[]> | undefined;
  const listed = () => (units ??= deps.store.listUnits(space.SpaceID));
  for (const { co } of reaching) {
    const progress = await deps.store.progressAt(co.ChangeOrderID, space.SpaceID);
    if (progress?.RestoredAt && !progress.RestoreReleaseID) {
      await recordRestoreRelease(deps, co, space, progress, release, listed());
      continue;
    }
    if (!progress || progress.ReleaseID) continue;
    const marks = await marksIn(deps, co, space, listed());
    const state = await gateState(deps, co, marks, new Map([[space.SpaceID, progress]]), space, { changed: false });
    if (!state.carries(release)) continue;
    const next: Progress = {
      ...progress,
      ReleaseID: release.ReleaseID,
      ReleaseNum: release.ReleaseNum,
      ReleasedAt: release.PublishedAt,
      Version: progress.Version + 1,
    };
    try {
      await deps.store.transact([{ op: 'update', kind: 'Progress', item: next, expectedVersion: progress.Version }]);
    } catch (e) {
      // Another publish recorded the release first.
      if (!(e instanceof Conflict)) throw e;
    }
    await advanceStage(deps, caller, co);
  }
}

/** A Release of a demoted Space publishes what the restore marks when it bundles each restored Unit at that revision or later. */
async function recordRestoreRelease(
  deps: ChangeDeps,
  co: ChangeOrder,
  space: Space,
  progress: Progress,
  release: Release,
  units: Promise<Unit[]>,
): Promise<void> {
  const marks = await marksIn(deps, co, space, units);
  const restored = [...marks.restore.values()].filter((m) => m.SpaceID === space.SpaceID);
  if (
    !restored.length ||
    !restored.every((m) => (release.Units.find((u) => u.UnitID === m.UnitID)?.RevisionNum ?? 0) >= m.RevisionNum)
  )
    return;
  try {
    await deps.store.transact([
      {
        op: 'update',
        kind: 'Progress',
        item: {
          ...progress,
          RestoreReleaseID: release.ReleaseID,
          RestoreReleaseNum: release.ReleaseNum,
          Version: progress.Version + 1,
        },
        expectedVersion: progress.Version,
      },
    ]);
  } catch (e) {
    if (!(e instanceof Conflict)) throw e;
  }
}

/** After a live-status change: the Stages of the ChangeOrders that Space took may advance (to Completed, say). */
export async function reevaluateFor(deps: ChangeDeps, caller: Caller, spaceId: string): Promise<void> {
  // The organization's ChangeOrders in flight that reached the Space (their progress there read by key), not its history of ChangeOrders.
  const reaching = await deps.store.changeOrdersReaching(caller.OrganizationID, spaceId, { inFlight: true });
  for (const { co } of reaching) await advanceStage(deps, caller, co);
}

/** Refuses a Release of the ChangeOrder in one of its Spaces when the release gates of the Space's Stage do not hold. */
export async function checkReleaseGates(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  space: Space,
): Promise<void> {
  // A workflow whose Stages have no release gates holds nothing back: its Spaces and progress are not read.
  if (!co.ChangeWorkflow?.Stages.some((s) => s.ReleasePrerequisites?.length)) return;
  const { stages, progress, view } = await gateContext(deps, caller, co);
  const stage = stages.find((s) => s.spaces.some((x) => x.SpaceID === space.SpaceID));
  if (!stage?.release.length) return;
  // The Space's Units, listed once: for the change's marks on them, and the changed ones' slugs.
  const units = deps.store.listUnits(space.SpaceID);
  const state = await gateState(deps, co, await marksIn(deps, co, space, units), progress, space, {
    attest: caller,
    changed: readsChanged(co, stage.release),
    units,
  });
  const gates = stage.release.map((p) => evaluatePrerequisite(p, view, state));
  const failed = gates.filter((g) => !g.Satisfied);
  // The spec answers a publish its release prerequisites refuse with 422.
  if (failed.length)
    throw new Unprocessable(
      `unable to publish a release of change order '${co.Slug}' in stage '${stage.name}': ${failed.map((g) => g.Message).join('; ')}`,
    );
}

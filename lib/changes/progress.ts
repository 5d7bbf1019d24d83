/** A ChangeOrder with State and the Space sets derived from its progress; Completed from Final over the last Stage when asked. */
import { marksIn } from './marks.ts';
import type { ChangeDeps } from './ports.ts';

import { afterRelease, computeStage } from './reevaluate.ts';
import { effectiveProgress } from './selection.ts';
import { gateContext, gateState, readsChanged, type GateContext } from './stages.ts';
import type { BatonEvent } from '../events/contracts.ts';
import { evaluatePrerequisite } from '../gates/prerequisites.ts';
import { eventOps } from '../events/outbox.ts';
import { deriveProgress } from './state.ts';
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
import type { StoreOp } from '../ports/store.ts';
import { retryOnConflict } from '../util/retry.ts';

export async function derive(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  opts: { completed?: boolean; spaces?: Map<string, Space>; context?: GateContext } = {},
): Promise<ChangeOrderView> {
  // Completed is asked of the gates' context: read once (or given), State and the Space sets derive from the same
  // Spaces and progress, not from a second reading of them.
  const asks = !!opts.completed && !!co.ChangeWorkflow && co.Stage !== COMPLETED;
  const ctx = opts.context ?? (asks && !opts.spaces ? await gateContext(deps, caller, co) : undefined);
  // A list derives many ChangeOrders from one reading of the organization's Spaces.
  const spaces = ctx
    ? new Map(ctx.spaces.map((s) => [s.SpaceID, s]))
    : (opts.spaces ?? new Map((await deps.store.listSpaces(caller.OrganizationID)).map((s) => [s.SpaceID, s])));
  const progress = ctx
    ? [...ctx.progress.values()]
    : await effectiveProgress(deps, co, await deps.store.progressOf(co.ChangeOrderID), spaces);
  const out: ChangeOrderView = { ...co, ...deriveProgress(co, progress, spaces) };
  if (asks) out.Completed = (await computeStage(deps, caller, co, ctx)).stage === COMPLETED;
  return out;
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

/** The write that records a Space taking the ChangeOrder at `now`: its progress there, new. */
export function takenOp(co: ChangeOrder, space: Space, now: string, o: { restoredAt?: string } = {}): StoreOp {
  const item: Progress = {
    ChangeOrderID: co.ChangeOrderID,
    BaseSpaceID: co.SpaceID,
    SpaceID: space.SpaceID,
    ResolvedAt: now,
    ...(o.restoredAt ? { RestoredAt: o.restoredAt } : {}),
    Version: 1,
  };
  return { op: 'create', kind: 'Progress', item };
}

/** Records that a Space took the ChangeOrder (once; a rerun finds it there). */
export async function recordTaken(deps: ChangeDeps, co: ChangeOrder, space: Space, now: string): Promise<void> {
  try {
    await deps.store.transact([takenOp(co, space, now)]);
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
    await afterRelease(deps, caller, co);
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

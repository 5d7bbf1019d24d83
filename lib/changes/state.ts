import {
  COMPLETED,
  ChangeOrderState,
  failureAllowance,
  type ChangeOrder,
  type ChangeOrderProgress,
  type Progress,
  type Space,
  type WorkflowStage,
} from '../model/entities.ts';
import type { Query, Term } from '../where/ast.ts';

/** The States a ChangeOrder that was not aborted can be in (deriveProgress: any other needs AbortedReason). */
const NOT_ABORTED_STATES: ReadonlySet<string> = new Set([
  ChangeOrderState.New,
  ChangeOrderState.InProgress,
  ChangeOrderState.Resolved,
  ChangeOrderState.Released,
]);

/**
 * What the stored ChangeOrder must be for a list's `where` to keep its derived view, so the database
 * leaves the others out before any is derived: a term `Completed = false` (Completed is the stored Stage
 * being Completed) keeps none that is; `State = s` or `State IN (…)` naming only States of a ChangeOrder
 * not aborted keeps none that was. One such term anywhere is enough: a where's terms, and the queries
 * (a where and a saved filter), are all ANDed.
 */
export function storedFilters(queries: Query[]): { notCompleted: boolean; notAborted: boolean } {
  const attr = (t: Term, name: string) => t.left.kind === 'attr' && t.left.path.length === 1 && t.left.path[0] === name;
  const literals = (t: Term) =>
    t.right?.kind === 'literal' ? [t.right.literal] : t.right?.kind === 'list' ? t.right.items : [];
  const notCompleted = (t: Term) =>
    attr(t, 'Completed') &&
    !t.truth &&
    ((t.op === '=' && literals(t)[0]?.value === false) || (t.op === '!=' && literals(t)[0]?.value === true));
  const notAborted = (t: Term) =>
    attr(t, 'State') &&
    !t.truth &&
    (t.op === '=' || t.op === 'IN') &&
    literals(t).length > 0 &&
    literals(t).every((l) => typeof l.value === 'string' && NOT_ABORTED_STATES.has(l.value));
  const all = queries.flatMap((q) => q.terms);
  return { notCompleted: all.some(notCompleted), notAborted: all.some(notAborted) };
}

/**
 * What a ChangeOrder's progress says: State, the Spaces that took it and released it. New until a Space
 * in scope takes it; InProgress while some have; Resolved when all have; Released when, besides, every
 * Space in scope with a release Target released it (Resolved when none has a Target). Aborted wins.
 */
export function deriveProgress(co: ChangeOrder, progress: Progress[], spaces: Map<string, Space>): ChangeOrderProgress {
  const resolved = progress.filter((p) => p.ResolvedAt).map((p) => p.SpaceID);
  const released = progress.filter((p) => p.ReleaseID);
  const inScope = co.InScopeSpaceIDs;
  // Sets, not array scans: a fleet's ChangeOrder has a thousand Spaces in scope and as many progress items.
  const scope = new Set(inScope);
  const resolvedSet = new Set(resolved);
  const releasedSet = new Set(released.map((p) => p.SpaceID));
  const taken = inScope.filter((id) => resolvedSet.has(id));
  const needRelease = inScope.filter((id) => spaces.get(id)?.ReleaseTargetID);
  // Demoted Spaces, and those that released what the demote restored.
  const restored = progress.filter((p) => p.RestoredAt).map((p) => p.SpaceID);
  const restoreReleased = progress.filter((p) => p.RestoreReleaseID).map((p) => p.SpaceID);
  const tookInScope = progress.filter((p) => p.ResolvedAt && scope.has(p.SpaceID));
  const releasedInScope = released.filter((p) => scope.has(p.SpaceID));
  let state: ChangeOrderState;
  if (co.AbortedReason && tookInScope.length && tookInScope.every((p) => p.RestoredAt)) {
    // Restored once every Space that took it was demoted; RestoreReleased once every Space that had released it released the restore.
    state =
      releasedInScope.length && releasedInScope.every((p) => p.RestoreReleaseID)
        ? ChangeOrderState.RestoreReleased
        : ChangeOrderState.Restored;
  } else if (co.AbortedReason) state = ChangeOrderState.Aborted;
  else if (!taken.length) state = ChangeOrderState.New;
  else if (taken.length < inScope.length) state = ChangeOrderState.InProgress;
  else if (needRelease.length && needRelease.every((id) => releasedSet.has(id))) state = ChangeOrderState.Released;
  else state = ChangeOrderState.Resolved;
  return {
    State: state,
    ResolvedSpaceIDs: resolved,
    ReleasedSpaceIDs: released.map((p) => p.SpaceID),
    Releases: released.map((p) => ({ ReleaseID: p.ReleaseID!, ReleaseNum: p.ReleaseNum ?? 0, SpaceID: p.SpaceID })),
    RestoredSpaceIDs: restored,
    ReleasedRestoredSpaceIDs: restoreReleased,
    Completed: co.Stage === COMPLETED,
  };
}

/** A Stage of a ChangeOrder's workflow with the Spaces in scope it selects. */
export interface StageSpaces {
  name: string;
  spaces: Space[];
  prerequisites: string[];
  release: string[];
  /** The Stage as the workflow defines it (its failure budget and MinHealthyPercent). */
  def?: WorkflowStage;
}

/**
 * The index of the latest Stage with Spaces, all of which took the change, every earlier Stage with
 * Spaces having taken it too; -1 when none. A Stage with no Spaces in scope is passed over: it neither
 * holds the change back nor counts as reached. A Stage with a failure budget (or MinHealthyPercent)
 * is reached when the Spaces that did not take the change are within it (and enough did).
 */
export function reachedStage(stages: StageSpaces[], taken: (spaceId: string) => boolean): number {
  let index = -1;
  for (const [i, st] of stages.entries()) {
    if (!st.spaces.length) continue;
    const missing = st.spaces.filter((s) => !taken(s.SpaceID)).length;
    const allowance = failureAllowance(st.def, st.spaces.length);
    const min = st.def?.MinHealthyPercent;
    const tolerated =
      missing > 0 &&
      (allowance !== undefined || min !== undefined) &&
      (allowance === undefined || missing <= allowance) &&
      (min === undefined || (st.spaces.length - missing) * 100 >= min * st.spaces.length);
    if (missing && !tolerated) break;
    index = i;
  }
  return index;
}

/** Whether no Stage after `index` has Spaces: the change has nowhere further to go, so Final decides Completed. */
export function lastNonEmpty(stages: StageSpaces[], index: number): boolean {
  return index >= 0 && stages.slice(index + 1).every((s) => !s.spaces.length);
}

/** Where a recorded Stage stands in the workflow: -1 before any, the number of Stages once Completed. */
export function recordedStageIndex(co: ChangeOrder): number {
  const names = co.ChangeWorkflow?.Stages.map((s) => s.Name) ?? [];
  return co.Stage === COMPLETED ? names.length : co.Stage ? names.indexOf(co.Stage) : -1;
}

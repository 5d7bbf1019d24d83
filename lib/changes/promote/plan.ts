/** Step 1 of a promotion: which Spaces it targets, in which Stage, over which Spaces its gates are evaluated, and in which waves. */
import type { ChangeDeps } from '../ports.ts';
import type { PromoteOptions } from './types.ts';
import { orgSpaces } from '../stages.ts';
import type { StageSpaces } from '../state.ts';
import type { Space, Caller, ChangeOrder, Link } from '../../model/entities.ts';
import { Invalid } from '../../model/errors.ts';
import { findSpace } from '../../variants/lookup.ts';
import { matches, parseWhere } from '../../where/index.ts';

/** Which Spaces a promotion targets, in which Stage, and over which Spaces its gates are evaluated. */
export interface PromotionPlan {
  /** The Stage promoted into; -1 when the targets lie in no Stage (a ChangeOrder without a workflow). */
  stageIndex: number;
  targets: Space[];
  /** Spaces of the Stages before the one before: each must have taken the change. */
  earlier: Space[];
  /** The Spaces of the nearest earlier Stage that has any (the base when none has): the target Stage's prerequisites hold over them, never over nothing. */
  before: Space[];
}

/** What a promotion was asked to do. */
export type PromotionRequest = { named: Space[] } | { targetStage?: string };

/** Why a plan could not be made. */
export type PlanRefusal = { noWorkflow: true } | { unknownStage: string } | { everyStageReached: true };

/**
 * Plans a promotion: named Spaces (their latest Stage is the one gated), a named Stage, or the first
 * Stage with a Space that has not taken the change. Pure: `taken` says which Spaces have.
 */
export function planPromotion(
  stages: StageSpaces[],
  base: Space,
  taken: (spaceId: string) => boolean,
  req: PromotionRequest,
): PromotionPlan | PlanRefusal {
  let stageIndex: number;
  let targets: Space[];
  if ('named' in req) {
    targets = [...new Map(req.named.map((s) => [s.SpaceID, s])).values()];
    stageIndex = stages.length
      ? Math.max(...targets.map((t) => stages.findIndex((st) => st.spaces.some((s) => s.SpaceID === t.SpaceID))))
      : -1;
  } else {
    if (!stages.length) return { noWorkflow: true };
    stageIndex = req.targetStage
      ? stages.findIndex((s) => s.name === req.targetStage)
      : stages.findIndex((s) => s.spaces.some((x) => !taken(x.SpaceID)));
    if (req.targetStage && stageIndex < 0) return { unknownStage: req.targetStage };
    if (stageIndex < 0) return { everyStageReached: true };
    targets = stages[stageIndex]!.spaces;
  }
  if (stageIndex < 0) return { stageIndex, targets, earlier: [], before: [] };
  const before = stages.slice(0, stageIndex).findLast((s) => s.spaces.length)?.spaces ?? [base];
  const earlier = stages
    .slice(0, stageIndex)
    .flatMap((s) => s.spaces)
    .filter((s) => !before.some((b) => b.SpaceID === s.SpaceID));
  return { stageIndex, targets, earlier, before };
}

/** The target Spaces a promotion names (by reference, or by a where over the ChangeOrder's scope), each in scope. */
export async function namedTargets(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  o: PromoteOptions,
): Promise<Space[]> {
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
export async function mergeSources(deps: ChangeDeps, targets: Space[]): Promise<Map<string, Set<string>>> {
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

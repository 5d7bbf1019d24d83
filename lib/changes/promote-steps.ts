/**
 * The steps a promotion takes in the request and in a job alike: promoting one Space (never throwing),
 * stopping past a Stage's failure budget, concluding what the Spaces came to, and what the ChangeOrder
 * records of it.
 */
import { type Caller, type ChangeOrder, type GateResult, type PriorRevisions, type Space } from '../model/entities.ts';
import { BatonError } from '../model/errors.ts';
import { DetailType, SOURCE, type BatonEvent } from '../events/contracts.ts';
import type { ChangeDeps } from './ports.ts';
import { promoteSpace, SpaceAction, type SpaceResult } from './promote-space.ts';
import { readAhead, type PromoteContext } from './promote-context.ts';
import type { CoMarks } from './marks.ts';
import type { GateContext } from './stages.ts';
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
export type PromoteOutcome =
  { outcome: 'Done' | 'Partial'; result: PromoteResult } | { outcome: 'Accepted'; job: JobRecord };

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

/** Gates as records keep them: without an explanation's evidence. */
export const recorded = (gates: GateResult[]): GateResult[] => gates.map(({ Evidence: _e, Opens: _o, ...g }) => g);

/** A promotion planned and gated, ready to run: in the request, or as a job. */
export interface Gated {
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

/** Promotes one Space, reporting whatever went wrong as that Space's result (never thrown). */
export function promoter(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  baseId: string,
  taken: Set<string>,
  ctx: () => PromoteContext,
  ahead?: Space[],
): (space: Space) => Promise<SpaceResult> {
  const blocked = (space: Space) =>
    co.UpdateType === 'UpgradeUnit' &&
    !!space.UpstreamSpaceID &&
    space.UpstreamSpaceID !== baseId &&
    !taken.has(space.UpstreamSpaceID);
  // The Spaces it will promote, in the order it is given them, read a group at a time.
  const reads = ahead
    ? readAhead(
        deps,
        ctx(),
        ahead.filter((s) => !taken.has(s.SpaceID) && !blocked(s)),
      )
    : undefined;
  return async (space) => {
    if (taken.has(space.SpaceID))
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Unchanged, Units: [] };
    if (blocked(space)) {
      return {
        SpaceID: space.SpaceID,
        SpaceSlug: space.Slug,
        Action: SpaceAction.Blocked,
        Error: `its upstream space has not taken change order '${co.Slug}'`,
        Units: [],
      };
    }
    try {
      const r = await promoteSpace(deps, caller, ctx(), space, reads);
      // Units in slug order, whatever order the Space listed them in (by id).
      r.Units.sort((a, b) => (a.UnitSlug < b.UnitSlug ? -1 : a.UnitSlug > b.UnitSlug ? 1 : 0));
      return r;
    } catch (e) {
      // Whatever failed — a rule, a conflict, the database going away — the Space is reported, never lost: what it
      // wrote landed whole per Unit (each Unit's revision and marks are one transaction), and a rerun finishes it.
      const message =
        e instanceof BatonError
          ? e.message
          : `stopped part-way (${(e as Error).name ?? 'error'}: ${(e as Error).message ?? String(e)}); some of its Units may have taken the change: promote again to finish`;
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: SpaceAction.Failed, Error: message, Units: [] };
    }
  };
}

/**
 * A promoter that stops starting Spaces once more than `allowance` of the Stage's Spaces have failed
 * (its failure budget): the rest are `NotStarted`. `counter` carries failures counted before (a job's
 * other parts).
 */
export function budgeted(
  promoteOne: (s: Space) => Promise<SpaceResult>,
  allowance: number | undefined,
  stage: string | undefined,
  counter: { failed: number },
): (s: Space) => Promise<SpaceResult> {
  if (allowance === undefined) return promoteOne;
  return async (space) => {
    if (counter.failed > allowance) {
      return {
        SpaceID: space.SpaceID,
        SpaceSlug: space.Slug,
        Action: SpaceAction.NotStarted,
        Error: `not started: more than ${allowance} space(s) of stage '${stage}' failed, its failure budget; promote again once they are fixed`,
        Units: [],
      };
    }
    const r = await promoteOne(space);
    if (r.Action === SpaceAction.Failed) counter.failed++;
    return r;
  };
}

/** What every Space came to, as the answer says it: landed, failures, and the outcome. */
export function conclude(
  co: ChangeOrder,
  g: Pick<Gated, 'stageName' | 'gates' | 'failedGates'> & { total: number },
  spaces: SpaceResult[],
  dryRun: boolean,
): { outcome: 'Done' | 'Partial'; result: PromoteResult; failures: SpaceResult[] } {
  const result: PromoteResult = {
    ChangeOrderID: co.ChangeOrderID,
    Stage: g.stageName,
    DryRun: dryRun,
    Forced: g.failedGates.length > 0,
    Gates: g.gates,
    Spaces: spaces,
    Landed: 0,
    Total: g.total,
  };
  result.Landed = spaces.filter((s) => s.Action === SpaceAction.Promote || s.Action === SpaceAction.Unchanged).length;
  const failures = spaces.filter(
    (s) => s.Action === SpaceAction.Failed || s.Action === SpaceAction.Blocked || s.Action === SpaceAction.NotStarted,
  );
  if (failures.length)
    result.Message = `${result.Landed} of ${result.Total} space(s) ${dryRun ? 'would take' : 'took'} change order '${co.Slug}'; ${failures.map((f) => `'${f.SpaceSlug}': ${f.Error}`).join('; ')}`;
  return { outcome: failures.length ? 'Partial' : 'Done', result, failures };
}

/** What the ChangeOrder records of a promotion (promoted Spaces, override, failures; the lease given back) and the events that say so. */
export function promotionRecord(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  result: PromoteResult,
  failures: SpaceResult[],
  failedGates: GateResult[],
  targets: string[],
  forceReason: string | undefined,
  leaseId: string | undefined,
  allowance?: number,
) {
  deps.telemetry?.count('Promotions');
  deps.telemetry?.count(
    'UnitsPromoted',
    result.Spaces.flatMap((s) => s.Units).filter((u) => u.RevisionNums?.length).length,
  );
  const now = deps.now().toISOString();
  const stageName = result.Stage;
  const promoted = result.Spaces.filter((s) => s.Action === SpaceAction.Promote).map((s) => s.SpaceID);
  const events: BatonEvent[] = [];
  if (failures.length)
    events.push({
      source: SOURCE,
      detailType: DetailType.PromotionFailed,
      detail: {
        OrganizationID: co.OrganizationID,
        ChangeOrderID: co.ChangeOrderID,
        Slug: co.Slug,
        Stage: stageName,
        SpaceIDs: failures.map((f) => f.SpaceID),
      },
    });
  if (result.Forced) {
    events.push({
      source: SOURCE,
      detailType: DetailType.PromotionOverridden,
      detail: {
        OrganizationID: co.OrganizationID,
        ChangeOrderID: co.ChangeOrderID,
        Slug: co.Slug,
        Stage: stageName,
        SpaceIDs: targets,
        FailedGates: recorded(failedGates),
        Reason: forceReason!,
        UserID: caller.UserID,
      },
    });
  }
  const change = (c: ChangeOrder): Partial<ChangeOrder> => ({
    Promotions: promoted.length
      ? [...c.Promotions, { PromotedAt: now, SpaceIDs: promoted, Stage: stageName, UserID: caller.UserID }]
      : c.Promotions,
    PromotionOverrides: result.Forced
      ? [
          ...c.PromotionOverrides,
          {
            FailedGates: recorded(failedGates),
            OverriddenAt: now,
            Reason: forceReason!,
            SpaceIDs: targets,
            Stage: stageName,
            UserID: caller.UserID,
          },
        ]
      : c.PromotionOverrides,
    ...(result.Spaces.some((s) => s.Action === SpaceAction.NotStarted)
      ? {
          PromotionHalts: [
            ...(c.PromotionHalts ?? []),
            {
              HaltedAt: now,
              Stage: stageName,
              UserID: caller.UserID,
              Allowance: allowance ?? 0,
              FailedSpaceIDs: result.Spaces.filter((s) => s.Action === SpaceAction.Failed).map((s) => s.SpaceID),
              NotStartedSpaceIDs: result.Spaces.filter((s) => s.Action === SpaceAction.NotStarted).map(
                (s) => s.SpaceID,
              ),
            },
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
            Spaces: failures.map((f) => ({
              SpaceID: f.SpaceID,
              SpaceSlug: f.SpaceSlug,
              Action: f.Action,
              Error: f.Error,
              Units: f.Units.filter((u) => u.Error).map((u) => ({
                UnitID: u.UnitID,
                UnitSlug: u.UnitSlug,
                Error: u.Error!.Message,
              })),
            })),
          },
        ]
      : c.PromotionFailures,
    // The lease goes back in the same write that records the promotion.
    ...(leaseId && c.PromotionLease?.LeaseID === leaseId ? { PromotionLease: undefined } : {}),
  });
  return { change, events };
}

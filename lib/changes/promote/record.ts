/**
 * Step 4 of a promotion, in the request and in a job alike: what the Spaces came to (the answer) and what the
 * ChangeOrder records of it, with the events that say so.
 */

/** Gates as records keep them: without an explanation's evidence. */
import type { ChangeDeps } from '../ports.ts';
import { stageAdvance, stageReachedBy } from '../reevaluate.ts';
import type { GateContext } from '../stages.ts';
import { SpaceAction, type Gated, type PromoteResult, type SpaceResult } from './types.ts';
import { Conflict } from '../../model/errors.ts';
import { DetailType, EVENT_FAILED_GATES, EVENT_SPACE_IDS, SOURCE, type BatonEvent } from '../../events/contracts.ts';
import type { Caller, ChangeOrder, GateResult } from '../../model/entities.ts';
import { countedApprovals } from '../windows.ts';

export const recorded = (gates: GateResult[]): GateResult[] => gates.map(({ Evidence: _e, Opens: _o, ...g }) => g);

/** How many failed Spaces the answer's Message names; the rest it counts. */
export const MESSAGE_FAILURES = 10;

/**
 * How many Spaces the ChangeOrder's record of a failed promotion lists (PromotionFailures[].Spaces, with their
 * errors); past that it lists the first ones and counts them all (SpaceCount), the failed and blocked before the
 * not started (a halt names those). A 10,000-Space fleet's ChangeOrder holds its scope and its promotions in one
 * item: 6,000 failures at some 240 bytes each would not fit it. The promotion's answer (and its job) has each.
 */
export const RECORD_FAILED_SPACES = 200;

/** The failures a record lists: all of them, or past RECORD_FAILED_SPACES the first, failed and blocked first. Pure. */
function recordedFailures(failures: SpaceResult[]): SpaceResult[] {
  if (failures.length <= RECORD_FAILED_SPACES) return failures;
  const notStarted = (f: SpaceResult) => f.Action === SpaceAction.NotStarted;
  return [...failures.filter((f) => !notStarted(f)), ...failures.filter(notStarted)].slice(0, RECORD_FAILED_SPACES);
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
  if (failures.length) {
    // The first few by name; the rest counted (each is in Spaces, and a 10,000-Space stage's would be megabytes).
    const named = failures.slice(0, MESSAGE_FAILURES).map((f) => `'${f.SpaceSlug}': ${f.Error}`);
    if (failures.length > MESSAGE_FAILURES) named.push(`and ${failures.length - MESSAGE_FAILURES} more`);
    result.Message = `${result.Landed} of ${result.Total} space(s) ${dryRun ? 'would take' : 'took'} change order '${co.Slug}'; ${named.join('; ')}`;
  }
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
  // The override approvals the windows forced past asked for, as counted when the gates were passed.
  const approvals = failedGates.flatMap((g) => {
    const ev = g.Evidence as { WindowID?: string; OverrideApprovals?: number } | undefined;
    return g.Prerequisite === 'Window' && ev?.WindowID && ev.OverrideApprovals
      ? countedApprovals(co, ev.WindowID, caller.UserID)
      : [];
  });
  if (failures.length)
    events.push({
      source: SOURCE,
      detailType: DetailType.PromotionFailed,
      detail: {
        OrganizationID: co.OrganizationID,
        ChangeOrderID: co.ChangeOrderID,
        Slug: co.Slug,
        Stage: stageName,
        SpaceIDs: failures.slice(0, EVENT_SPACE_IDS).map((f) => f.SpaceID),
        SpaceCount: failures.length,
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
        SpaceIDs: targets.slice(0, EVENT_SPACE_IDS),
        SpaceCount: targets.length,
        FailedGates: recorded(failedGates.slice(0, EVENT_FAILED_GATES)),
        FailedGateCount: failedGates.length,
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
            ...(approvals.length ? { Approvals: approvals } : {}),
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
            ...(failures.length > RECORD_FAILED_SPACES ? { SpaceCount: failures.length } : {}),
            Spaces: recordedFailures(failures).map((f) => ({
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

/**
 * A promotion's record with the Stage it reached added, in the same write: computed from what its gates read and
 * the Spaces that took the change now (`reached` false when it was not, so the caller re-evaluates afterwards).
 */
export async function withStageReached(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  gates: GateContext | undefined,
  spaces: SpaceResult[],
  record: { change: (c: ChangeOrder) => Partial<ChangeOrder>; events: BatonEvent[] },
): Promise<{
  reached: boolean;
  change: (c: ChangeOrder) => Partial<ChangeOrder>;
  events: (c: ChangeOrder) => BatonEvent[];
}> {
  const promoted = spaces.filter((s) => s.Action === SpaceAction.Promote).map((s) => s.SpaceID);
  const reached = await stageReachedBy(deps, caller, co, gates, promoted);
  return {
    reached: !!reached,
    change: (c) => ({ ...record.change(c), ...(reached ? stageAdvance(c, reached).change : {}) }),
    events: (c) => [...record.events, ...(reached ? stageAdvance(c, reached).events : [])],
  };
}

/** Gives the lease back, if this promotion still holds it. */
export async function releaseLease(deps: ChangeDeps, coRef: ChangeOrder, id: string): Promise<void> {
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

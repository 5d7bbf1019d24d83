import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONTRACTS, EVENT_FAILED_GATES, EVENT_SPACE_IDS, type DetailType } from '../../lib/events/contracts.ts';
import type { ChangeDeps } from '../../lib/changes/ports.ts';
import { conclude, MESSAGE_FAILURES, promotionRecord, RECORD_FAILED_SPACES } from '../../lib/changes/promote/record.ts';
import { SpaceAction, type SpaceResult } from '../../lib/changes/promote/types.ts';
import type { Caller, ChangeOrder, GateResult } from '../../lib/model/entities.ts';

/** A Stage of `n` Spaces, `failed` of them failing: what a promotion's answer and its record say at fleet scale. */
function stage(n: number, failed: number): SpaceResult[] {
  return Array.from({ length: n }, (_, i) => ({
    SpaceID: randomUUID(),
    SpaceSlug: `prod-${i}`,
    Action: i < failed ? SpaceAction.Failed : SpaceAction.Promote,
    ...(i < failed ? { Error: 'a unit write failed' } : {}),
    Units: [],
  }));
}

const co = {
  ChangeOrderID: randomUUID(),
  OrganizationID: randomUUID(),
  Slug: 'scale',
  Promotions: [],
  PromotionOverrides: [],
  PromotionFailures: [],
} as unknown as ChangeOrder;
const deps = { now: () => new Date('2026-12-07T12:00:00Z') } as unknown as ChangeDeps;
const caller = { UserID: 'u', OrganizationID: co.OrganizationID } as Caller;
const gate = (i: number): GateResult => ({
  Prerequisite: 'Approved',
  Satisfied: false,
  SpaceID: randomUUID(),
  SpaceSlug: `staging-${i}`,
  Message: 'not approved',
});

describe("a promotion's answer and events at fleet scale", () => {
  it('names every failed Space in its Message while they are few, and the record lists each', () => {
    const spaces = stage(5, 2);
    const { outcome, result, failures } = conclude(
      co,
      { stageName: 'prod', gates: [], failedGates: [], total: 5 },
      spaces,
      false,
    );
    const change = promotionRecord(deps, caller, co, result, failures, [], [], undefined, undefined).change(co);
    expect(change.PromotionFailures![0]!.SpaceCount).toBeUndefined();
    expect(change.PromotionFailures![0]!.Spaces.map((x) => `${x.SpaceSlug}:${x.Action}`)).toEqual([
      'prod-0:Failed',
      'prod-1:Failed',
    ]);
    expect(outcome).toBe('Partial');
    expect(result.Message).toBe(
      "3 of 5 space(s) took change order 'scale'; 'prod-0': a unit write failed; 'prod-1': a unit write failed",
    );
  });

  it('lists the failed and blocked before the not started when there are more than the record lists', () => {
    // 150 failed, then a halt: 2,850 not started.
    const spaces = stage(3000, 150).map((x, i) =>
      i >= 150 ? { ...x, Action: SpaceAction.NotStarted, Error: 'not started: over the failure budget' } : x,
    );
    const reversed = [...spaces].reverse();
    const { result, failures } = conclude(
      co,
      { stageName: 'prod', gates: [], failedGates: [], total: 3000 },
      reversed,
      false,
    );
    const change = promotionRecord(deps, caller, co, result, failures, [], [], undefined, undefined, 0).change(co);
    const listed = change.PromotionFailures![0]!.Spaces;
    expect(listed.filter((x) => x.Action === SpaceAction.Failed)).toHaveLength(150);
    expect(listed.slice(0, 150).every((x) => x.Action === SpaceAction.Failed)).toBe(true);
    expect(listed.slice(150).every((x) => x.Action === SpaceAction.NotStarted)).toBe(true);
    expect(change.PromotionFailures![0]!.SpaceCount).toBe(3000);
    expect(change.PromotionHalts![0]!.NotStartedSpaceIDs).toHaveLength(2850);
  });

  it('names the first few past that and counts the rest; its events name the first 1,000 Spaces and count them all', () => {
    const spaces = stage(3000, 1500);
    const gates = Array.from({ length: 150 }, (_, i) => gate(i));
    const { result, failures } = conclude(
      co,
      { stageName: 'prod', gates, failedGates: gates, total: 3000 },
      spaces,
      false,
    );
    expect(result.Message).toMatch(
      /^1500 of 3000 space\(s\) took change order 'scale'; 'prod-0': a unit write failed; /,
    );
    expect(result.Message).toMatch(new RegExp(`'prod-${MESSAGE_FAILURES - 1}': a unit write failed; and 1490 more$`));
    expect(result.Message).not.toContain(`'prod-${MESSAGE_FAILURES}'`);
    expect(result.Spaces.filter((s) => s.Action === SpaceAction.Failed)).toHaveLength(1500);

    const targets = spaces.map((s) => s.SpaceID);
    const { events } = promotionRecord(deps, caller, co, result, failures, gates, targets, 'incident', undefined);
    const failed = events.find((e) => e.detailType === 'Promotion Failed')!;
    expect(failed.detail).toMatchObject({ SpaceCount: 1500, Stage: 'prod' });
    expect(failed.detail.SpaceIDs).toEqual(failures.slice(0, EVENT_SPACE_IDS).map((f) => f.SpaceID));
    const forced = events.find((e) => e.detailType === 'Promotion Overridden')!;
    expect(forced.detail).toMatchObject({ SpaceCount: 3000, FailedGateCount: 150, Reason: 'incident' });
    expect(forced.detail.SpaceIDs).toEqual(targets.slice(0, EVENT_SPACE_IDS));
    expect(forced.detail.FailedGates).toHaveLength(EVENT_FAILED_GATES);
    // The ChangeOrder's record lists the first 200 failed Spaces with their errors (the failed before the not
    // started) and counts them all; its ID lists (promoted, forced) name every Space, stored packed.
    const change = promotionRecord(deps, caller, co, result, failures, gates, targets, 'incident', undefined).change(
      co,
    );
    const recorded = change.PromotionFailures!.at(-1)!;
    expect(recorded.SpaceCount).toBe(1500);
    expect(recorded.Spaces).toHaveLength(RECORD_FAILED_SPACES);
    expect(recorded.Spaces.map((x) => x.SpaceSlug)).toEqual(
      spaces.slice(0, RECORD_FAILED_SPACES).map((x) => x.SpaceSlug),
    );
    expect(change.PromotionOverrides!.at(-1)!.SpaceIDs).toEqual(targets);
    expect(change.Promotions!.at(-1)!.SpaceIDs).toHaveLength(1500);
    // Each passes its contract, and each fits an EventBridge event (256 KB).
    for (const e of events) {
      expect(CONTRACTS[e.detailType as DetailType].safeParse(e.detail).success).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(e.detail))).toBeLessThan(256 * 1024);
    }
  });
});

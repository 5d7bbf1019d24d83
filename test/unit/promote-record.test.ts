import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONTRACTS, EVENT_FAILED_GATES, EVENT_SPACE_IDS, type DetailType } from '../../lib/events/contracts.ts';
import type { ChangeDeps } from '../../lib/changes/ports.ts';
import { conclude, MESSAGE_FAILURES, promotionRecord } from '../../lib/changes/promote/record.ts';
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
  it('names every failed Space in its Message while they are few', () => {
    const spaces = stage(5, 2);
    const { outcome, result } = conclude(
      co,
      { stageName: 'prod', gates: [], failedGates: [], total: 5 },
      spaces,
      false,
    );
    expect(outcome).toBe('Partial');
    expect(result.Message).toBe(
      "3 of 5 space(s) took change order 'scale'; 'prod-0': a unit write failed; 'prod-1': a unit write failed",
    );
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
    // Each passes its contract, and each fits an EventBridge event (256 KB).
    for (const e of events) {
      expect(CONTRACTS[e.detailType as DetailType].safeParse(e.detail).success).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(e.detail))).toBeLessThan(256 * 1024);
    }
  });
});

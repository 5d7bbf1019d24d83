import { describe, expect, it } from 'vitest';
import {
  evaluatePrerequisite,
  soakDuration,
  type GateChangeOrder,
  type SpaceGateState,
} from '../../lib/gates/prerequisites.ts';
import type { LiveStatusTransition, Release, Space } from '../../lib/model/entities.ts';

const co: GateChangeOrder = { json: {}, slug: 'v2', ref: 'base/v2', workflow: { Stages: [] } };
const space = { SpaceID: 's', Slug: 'acme-staging', ReleaseTargetID: 't', Labels: {} } as unknown as Space;
const t = (min: number) => new Date(Date.parse('2026-12-03T10:00:00Z') + min * 60_000).toISOString();
const healthy = (min: number): LiveStatusTransition => ({ Sync: 'Synced', Health: 'Healthy', ObservedAt: t(min) });
const degraded = (min: number): LiveStatusTransition => ({ Sync: 'Synced', Health: 'Degraded', ObservedAt: t(min) });

function state(history: LiveStatusTransition[], nowMin: number): SpaceGateState {
  const last = history.at(-1);
  const release = {
    ReleaseNum: 7,
    Published: true,
    PublishedAt: t(-60),
    LiveStatus: last ? { Sync: last.Sync, Health: last.Health, ObservedAt: last.ObservedAt } : undefined,
    LiveStatusHistory: history,
  } as unknown as Release;
  return { space, taken: true, published: [release], carries: () => true, changed: [], now: new Date(t(nowMin)) };
}

describe('Soak', () => {
  it('reads its duration from Soak=30m or Soak: 30m, and nothing from other names', () => {
    expect(soakDuration('Soak=30m')).toBe(30 * 60_000);
    expect(soakDuration('Soak: 2h')).toBe(2 * 3600_000);
    expect(soakDuration('Soak=soon')).toBeNaN();
    expect(soakDuration('Healthy')).toBeUndefined();
  });

  it('holds once the release has been Healthy without a break for the duration', () => {
    const r = evaluatePrerequisite('Soak=30m', co, state([healthy(0)], 31));
    expect(r).toMatchObject({
      Satisfied: true,
      Message: `release 7 has been Synced and Healthy for 31m (since ${t(0)}), at least 30m`,
    });
  });

  it('says when it opens while the clock runs, and a Degraded report restarts the clock', () => {
    expect(evaluatePrerequisite('Soak=30m', co, state([healthy(0)], 10))).toMatchObject({
      Satisfied: false,
      Message: `release 7 has been Synced and Healthy for 10m (since ${t(0)}); Soak needs 30m: it opens at ${t(30)} if it stays Healthy`,
    });
    const restarted = evaluatePrerequisite('Soak=30m', co, state([healthy(0), degraded(20), healthy(25)], 40));
    expect(restarted).toMatchObject({
      Satisfied: false,
      Message: expect.stringContaining(`for 15m (since ${t(25)}); Soak needs 30m: it opens at ${t(55)}`),
    });
    // Healthy reports in a row do not restart it; the order of the history is the order of ObservedAt.
    expect(
      evaluatePrerequisite(
        'Soak=30m',
        co,
        state([healthy(25), degraded(20), { ...healthy(30), Reporter: 'argocd' }], 56),
      ).Satisfied,
    ).toBe(true);
  });

  it('explains what opens it: staying Healthy until the clock runs out, or a Healthy report first', () => {
    expect(
      evaluatePrerequisite('Soak=30m', co, { ...state([degraded(0), healthy(25)], 40), explain: true }).Opens,
    ).toBe(`release 7 staying Synced and Healthy until ${t(55)}`);
    expect(
      evaluatePrerequisite('Soak=30m', co, { ...state([healthy(0), degraded(50)], 60), explain: true }).Opens,
    ).toBe(
      'a report of release 7 as Synced and Healthy (by Argo CD or Flux, or by hand): cub release report --space acme-staging --release 7 --sync Synced --health Healthy',
    );
  });

  it('does not hold while the release is not Healthy now', () => {
    expect(evaluatePrerequisite('Soak=30m', co, state([healthy(0), degraded(50)], 60))).toMatchObject({
      Satisfied: false,
      Message: 'release 7 is Synced, Degraded; it must be Healthy for 30m first',
    });
    expect(evaluatePrerequisite('Soak=30m', co, state([], 60))).toMatchObject({
      Satisfied: false,
      Message: 'release 7 has not been reported on yet; it must be Healthy for 30m first',
    });
  });
});

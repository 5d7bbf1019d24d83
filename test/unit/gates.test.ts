import { describe, expect, it } from 'vitest';
import {
  evaluateGates,
  evaluatePrerequisite,
  refusal,
  type GateChangeOrder,
  type SpaceGateState,
} from '../../lib/gates/prerequisites.ts';
import type { Release, Space } from '../../lib/model/entities.ts';

const space = (over: Partial<Space> = {}): Space => ({
  OrganizationID: 'o',
  SpaceID: 's1',
  Slug: 'acme-staging-euw1',
  Labels: { Variant: 'staging-euw1', Stage: 'Staging' },
  Annotations: {},
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
  ReleaseTargetID: 't1',
  ...over,
});
const release = (num: number, co: string | undefined, live: Release['LiveStatus'] = {}): Release => ({
  OrganizationID: 'o',
  SpaceID: 's1',
  Slug: `release-${num}`,
  Labels: {},
  Annotations: { verified: num === 2 ? 'yes' : 'no' },
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
  ReleaseID: `r${num}`,
  ReleaseNum: num,
  TargetID: 't1',
  TagID: 'tag',
  ChangeOrderID: co,
  Published: true,
  Digest: 'd',
  UnitCount: 1,
  Units: [],
  UserID: 'u',
  LiveStatus: live,
  PublishedAt: '',
});
const co: GateChangeOrder = {
  json: { Slug: 'release-v452', Labels: { risk: 'low' } },
  slug: 'release-v452',
  ref: 'acme-base/release-v452',
  workflow: {
    Stages: [],
    CustomPrerequisites: [
      {
        Name: 'not-frozen',
        Expression: "cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true'",
      },
      { Name: 'verified', Expression: "cel:Release.Annotations['verified'] == 'yes'" },
      { Name: 'low-risk', Expression: "cel:ChangeOrder.Labels.risk == 'low'" },
    ],
    AttestationPrerequisites: [{ Name: 'two-approvers', Count: 2 }],
  },
};
const state = (over: Partial<SpaceGateState> = {}): SpaceGateState => ({
  space: space(),
  taken: true,
  published: [],
  carries: (r) => r.ChangeOrderID === 'co1',
  changed: [{ slug: 'deployment', revision: 3, validationErrors: {}, unitId: 'u1', dataHash: 'h3', authors: ['dev'] }],
  ...over,
});
const healthy = { Sync: 'Synced', Health: 'Healthy', Operation: 'Succeeded' } as const;

describe('gates are pure functions of what they read', () => {
  const cases: [string, string, SpaceGateState, boolean, RegExp][] = [
    ['Validated passes clean data', 'Validated', state(), true, /no validation errors/],
    [
      'Validated fails on errors in what would be bundled',
      'Validated',
      state({
        changed: [
          {
            slug: 'deployment',
            revision: 3,
            validationErrors: { placeholders: 'left' },
            unitId: 'u1',
            dataHash: 'h3',
            authors: [],
          },
        ],
      }),
      false,
      /deployment revision 3 \(left\)/,
    ],
    [
      'Released needs a release carrying the change',
      'Released',
      state({ published: [release(1, undefined)] }),
      false,
      /has taken change order 'release-v452' but has not released it/,
    ],
    [
      'Released is satisfied by one',
      'Released',
      state({ published: [release(2, 'co1')] }),
      true,
      /released it in release 2/,
    ],
    [
      'Released passes a space with no release target',
      'Released',
      state({ space: space({ ReleaseTargetID: undefined }) }),
      true,
      /no release target/,
    ],
    [
      'Healthy never holds without a release target',
      'Healthy',
      state({ space: space({ ReleaseTargetID: undefined }) }),
      false,
      /never healthy/,
    ],
    [
      'Healthy waits for a report on the release',
      'Healthy',
      state({ published: [release(2, 'co1')] }),
      false,
      /release 2 has not been reported on yet/,
    ],
    [
      'Healthy reads the latest release, not an older healthy one',
      'Healthy',
      state({ published: [release(3, 'co1'), release(2, 'co1', healthy)] }),
      false,
      /release 3 has not been reported on yet/,
    ],
    [
      'Healthy needs the latest to carry the change',
      'Healthy',
      state({ published: [release(3, undefined, healthy), release(2, 'co1', healthy)] }),
      false,
      /latest published release does not carry it/,
    ],
    [
      'Healthy holds when Synced and Healthy',
      'Healthy',
      state({ published: [release(2, 'co1', healthy)] }),
      true,
      /Synced and Healthy/,
    ],
    [
      'Healthy fails while an operation runs',
      'Healthy',
      state({ published: [release(2, 'co1', { ...healthy, Operation: 'Running' })] }),
      false,
      /operation Running/,
    ],
    [
      'Healthy fails when degraded',
      'Healthy',
      state({ published: [release(2, 'co1', { Sync: 'Synced', Health: 'Degraded' })] }),
      false,
      /Synced, Degraded/,
    ],
    [
      'cel sees Space',
      'not-frozen',
      state({ space: space({ Annotations: { 'code-freeze': 'true' } }) }),
      false,
      /requires not-frozen: the expression is false/,
    ],
    ['cel passes a Space without the annotation (|| short-circuits)', 'not-frozen', state(), true, /holds/],
    ['cel sees the Release carrying the change', 'verified', state({ published: [release(2, 'co1')] }), true, /holds/],
    ['cel with no Release carrying the change cannot hold', 'verified', state(), false, /cannot be evaluated/],
    ['cel sees the ChangeOrder', 'low-risk', state(), true, /holds/],
    [
      'attestations: none recorded',
      'two-approvers',
      state(),
      false,
      /requires two-approvers: 2 Approval attestation\(s\) from eligible attesters who did not write the change; deployment revision 3 has 0 of 2/,
    ],
  ];
  it.each(cases)('%s', (_name, prerequisite, s, satisfied, message) => {
    const g = evaluatePrerequisite(prerequisite, co, s);
    expect(g.Satisfied).toBe(satisfied);
    expect(g.Message).toMatch(message);
    expect(g.SpaceSlug).toBe('acme-staging-euw1');
  });

  it('checks taken first, and reads like the spec when refused', () => {
    const notTaken = state({ taken: false });
    const gates = evaluateGates(['Released', 'two-approvers'], co, [
      notTaken,
      state({ space: space({ SpaceID: 's2', Slug: 'acme-staging', Labels: { Variant: 'staging' } }) }),
    ]);
    expect(gates.map((g) => [g.Prerequisite, g.Satisfied])).toEqual([
      ['Taken', false],
      ['Taken', true],
      ['Released', false],
      ['two-approvers', false],
    ]);
    const spaces = new Map([['s2', space({ SpaceID: 's2', Slug: 'acme-staging', Labels: { Variant: 'staging' } })]]);
    expect(refusal('prod', gates.slice(2), spaces)).toBe(
      "unable to promote to stage 'prod', Variant 'staging' has taken change order 'release-v452' but has not released it; unable to promote to stage 'prod', Variant 'staging': requires two-approvers: 2 Approval attestation(s) from eligible attesters who did not write the change; deployment revision 3 has 0 of 2",
    );
  });
});

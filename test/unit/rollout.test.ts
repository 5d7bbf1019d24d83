import { describe, expect, it } from 'vitest';
import { approvalsOf } from '../../lib/changes/rollout.ts';
import type { ChangeOrder, GateResult, Space } from '../../lib/model/entities.ts';
import type { CoMarks } from '../../lib/changes/marks.ts';
import { nextPollMs } from '../../web/src/poll.ts';
import { upstreamRange } from '../../lib/changes/promote/context.ts';

const co = {
  ChangeWorkflow: {
    Stages: [],
    AttestationPrerequisites: [
      { Name: 'two-approvers', Count: 2 },
      { Name: 'security', Type: 'SecurityReview' },
    ],
  },
} as unknown as ChangeOrder;
const gate = (name: string, units: { Counted: string[] }[], type = 'Approval', count = 2): GateResult => ({
  Prerequisite: name,
  Satisfied: false,
  SpaceID: 's',
  SpaceSlug: 's',
  Message: '',
  Evidence: {
    Type: type,
    Count: count,
    Units: units.map((u, i) => ({ Unit: `u${i}`, RevisionNum: 2, Rejected: [], Excluded: [], ...u })),
  },
});

describe('approvals of a Space, from its attestation gates', () => {
  it('counts a person once, needs the count on every changed Unit, and says how many are missing', () => {
    expect(
      approvalsOf(co, [gate('two-approvers', [{ Counted: ['ann', 'ann', 'bob'] }, { Counted: ['ann'] }])]),
    ).toEqual([{ Name: 'two-approvers', Type: 'Approval', Count: 2, Counted: ['ann'], Missing: 1 }]);
    expect(
      approvalsOf(co, [gate('two-approvers', [{ Counted: ['ann', 'bob'] }, { Counted: ['bob', 'ann', 'cy'] }])]),
    ).toEqual([{ Name: 'two-approvers', Type: 'Approval', Count: 2, Counted: ['ann', 'bob'], Missing: 0 }]);
  });
  it('leaves out gates that are not attestation requirements; a requirement over no changed Unit misses nothing', () => {
    const released: GateResult = {
      Prerequisite: 'Released',
      Satisfied: true,
      SpaceID: 's',
      SpaceSlug: 's',
      Message: '',
    };
    expect(approvalsOf(co, [released, gate('security', [], 'SecurityReview', 1)])).toEqual([
      { Name: 'security', Type: 'SecurityReview', Count: 1, Counted: [], Missing: 0 },
    ]);
  });
});

describe('upstream revisions read ahead for a promotion', () => {
  const mark = (UnitID: string, SpaceID: string, RevisionNum: number) => ({ TagID: 't', UnitID, SpaceID, RevisionNum });
  it('are the Units the change moved in the targets’ upstream Spaces, from its start to its end; not those it left or made', () => {
    const marks = {
      start: new Map([
        ['a', mark('a', 'base', 1)],
        ['b', mark('b', 'base', 2)],
        ['d', mark('d', 'dev', 3)],
      ]),
      end: new Map([
        ['a', mark('a', 'base', 3)],
        ['b', mark('b', 'base', 2)],
        ['c', mark('c', 'base', 1)],
        ['d', mark('d', 'dev', 4)],
      ]),
      publish: new Map(),
      restore: new Map(),
    } as unknown as CoMarks;
    const targets = [
      { SpaceID: 's1', UpstreamSpaceID: 'base' },
      { SpaceID: 's2', UpstreamSpaceID: 'base' },
    ] as Space[];
    expect(upstreamRange(marks, targets)).toEqual([
      { UnitID: 'a', RevisionNum: 1 },
      { UnitID: 'a', RevisionNum: 2 },
      { UnitID: 'a', RevisionNum: 3 },
    ]);
    expect(upstreamRange(marks, [{ SpaceID: 's3', UpstreamSpaceID: 'dev' } as Space])).toEqual([
      { UnitID: 'd', RevisionNum: 3 },
      { UnitID: 'd', RevisionNum: 4 },
    ]);
    expect(upstreamRange(marks, [{ SpaceID: 's4' } as Space])).toEqual([]);
  });
});

describe('the rollout page polling', () => {
  it('reads every poll interval, and after a slow read waits four times as long as it took (at most a minute)', () => {
    expect(nextPollMs(4000, 120)).toBe(4000);
    expect(nextPollMs(4000, 1000)).toBe(4000);
    expect(nextPollMs(4000, 3600)).toBe(14400);
    expect(nextPollMs(250, 100)).toBe(400);
    expect(nextPollMs(4000, 40_000)).toBe(60_000);
  });
});

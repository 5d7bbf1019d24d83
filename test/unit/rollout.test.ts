import { describe, expect, it } from 'vitest';
import { approvalsOf } from '../../lib/changes/rollout.ts';
import type { ChangeOrder, GateResult } from '../../lib/model/entities.ts';

const co = { ChangeWorkflow: { Stages: [], AttestationPrerequisites: [{ Name: 'two-approvers', Count: 2 }, { Name: 'security', Type: 'SecurityReview' }] } } as unknown as ChangeOrder;
const gate = (name: string, units: { Counted: string[] }[], type = 'Approval', count = 2): GateResult => ({ Prerequisite: name, Satisfied: false, SpaceID: 's', SpaceSlug: 's', Message: '', Evidence: { Type: type, Count: count, Units: units.map((u, i) => ({ Unit: `u${i}`, RevisionNum: 2, Rejected: [], Excluded: [], ...u })) } });

describe('approvals of a Space, from its attestation gates', () => {
  it('counts a person once, needs the count on every changed Unit, and says how many are missing', () => {
    expect(approvalsOf(co, [gate('two-approvers', [{ Counted: ['ann', 'ann', 'bob'] }, { Counted: ['ann'] }])])).toEqual([{ Name: 'two-approvers', Type: 'Approval', Count: 2, Counted: ['ann'], Missing: 1 }]);
    expect(approvalsOf(co, [gate('two-approvers', [{ Counted: ['ann', 'bob'] }, { Counted: ['bob', 'ann', 'cy'] }])])).toEqual([{ Name: 'two-approvers', Type: 'Approval', Count: 2, Counted: ['ann', 'bob'], Missing: 0 }]);
  });
  it('leaves out gates that are not attestation requirements; a requirement over no changed Unit misses nothing', () => {
    const released: GateResult = { Prerequisite: 'Released', Satisfied: true, SpaceID: 's', SpaceSlug: 's', Message: '' };
    expect(approvalsOf(co, [released, gate('security', [], 'SecurityReview', 1)])).toEqual([{ Name: 'security', Type: 'SecurityReview', Count: 1, Counted: [], Missing: 0 }]);
  });
});

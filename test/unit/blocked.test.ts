import { describe, expect, it } from 'vitest';
import { blockedSince, blockedText } from '../../lib/changes/blocked.ts';
import { checkBlockedFor } from '../../lib/changes/notifications.ts';
import type { ChangeOrder, Explanation } from '../../lib/model/entities.ts';

const co = {
  ChangeOrderID: 'co1',
  SpaceID: 'base',
  Slug: 'scale',
  CreatedAt: '2026-12-07T10:00:00.000Z',
} as ChangeOrder;
const gate = (Prerequisite: string, SpaceSlug: string, Satisfied = false) => ({
  Prerequisite,
  SpaceSlug,
  SpaceID: SpaceSlug,
  Satisfied,
  Message: '',
});

describe('a blocked change order', () => {
  it('has waited since the last of the Stage before took it, or since it was made for the first Stage', () => {
    const over = (...ids: string[]) => ({ Over: ids.map((SpaceID) => ({ SpaceID, SpaceSlug: SpaceID })) });
    expect(blockedSince(co, over('base'), [])).toBe(co.CreatedAt);
    const progress = [
      { SpaceID: 'a', ResolvedAt: '2026-12-07T11:00:00.000Z' },
      { SpaceID: 'b', ResolvedAt: '2026-12-07T12:30:00.000Z' },
      // Taken back out since: not the Stage reached.
      { SpaceID: 'c', ResolvedAt: '2026-12-07T13:00:00.000Z', RestoredAt: '2026-12-07T13:10:00.000Z' },
    ];
    expect(blockedSince(co, over('a', 'b', 'c'), progress)).toBe('2026-12-07T12:30:00.000Z');
    expect(blockedSince(co, over('a'), progress)).toBe('2026-12-07T11:00:00.000Z');
  });

  it('is told in one line: how long, the Stage, each gate shut and where (three Spaces, then how many more), and the command that says why', () => {
    const e = {
      Stage: 'prod',
      Gates: [
        gate('Approved', 'eu-1'),
        gate('Approved', 'eu-2'),
        gate('Approved', 'eu-3'),
        gate('Approved', 'eu-4'),
        gate('Approved', 'eu-5'),
        gate('Healthy', 'eu-1', true),
        gate('Hold', 'us-1'),
      ],
    } as unknown as Explanation;
    expect(blockedText('base', co, e, 2 * 3600 + 300)).toBe(
      'Baton: change order base/scale has waited 2h5m to go into stage prod: Approved (eu-1, eu-2, eu-3 and 2 more); Hold (us-1) not met. Why: cub changeorder explain --space base scale',
    );
  });

  it('is told after BlockedFor: 1h when not given, from 5m to 30d, and only on Blocked', () => {
    expect(checkBlockedFor(['Blocked'], undefined)).toBe('1h');
    expect(checkBlockedFor(['Blocked', 'Completed'], '5m')).toBe('5m');
    expect(checkBlockedFor(['Blocked'], '30d')).toBe('30d');
    expect(checkBlockedFor(['Completed'], undefined)).toBeUndefined();
    expect(() => checkBlockedFor(['Blocked'], '4m')).toThrow("BlockedFor '4m' must be from 5m");
    expect(() => checkBlockedFor(['Blocked'], '2h30m')).toThrow("BlockedFor '2h30m' is not a duration");
    expect(() => checkBlockedFor(['StageAdvanced'], '2h')).toThrow('add Blocked to On');
  });
});

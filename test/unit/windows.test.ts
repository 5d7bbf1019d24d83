import { describe, expect, it } from 'vitest';
import { blockingAt, nextClear, openingAt, windowGates, windowState } from '../../lib/gates/windows.ts';
import { checkSchedule } from '../../lib/changes/windows.ts';
import type { DeployWindow } from '../../lib/model/entities.ts';

const t = (iso: string) => Date.parse(iso);
const at = (ms: number | null | undefined) => (ms === null || ms === undefined ? ms : new Date(ms).toISOString());

function win(slug: string, o: Partial<DeployWindow>): DeployWindow {
  return {
    WindowID: `id-${slug}`,
    OrganizationID: 'org',
    Slug: slug,
    Kind: 'Allow',
    Reason: `because ${slug}`,
    OwnerID: 'u-ada',
    Scope: 'Space',
    SpaceID: 's1',
    Blocks: ['promote'],
    OverrideApprovals: 0,
    CreatedAt: '2026-12-01T00:00:00.000Z',
    UpdatedAt: '2026-12-01T00:00:00.000Z',
    Version: 1,
    ...o,
  };
}

// Monday to Thursday from 09:00 Berlin time for six hours: 08:00–14:00 UTC in winter, 07:00–13:00 in summer.
const weekdays = win('weekdays', { Cron: '0 9 * * 1-4', Duration: '6h', TimeZone: 'Europe/Berlin' });

describe('deploy windows: the schedule (pure)', () => {
  it('opens at each firing of its cron, read in its time zone, for its duration (summer time included)', () => {
    expect(windowState(weekdays, t('2026-12-07T07:59:59Z'))).toEqual({
      active: false,
      changesAt: t('2026-12-07T08:00:00Z'),
    });
    expect(windowState(weekdays, t('2026-12-07T08:00:00Z'))).toEqual({
      active: true,
      changesAt: t('2026-12-07T14:00:00Z'),
    });
    // The end is not inside the opening.
    expect(windowState(weekdays, t('2026-12-07T14:00:00Z')).active).toBe(false);
    // Thursday afternoon: the next opening is Monday's.
    expect(at(windowState(weekdays, t('2026-12-10T15:00:00Z')).changesAt)).toBe('2026-12-14T08:00:00.000Z');
    // After the clocks go forward (28 March 2027), 09:00 in Berlin is 07:00 UTC.
    expect(openingAt(weekdays, t('2027-03-29T07:30:00Z'))).toEqual({
      start: t('2027-03-29T07:00:00Z'),
      end: t('2027-03-29T13:00:00Z'),
    });
  });

  it('joins openings that run into each other, and a one-off window is open from its start to its end', () => {
    const nightly = win('nightly', { Cron: '0 22 * * *', Duration: '25h', TimeZone: 'UTC' });
    // Each opening outlasts the next firing: open from the first firing on, for good as far as it is followed.
    expect(openingAt(nightly, t('2026-12-08T12:00:00Z'))?.end).toBe(Infinity);
    const once = win('once', { Start: '2026-12-19T00:00:00.000Z', End: '2027-01-04T00:00:00.000Z' });
    expect(windowState(once, t('2026-12-18T23:00:00Z'))).toEqual({
      active: false,
      changesAt: t('2026-12-19T00:00:00Z'),
    });
    expect(windowState(once, t('2026-12-25T00:00:00Z'))).toEqual({
      active: true,
      changesAt: t('2027-01-04T00:00:00Z'),
    });
    expect(windowState(once, t('2027-01-04T00:00:00Z'))).toEqual({ active: false, changesAt: null });
  });

  it("blocks as Argo CD's sync windows do: a freeze in force wins, and where Allow windows apply one must be open", () => {
    const freeze = win('freeze', { Kind: 'Deny', Start: '2026-12-07T00:00:00Z', End: '2026-12-09T12:00:00Z' });
    const evenings = win('evenings', { Cron: '0 18 * * *', Duration: '2h', TimeZone: 'UTC' });
    // Inside weekdays' opening, outside evenings': one open Allow window is enough.
    expect(blockingAt([weekdays, evenings], t('2026-12-10T10:00:00Z'))).toEqual([]);
    // Neither open: both are named.
    expect(blockingAt([weekdays, evenings], t('2026-12-10T15:00:00Z')).map((w) => w.Slug)).toEqual([
      'weekdays',
      'evenings',
    ]);
    // A freeze in force blocks even inside an open window.
    expect(blockingAt([weekdays, freeze], t('2026-12-08T10:00:00Z')).map((w) => w.Slug)).toEqual(['freeze']);
    // The first clear instant: the freeze ends on Wednesday at 12:00 UTC, inside that day's opening.
    expect(at(nextClear([weekdays, freeze], t('2026-12-07T07:00:00Z')))).toBe('2026-12-09T12:00:00.000Z');
    // A freeze ending after Wednesday's opening: Thursday's.
    const longer = { ...freeze, End: '2026-12-09T15:00:00Z' };
    expect(at(nextClear([weekdays, longer], t('2026-12-07T07:00:00Z')))).toBe('2026-12-10T08:00:00.000Z');
    // No windows, or only Deny windows not in force: clear now.
    expect(nextClear([freeze], t('2026-12-10T00:00:00Z'))).toBe(t('2026-12-10T00:00:00Z'));
    // A freeze far off ends when it says, however far.
    const decades = win('decades', { Kind: 'Deny', Start: '2026-01-01T00:00:00Z', End: '2099-01-01T00:00:00Z' });
    expect(at(nextClear([decades], t('2026-12-10T00:00:00Z')))).toBe('2099-01-01T00:00:00.000Z');
    // An Allow window that never opens again: never.
    const past = win('past', { Start: '2026-12-01T00:00:00Z', End: '2026-12-02T00:00:00Z' });
    expect(nextClear([past], t('2026-12-10T00:00:00Z'))).toBeNull();
  });

  it('reports one gate per window: failing with the Spaces it blocks and when they clear, satisfied otherwise', () => {
    const p1 = { SpaceID: 's1', Slug: 'acme-prod-eu' };
    const p2 = { SpaceID: 's2', Slug: 'acme-prod-us' };
    const gates = windowGates(
      [
        { space: p1, windows: [weekdays] },
        { space: p2, windows: [weekdays] },
      ],
      new Date('2026-12-10T15:00:00Z'),
      'promote',
      { owner: () => 'ada' },
    );
    expect(gates).toEqual([
      {
        Prerequisite: 'Window',
        Satisfied: false,
        SpaceID: '',
        SpaceSlug: '',
        Message:
          "window 'weekdays' ('0 9 * * 1-4' for 6h (Europe/Berlin), placed by ada: because weekdays) is closed over 2 spaces, it next opens at 2026-12-14T08:00:00.000Z; wait, or pass it with --force --force-reason",
        Evidence: expect.objectContaining({
          Window: 'weekdays',
          Active: false,
          ChangesAt: '2026-12-14T08:00:00.000Z',
          Spaces: ['acme-prod-eu', 'acme-prod-us'],
          Blocked: ['acme-prod-eu', 'acme-prod-us'],
          ClearAt: '2026-12-14T08:00:00.000Z',
        }),
        Opens: 'the clock: 2 spaces clear at 2026-12-14T08:00:00.000Z; or --force --force-reason',
      },
    ]);
    // Inside the opening: satisfied, saying until when.
    const open = windowGates([{ space: p1, windows: [weekdays] }], new Date('2026-12-10T09:00:00Z'), 'promote');
    expect(open).toEqual([
      expect.objectContaining({
        Satisfied: true,
        SpaceSlug: 'acme-prod-eu',
        Message: "window 'weekdays' is open until 2026-12-10T14:00:00.000Z",
      }),
    ]);
    // A window that asks for override approvals says so; a demote is governed only by a window naming it.
    const guarded = { ...weekdays, OverrideApprovals: 2 };
    const [refused] = windowGates([{ space: p1, windows: [guarded] }], new Date('2026-12-10T15:00:00Z'), 'promote');
    expect(refused!.Message).toContain(
      'wait, or pass it with --force --force-reason once 2 other people have approved the override (cub changeorder approve-override --window weekdays)',
    );
    expect(windowGates([{ space: p1, windows: [guarded] }], new Date('2026-12-10T15:00:00Z'), 'demote')).toEqual([]);
    const [demote] = windowGates(
      [{ space: p1, windows: [{ ...guarded, Blocks: ['promote', 'demote'] }] }],
      new Date('2026-12-10T15:00:00Z'),
      'demote',
    );
    expect(demote!.Message).toMatch(/wait, or its owner or an Admin deletes it \(cub window delete weekdays\)$/);
  });
});

describe('deploy windows: what a schedule must be (refused, naming what is wrong)', () => {
  const now = new Date('2026-12-07T07:00:00Z');
  const refused = (o: Parameters<typeof checkSchedule>[0]) => {
    try {
      checkSchedule(o, now);
    } catch (e) {
      return (e as Error).message;
    }
    return 'accepted';
  };
  const base = { Slug: 'w', Reason: 'r' };
  it.each([
    [{ Cron: '0 0 30 2 *', Duration: '1h' }, "Cron '0 0 30 2 *' never fires (in UTC): the window would never open"],
    [
      { Cron: '0 9 * * 1-4', Duration: '6h', TimeZone: 'Mars/Olympus' },
      "TimeZone 'Mars/Olympus' is not a time zone: name one such as Europe/Berlin or UTC",
    ],
    [
      { Cron: '0 0 9 * * 1-4', Duration: '6h' },
      "Cron '0 0 9 * * 1-4' must have five fields (minute hour day-of-month month day-of-week), such as '0 9 * * 1-4'",
    ],
    [{ Cron: '0 99 * * *', Duration: '6h' }, expect.stringMatching(/^Cron '0 99 \* \* \*' is not a cron schedule: /)],
    [
      { Cron: '0 9 * * *', Duration: 'six hours' },
      "Duration 'six hours' must be a duration from 1m to 366d, such as 6h, 90m or 2d",
    ],
    [
      { Cron: '0 9 * * *', Duration: '24h' },
      "Duration 24h is at least as long as the time between firings of '0 9 * * *': its openings run into each other and it never closes",
    ],
    [
      { Cron: '0 9 * * *' },
      'a recurring window needs --cron (five fields: minute hour day month weekday) and --duration',
    ],
    [
      { Cron: '0 9 * * *', Duration: '1h', Start: '2026-12-08T00:00:00Z' },
      'a window has one schedule: give --cron C --duration D [--time-zone Z] (recurring) or --start T --end T (once)',
    ],
    [
      {},
      'a window has one schedule: give --cron C --duration D [--time-zone Z] (recurring) or --start T --end T (once)',
    ],
    [{ Start: '2026-12-08T00:00:00Z' }, 'a one-off window needs both --start and --end'],
    [
      { Start: 'tomorrow', End: '2026-12-09T00:00:00Z' },
      "Start 'tomorrow' must be an ISO time such as 2026-12-19T00:00:00Z",
    ],
    [
      { Start: '2026-12-09T00:00:00Z', End: '2026-12-08T00:00:00Z' },
      'End 2026-12-08T00:00:00Z must be after Start 2026-12-09T00:00:00Z',
    ],
    [
      { Start: '2026-12-01T00:00:00Z', End: '2026-12-02T00:00:00Z' },
      'End 2026-12-02T00:00:00Z has passed: the window would never apply',
    ],
  ])('%j: %s', (o, message) => {
    expect(refused({ ...base, ...o })).toEqual(message);
  });
  it('keeps a cron as five single-spaced fields, UTC when no zone is named, and a one-off in UTC ISO', () => {
    expect(checkSchedule({ ...base, Cron: ' 0  9 * * 1-4 ', Duration: '6h' }, now)).toEqual({
      Cron: '0 9 * * 1-4',
      Duration: '6h',
      TimeZone: 'UTC',
    });
    expect(checkSchedule({ ...base, Start: '2026-12-19T01:00:00+01:00', End: '2027-01-04T00:00:00Z' }, now)).toEqual({
      Start: '2026-12-19T00:00:00.000Z',
      End: '2027-01-04T00:00:00.000Z',
    });
  });
});

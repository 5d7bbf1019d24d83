import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WindowEventDetail, WindowOverrideApprovedDetail } from '../../lib/events/contracts.ts';
import { unspentApprovals } from '../../lib/model/entities.ts';
import { Api, deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

let env: Env;
let mia: Api;
let oli: Api;
/** The server's clock: Monday 7 December 2026, 07:00 UTC (08:00 in Berlin), moved by the tests. */
let clock = Date.parse('2026-12-07T07:00:00Z');
let cub: ReturnType<typeof cubAt>;

/** A base of one Unit, `n` Production variants, a one-Stage workflow and a change order `scale`. */
async function fleet(name: string, n: number): Promise<void> {
  expect(
    (
      await env.api.post('/variant/upload', {
        Component: name,
        Variant: 'base',
        Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
      })
    ).status,
  ).toBe(201);
  for (let i = 0; i < n; i++)
    expect(
      (
        await env.api.post('/variant', {
          Name: `p${i}`,
          UpstreamSpaceID: `${name}-base`,
          Stage: 'Production',
          Namespace: 'prod',
        })
      ).status,
    ).toBe(201);
  await env.api.post(`/space/${name}-base/change_workflow`, {
    Slug: 'w',
    Stages: [{ Name: 'Production', WhereSpace: `Labels.Stage = 'Production' AND Slug LIKE '${name}-p%'` }],
  });
  await env.api.post(`/space/${name}-base/function/invoke`, {
    FunctionName: 'set-replicas',
    Arguments: ['3'],
    UnitIDs: ['app'],
  });
  expect(
    (await env.api.post(`/space/${name}-base/change_order`, { Slug: 'scale', ChangeWorkflowID: `${name}-base/w` }))
      .status,
  ).toBe(201);
}

beforeAll(async () => {
  env = await startEnv({ now: () => new Date(clock) });
  mia = new Api(env.url, (await env.api.post('/user', { Slug: 'mia', Role: 'Member' })).body.Token);
  oli = new Api(env.url, (await env.api.post('/user', { Slug: 'oli', Role: 'Member' })).body.Token);
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

describe('deploy windows', () => {
  it('a promotion outside an allowing window is refused naming it and when it opens; inside it, it goes', async () => {
    clock = Date.parse('2026-12-07T07:00:00Z');
    await fleet('aw', 2);
    const made = await env.api.post('/window', {
      Slug: 'prod-weekdays',
      Workflow: 'aw-base/w',
      Stage: 'Production',
      Cron: '0 9 * * 1-4',
      Duration: '6h',
      TimeZone: 'Europe/Berlin',
      Reason: 'prod changes while the on-call team is in',
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({
      Slug: 'prod-weekdays',
      Kind: 'Allow',
      Scope: 'Stage',
      SpaceSlug: 'aw-base',
      ChangeWorkflowSlug: 'w',
      Stage: 'Production',
      Blocks: ['promote'],
      OverrideApprovals: 0,
      OwnerSlug: 'admin',
      Active: false,
      ChangesAt: '2026-12-07T08:00:00.000Z',
    });
    const event = env.bus.log.find((e) => e.detailType === 'Window Created' && e.detail.Slug === 'prod-weekdays')!;
    expect(WindowEventDetail.parse(event.detail)).toMatchObject({ Cron: '0 9 * * 1-4', TimeZone: 'Europe/Berlin' });

    const refused = await env.api.post('/promote', { ChangeOrderID: 'aw-base/scale' });
    expect(refused.status).toBe(409);
    expect(refused.body.Message).toBe(
      "unable to promote to stage 'Production': window 'prod-weekdays' ('0 9 * * 1-4' for 6h (Europe/Berlin), placed by admin: prod changes while the on-call team is in) is closed over 2 spaces, it next opens at 2026-12-07T08:00:00.000Z; wait, or pass it with --force --force-reason",
    );
    expect((await env.api.get('/space/aw-base/change_order/scale')).body).toMatchObject({ Promotions: [] });
    // explain shows it as a gate with its evidence and what opens it.
    const explained = (await env.api.get('/space/aw-base/change_order/scale/explain')).body;
    expect(explained.Open).toBe(false);
    expect(explained.Gates).toEqual([
      expect.objectContaining({
        Prerequisite: 'Window',
        Satisfied: false,
        Evidence: expect.objectContaining({
          Window: 'prod-weekdays',
          Schedule: "'0 9 * * 1-4' for 6h (Europe/Berlin)",
          Blocked: ['aw-p0', 'aw-p1'],
          ClearAt: '2026-12-07T08:00:00.000Z',
        }),
        Opens: 'the clock: 2 spaces clear at 2026-12-07T08:00:00.000Z; or --force --force-reason',
      }),
    ]);
    const shown = await cub(['changeorder', 'explain', '--space', 'aw-base', 'scale']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      "read: window prod-weekdays by admin, '0 9 * * 1-4' for 6h (Europe/Berlin): prod changes while the on-call team is in; closed now, until 2026-12-07T08:00:00.000Z; over aw-p0, aw-p1; blocks aw-p0, aw-p1 (clear at 2026-12-07T08:00:00.000Z)",
    );
    // Inside the opening (09:30 in Berlin) the promotion goes, the window a gate that holds.
    clock = Date.parse('2026-12-07T08:30:00Z');
    const went = await env.api.post('/promote', { ChangeOrderID: 'aw-base/scale' });
    expect(went.status, went.text).toBe(200);
    expect(went.body).toMatchObject({ Forced: false, Landed: 2 });
    expect(went.body.Gates).toEqual([
      expect.objectContaining({
        Prerequisite: 'Window',
        Satisfied: true,
        Message: "window 'prod-weekdays' is open until 2026-12-07T14:00:00.000Z",
      }),
    ]);
  });

  it('a freeze over a where refuses promotions into the Spaces it selects; forcing it needs the approvals it asks for, by others', async () => {
    clock = Date.parse('2026-12-20T10:00:00Z');
    await fleet('fz', 2);
    const made = await env.api.post('/window', {
      Slug: 'year-end',
      Deny: true,
      WhereSpace: "Slug = 'fz-p1'",
      Start: '2026-12-19T00:00:00Z',
      End: '2027-01-04T00:00:00Z',
      OverrideApprovals: 1,
      Reason: 'year-end change freeze',
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ Kind: 'Deny', Active: true, ChangesAt: '2027-01-04T00:00:00.000Z' });
    const refused = await env.api.post('/promote', { ChangeOrderID: 'fz-base/scale' });
    expect(refused.status).toBe(409);
    expect(refused.body.Message).toBe(
      "unable to promote to stage 'Production': freeze window 'year-end' (from 2026-12-19T00:00:00.000Z to 2027-01-04T00:00:00.000Z, placed by admin: year-end change freeze) is in force over space 'fz-p1', until 2027-01-04T00:00:00.000Z; wait, or pass it with --force --force-reason once 1 other person has approved the override (cub changeorder approve-override --window year-end)",
    );
    // --force alone is not enough; nor is the forcer's own approval.
    const force = { ChangeOrderID: 'fz-base/scale', Force: true, ForceReason: 'sev1 fix for checkout' };
    const alone = await env.api.post('/promote', force);
    expect(alone.status).toBe(409);
    expect(alone.body.Message).toBe(
      "window 'year-end' needs 1 override approval(s) by people other than you before --force passes it; change order 'scale' has 0: each approver runs cub changeorder approve-override --space <base> scale --window year-end --reason R",
    );
    const own = await cub([
      'changeorder',
      'approve-override',
      '--space',
      'fz-base',
      'scale',
      '--window',
      'year-end',
      '--reason',
      'I am sure',
    ]);
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toBe(
      'Approved overriding window year-end for change order scale: 1 unspent approval(s) now (admin)\n',
    );
    expect((await env.api.post('/promote', force)).status).toBe(409);
    // Approving twice is refused; a window that asks for none has nothing to approve.
    const twice = await env.api.post('/space/fz-base/change_order/scale/override_approval', {
      Window: 'year-end',
      Reason: 'again',
    });
    expect(twice.status).toBe(409);
    expect(twice.body.Message).toBe("you have approved overriding window 'year-end' for change order 'scale' already");
    const approved = await mia.post('/space/fz-base/change_order/scale/override_approval', {
      Window: 'year-end',
      Reason: 'checked the fix with the on-call lead',
    });
    expect(approved.status, approved.text).toBe(201);
    expect(approved.body.OverrideApprovals).toEqual([
      expect.objectContaining({ WindowSlug: 'year-end', UserSlug: 'admin', Reason: 'I am sure' }),
      expect.objectContaining({
        WindowSlug: 'year-end',
        UserSlug: 'mia',
        Reason: 'checked the fix with the on-call lead',
      }),
    ]);
    const ev = env.bus.log.find((e) => e.detailType === 'Window Override Approved' && e.detail.Reason === 'I am sure')!;
    expect(WindowOverrideApprovedDetail.parse(ev.detail)).toMatchObject({ WindowSlug: 'year-end', Slug: 'scale' });
    const forced = await env.api.post('/promote', force);
    expect(forced.status, forced.text).toBe(200);
    expect(forced.body).toMatchObject({ Forced: true, Landed: 2 });
    const co = (await env.api.get('/space/fz-base/change_order/scale')).body;
    expect(co.PromotionOverrides).toEqual([
      expect.objectContaining({
        Reason: 'sev1 fix for checkout',
        FailedGates: [expect.objectContaining({ Prerequisite: 'Window', SpaceSlug: 'fz-p1' })],
        // Counted: the approvals by people other than the one who forced it.
        Approvals: [expect.objectContaining({ UserSlug: 'mia', Reason: 'checked the fix with the on-call lead' })],
      }),
    ]);
    const got = await cub(['changeorder', 'get', '--space', 'fz-base', 'scale']);
    expect(got.stdout).toMatch(
      /Override Approvals +window year-end: admin at 2026-12-20T10:00:00.000Z \(I am sure\); window year-end: mia at 2026-12-20T10:00:00.000Z \(checked the fix with the on-call lead\)/,
    );
    // An approval lets one forced promotion through: mia's is spent, so she may approve the next one; admin's was not counted.
    expect(unspentApprovals(co, made.body.WindowID).map((a) => a.UserSlug)).toEqual(['admin']);
    const next = await cubAt(
      env.url,
      mia.token!,
    )([
      'changeorder',
      'approve-override',
      '--space',
      'fz-base',
      'scale',
      '--window',
      'year-end',
      '--reason',
      'next one',
    ]);
    expect([next.code, next.stdout]).toEqual([
      0,
      'Approved overriding window year-end for change order scale: 2 unspent approval(s) now (admin, mia)\n',
    ]);
  });

  it('taking a change back out is not blocked by a window unless the window says so', async () => {
    clock = Date.parse('2026-12-08T09:00:00Z');
    await fleet('rb', 1);
    expect((await env.api.post('/promote', { ChangeOrderID: 'rb-base/scale' })).status).toBe(200);
    // A freeze over promotions only: the abort and the demote go.
    const only = await mia.post('/window', {
      Slug: 'rb-promote-freeze',
      Deny: true,
      Space: 'rb-p0',
      Start: '2026-12-08T00:00:00Z',
      End: '2026-12-09T00:00:00Z',
      Reason: 'release train paused',
    });
    expect(only.status, only.text).toBe(201);
    // A plain variant promote into the Space is refused too: no ChangeOrder records an override of it.
    const plain = await env.api.post('/promote', { Space: 'rb-p0' });
    expect(plain.status).toBe(409);
    expect(plain.body.Message).toBe(
      "unable to promote space 'rb-p0': freeze window 'rb-promote-freeze' (from 2026-12-08T00:00:00.000Z to 2026-12-09T00:00:00.000Z, placed by mia: release train paused) is in force over space 'rb-p0', until 2026-12-09T00:00:00.000Z; wait, or its owner or an Admin deletes it (cub window delete rb-promote-freeze)",
    );
    // One that names aborts refuses the first abort, naming it; nothing is written.
    const abortFreeze = await mia.post('/window', {
      Slug: 'rb-no-abort',
      Deny: true,
      Space: 'rb-p0',
      Start: '2026-12-08T00:00:00Z',
      End: '2026-12-09T00:00:00Z',
      Blocks: ['abort'],
      Reason: 'leave prod alone today',
    });
    expect(abortFreeze.body.Blocks).toEqual(['promote', 'abort']);
    const version = (await env.api.get('/space/rb-base/change_order/scale')).body.Version;
    const abort = await env.api.patch('/space/rb-base/change_order/scale', {
      AbortedReason: 'bad scale',
      Version: version,
    });
    expect(abort.status).toBe(409);
    expect(abort.body.Message).toBe(
      "unable to abort change order 'scale': freeze window 'rb-no-abort' (from 2026-12-08T00:00:00.000Z to 2026-12-09T00:00:00.000Z, placed by mia: leave prod alone today) is in force over space 'rb-p0', until 2026-12-09T00:00:00.000Z; wait, or its owner or an Admin deletes it (cub window delete rb-no-abort)",
    );
    expect((await env.api.get('/space/rb-base/change_order/scale')).body.AbortedReason).toBeUndefined();
    // Only its owner or an Admin deletes it.
    const denied = await oli.del('/window/rb-no-abort');
    expect(denied.status).toBe(403);
    expect(denied.body.Message).toBe("only the owner of window 'rb-no-abort' or an Admin may delete it");
    const deleted = await cub(['window', 'delete', 'rb-no-abort']);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe('Deleted window rb-no-abort\n');
    expect(env.bus.log.some((e) => e.detailType === 'Window Deleted' && e.detail.Slug === 'rb-no-abort')).toBe(true);
    expect(
      (await env.api.patch('/space/rb-base/change_order/scale', { AbortedReason: 'bad scale', Version: version }))
        .status,
    ).toBe(200);
    // A window that names demotes refuses one; the promote-only freeze does not.
    const demoteFreeze = await mia.post('/window', {
      Slug: 'rb-no-demote',
      Space: 'rb-p0',
      Cron: '0 9 * * 1-5',
      Duration: '1h',
      Blocks: ['demote'],
      Reason: 'demote in the morning hour only',
    });
    expect(demoteFreeze.status, demoteFreeze.text).toBe(201);
    clock = Date.parse('2026-12-08T10:30:00Z');
    const demote = await env.api.post('/demote', { Space: 'rb-p0', ChangeOrderID: 'rb-base/scale' });
    expect(demote.status).toBe(409);
    expect(demote.body.Message).toBe(
      "unable to demote change order 'scale': window 'rb-no-demote' ('0 9 * * 1-5' for 1h (UTC), placed by mia: demote in the morning hour only) is closed over space 'rb-p0', it next opens at 2026-12-09T09:00:00.000Z; wait, or its owner or an Admin deletes it (cub window delete rb-no-demote)",
    );
    clock = Date.parse('2026-12-09T09:10:00Z');
    const restored = await env.api.post('/demote', { Space: 'rb-p0', ChangeOrderID: 'rb-base/scale' });
    expect(restored.status, restored.text).toBe(200);
    expect(restored.body.Restored).toBe(true);
  });

  it('cub window create, list and get; bad input is a 4xx naming what is wrong, with nothing written', async () => {
    clock = Date.parse('2026-12-07T07:00:00Z');
    await fleet('cw', 1);
    const made = await cub([
      'window',
      'create',
      'cw-evenings',
      '--space',
      'cw-p0',
      '--cron',
      '0 18 * * *',
      '--duration',
      '2h',
      '--time-zone',
      'America/New_York',
      '--reason',
      'quiet hours',
      '--override-approvals',
      '2',
      '--owner',
      'oli',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^SLUG +KIND +COVERS +SCHEDULE +NOW +BLOCKS +OVERRIDES +OWNER +REASON/);
    expect(made.stdout).toMatch(
      /cw-evenings +Allow +space cw-p0 +0 18 \* \* \* for 2h \(America\/New_York\) +closed until 2026-12-07T23:00:00.000Z +promote +2 approval\(s\) +oli +quiet hours/,
    );
    const got = await cub(['window', 'get', 'cw-evenings', '-o', 'json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ Slug: 'cw-evenings', OwnerSlug: 'oli', SpaceSlug: 'cw-p0' });
    const before = (await env.api.get('/window')).body.length;
    const bad: [string[], string][] = [
      [
        ['--space', 'cw-p0', '--cron', '0 0 30 2 *', '--duration', '1h'],
        "Cron '0 0 30 2 *' never fires (in UTC): the window would never open",
      ],
      [
        ['--space', 'cw-p0', '--cron', '0 9 * * *', '--duration', '1h', '--time-zone', 'Europe/Atlantis'],
        "TimeZone 'Europe/Atlantis' is not a time zone: name one such as Europe/Berlin or UTC",
      ],
      [
        ['--space', 'cw-p0', '--workflow', 'cw-base/w', '--cron', '0 9 * * *', '--duration', '1h'],
        'a window covers one thing: give exactly one of --space S, --where-space W, or --workflow S/wf --stage ST',
      ],
      [
        ['--workflow', 'cw-base/w', '--stage', 'qa', '--cron', '0 9 * * *', '--duration', '1h'],
        "workflow 'w' has no stage 'qa'; stages: Production",
      ],
      [
        ['--space', 'cw-p0', '--start', '2026-12-08T00:00:00Z', '--end', '2026-12-08T00:00:00Z'],
        'End 2026-12-08T00:00:00Z must be after Start 2026-12-08T00:00:00Z',
      ],
      [
        ['--space', 'cw-p0', '--cron', '0 9 * * *', '--duration', '1h', '--owner', 'nobody'],
        "Owner 'nobody' is not a user of this organization",
      ],
    ];
    for (const [args, message] of bad) {
      const r = await cub(['window', 'create', 'cw-bad', ...args, '--reason', 'r']);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr).toContain(message);
    }
    // A where over every Space is an Admin's to place.
    const where = await mia.post('/window', {
      Slug: 'cw-all',
      WhereSpace: "Labels.Stage = 'Production'",
      Cron: '0 9 * * *',
      Duration: '1h',
      Reason: 'r',
    });
    expect(where.status).toBe(403);
    const unparsable = await env.api.post('/window', {
      Slug: 'cw-all',
      WhereSpace: 'Labels.Stage ==',
      Cron: '0 9 * * *',
      Duration: '1h',
      Reason: 'r',
    });
    expect(unparsable.status).toBe(400);
    expect(
      (await env.api.post('/window', { Slug: 'cw-x', Space: 'cw-p0', Reason: 'r', Cron: 'x'.repeat(101) })).status,
    ).toBe(400);
    expect((await env.api.get('/window')).body.length).toBe(before);
    const listed = await cub(['window', 'list']);
    expect(listed.stdout).toContain('cw-evenings');
    expect(listed.stdout).not.toContain('cw-bad');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

let env: Env;
let cub: ReturnType<typeof cubAt>;
/** The server's clock, moved by the test: the change order is made at 10:00 UTC on 7 December 2026. */
let clock = Date.parse('2026-12-07T10:00:00Z');
const at = (hhmm: string) => (clock = Date.parse(`2026-12-07T${hhmm}:00Z`));

beforeAll(async () => {
  env = await startEnv({ now: () => new Date(clock) });
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

describe('how long a change waits, and when it will arrive', () => {
  it('tells each Stage’s wait by kind of gate, from the records kept, and an ETA from what is still open', async () => {
    at('10:00');
    await env.api.post('/space', { Slug: 'tl-infra' });
    await env.api.post('/space/tl-infra/target', { Slug: 'canary' });
    expect(
      (
        await env.api.post('/variant/upload', {
          Component: 'tl',
          Variant: 'base',
          Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
        })
      ).status,
    ).toBe(201);
    for (const [name, target] of [
      ['canary', 'tl-infra/canary'],
      ['prod', undefined],
    ] as const)
      expect(
        (
          await env.api.post('/variant', {
            Name: name,
            UpstreamSpaceID: 'tl-base',
            Stage: 'Production',
            Namespace: 'prod',
            ...(target ? { ReleaseTargetID: target } : {}),
          })
        ).status,
      ).toBe(201);
    const wf = await env.api.post('/space/tl-base/change_workflow', {
      Slug: 'w',
      Stages: [
        { Name: 'canary', WhereSpace: "Slug = 'tl-canary'" },
        {
          Name: 'prod',
          WhereSpace: "Slug = 'tl-prod'",
          Prerequisites: ['Released', 'Healthy', 'Soak=30m', 'one-approver'],
        },
      ],
      AttestationPrerequisites: [{ Name: 'one-approver', Count: 1, AllowAuthors: true }],
    });
    expect(wf.status, wf.text).toBe(201);
    await env.api.post('/space/tl-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['3'],
      UnitIDs: ['app'],
    });
    expect(
      (await env.api.post('/space/tl-base/change_order', { Slug: 'scale', ChangeWorkflowID: 'tl-base/w' })).status,
    ).toBe(201);
    // prod opens from 12:00 to 14:00 UTC.
    expect(
      (
        await env.api.post('/window', {
          Slug: 'tl-noon',
          Space: 'tl-prod',
          Cron: '0 12 * * *',
          Duration: '2h',
          Reason: 'noon',
        })
      ).status,
    ).toBe(201);
    expect((await env.api.post('/promote', { ChangeOrderID: 'tl-base/scale' })).status).toBe(200);
    at('10:20');
    expect((await env.api.post('/space/tl-canary/release', { Revision: 'ChangeOrder:tl-base/scale' })).status).toBe(
      201,
    );
    at('10:30');
    const healthy = await env.api.patch('/space/tl-canary/release/1', {
      LiveStatus: { Sync: 'Synced', Health: 'Healthy', ObservedAt: '2026-12-07T10:30:00Z', Reporter: 'argocd' },
    });
    expect(healthy.status, healthy.text).toBe(200);
    at('10:35');
    expect((await env.api.post('/hold', { Slug: 'tl-hold', Space: 'tl-prod', Reason: 'db check' })).status).toBe(201);

    // 10:40: prod waits on the soak, the approval, the hold and the window; the ETA is up to people.
    at('10:40');
    const waiting = (await env.api.get('/space/tl-base/change_order/scale/timeline')).body;
    expect(waiting.Stages).toEqual([
      {
        Name: 'canary',
        Spaces: ['tl-canary'],
        ReadyAt: '2026-12-07T10:00:00.000Z',
        EnteredAt: '2026-12-07T10:00:00.000Z',
        LeftAt: '2026-12-07T10:00:00.000Z',
        WaitedSeconds: 0,
        Waiting: {},
      },
      {
        Name: 'prod',
        Spaces: ['tl-prod'],
        ReadyAt: '2026-12-07T10:00:00.000Z',
        WaitedSeconds: 2400,
        Waiting: { Release: 1200, Health: 600, Soak: 600, Approvals: 2400, Holds: 300, Windows: 2400 },
        Open: ['Soak', 'Approvals', 'Holds', 'Windows'],
      },
    ]);
    expect(waiting.ETA).toEqual({
      Stage: 'prod',
      At: null,
      Because: ['stage prod is held (tl-hold): up to whoever lifts it', 'stage prod waits on approvals: up to people'],
    });
    const shown = await cub(['changeorder', 'timeline', '--space', 'tl-base', 'scale']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.split('\n')[0]).toMatch(
      /^STAGE +READY +ENTERED +LEFT +WAITED +RELEASE +HEALTH +SOAK +APPROVALS +HOLDS +WINDOWS +OPEN$/,
    );
    expect(shown.stdout).toMatch(
      /\nprod +2026-12-07T10:00:00.000Z +- +- +40m +20m +10m +10m +40m +5m +40m +Soak, Approvals, Holds, Windows\n/,
    );
    expect(shown.stdout).toContain(
      'ETA for prod: unknown (stage prod is held (tl-hold): up to whoever lifts it; stage prod waits on approvals: up to people)',
    );

    // Approved at 10:45, the hold lifted at 10:50: what is left is the clock — the soak ends at 11:00, the window opens at 12:00.
    at('10:45');
    expect((await env.api.post('/attest', { ChangeOrderID: 'tl-base/scale', Stage: 'canary' })).status).toBe(201);
    at('10:50');
    expect((await env.api.post('/hold/tl-hold/lift', { Note: 'checked' })).status).toBe(200);
    at('10:55');
    const clockOnly = (await env.api.get('/space/tl-base/change_order/scale/timeline')).body;
    expect(clockOnly.Stages[1]).toMatchObject({
      WaitedSeconds: 3300,
      Waiting: { Approvals: 2700, Holds: 900, Soak: 1500, Windows: 3300 },
      Open: ['Soak', 'Windows'],
    });
    expect(clockOnly.ETA).toEqual({
      Stage: 'prod',
      At: '2026-12-07T12:00:00.000Z',
      Because: ['the clock: soak and windows, if each promotion runs as soon as its gates open'],
    });

    // Promoted at 12:10: the Stage's wait, told by kind, and the ETA is when it arrived.
    at('12:10');
    const went = await env.api.post('/promote', { ChangeOrderID: 'tl-base/scale' });
    expect(went.status, went.text).toBe(200);
    const done = (await env.api.get('/space/tl-base/change_order/scale/timeline')).body;
    expect(done.Stages[1]).toEqual({
      Name: 'prod',
      Spaces: ['tl-prod'],
      ReadyAt: '2026-12-07T10:00:00.000Z',
      EnteredAt: '2026-12-07T12:10:00.000Z',
      LeftAt: '2026-12-07T12:10:00.000Z',
      WaitedSeconds: 7800,
      Waiting: { Release: 1200, Health: 600, Soak: 1800, Approvals: 2700, Holds: 900, Windows: 7200 },
    });
    expect(done.ETA).toEqual({ Stage: 'prod', At: '2026-12-07T12:10:00.000Z', Because: ['reached'] });
  });

  it('reports the four DORA figures per workflow, in a table and as JSON; a bad period is a 400', async () => {
    at('08:00');
    expect(
      (
        await env.api.post('/variant/upload', {
          Component: 'dr',
          Variant: 'base',
          Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
        })
      ).status,
    ).toBe(201);
    for (const name of ['dev', 'prod'])
      expect(
        (
          await env.api.post('/variant', {
            Name: name,
            UpstreamSpaceID: 'dr-base',
            Stage: 'Production',
            Namespace: 'prod',
          })
        ).status,
      ).toBe(201);
    expect(
      (
        await env.api.post('/space/dr-base/change_workflow', {
          Slug: 'dw',
          Stages: [
            { Name: 'dev', WhereSpace: "Slug = 'dr-dev'" },
            { Name: 'prod', WhereSpace: "Slug = 'dr-prod'" },
          ],
        })
      ).status,
    ).toBe(201);
    /** A change made at `made` (its first revision and its change order), promoted into each Stage at the times given. */
    const change = async (slug: string, replicas: number, made: string, ...promotions: string[]) => {
      at(made);
      await env.api.post('/space/dr-base/function/invoke', {
        FunctionName: 'set-replicas',
        Arguments: [String(replicas)],
        UnitIDs: ['app'],
      });
      expect(
        (await env.api.post('/space/dr-base/change_order', { Slug: slug, ChangeWorkflowID: 'dr-base/dw' })).status,
      ).toBe(201);
      for (const t of promotions) {
        at(t);
        const r = await env.api.post('/promote', { ChangeOrderID: `dr-base/${slug}` });
        expect(r.status, r.text).toBe(200);
      }
    };
    await change('one', 2, '09:00', '10:00', '12:00');
    await change('two', 3, '13:00', '13:30', '14:00');
    await change('three', 4, '15:00', '15:10');
    at('15:20');
    const v = (await env.api.get('/space/dr-base/change_order/three')).body.Version;
    expect(
      (await env.api.patch('/space/dr-base/change_order/three', { AbortedReason: 'bad', Version: v })).status,
    ).toBe(200);
    at('15:40');
    expect((await env.api.post('/demote', { Space: 'dr-dev', ChangeOrderID: 'dr-base/three' })).status).toBe(200);
    at('16:00');
    const report = await cub(['report', 'delivery', '--workflow', 'dr-base/dw', '--since', '30d', '-o', 'json']);
    expect(report.code, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout)).toEqual({
      Since: '30d',
      From: '2026-11-07T16:00:00.000Z',
      To: '2026-12-07T16:00:00.000Z',
      Workflows: [
        {
          Workflow: 'dr-base/dw',
          ChangeOrders: 3,
          Deployments: 2,
          DeploymentsPerDay: 0.07,
          LeadTime: [
            { Stage: 'dev', Count: 3, P50Seconds: 1800, P90Seconds: 3600 },
            { Stage: 'prod', Count: 2, P50Seconds: 3600, P90Seconds: 10800 },
          ],
          Failed: 1,
          ChangeFailureRate: 0.333,
          TimeToRestore: { Count: 1, P50Seconds: 1200, P90Seconds: 1200 },
        },
      ],
    });
    const table = await cub(['report', 'delivery', '--workflow', 'dr-base/dw']);
    expect(table.stdout).toBe(
      [
        'Change orders made from 2026-11-07T16:00:00.000Z to 2026-12-07T16:00:00.000Z (30d):',
        'WORKFLOW    CHANGE ORDERS  DEPLOYMENTS  PER DAY  LEAD TIME P50/P90         FAILURE RATE  TIME TO RESTORE P50/P90',
        'dr-base/dw  3              2            0.07     dev 30m/60m, prod 60m/3h  33.3% (1)     20m/20m',
        '',
      ].join('\n'),
    );
    // Every workflow: the timeline test's is listed too; a bad period names what is wrong.
    const all = (await env.api.get('/report/delivery')).body;
    expect(all.Workflows.map((w: { Workflow: string }) => w.Workflow)).toEqual(['dr-base/dw', 'tl-base/w']);
    const bad = await env.api.get('/report/delivery?since=forever');
    expect([bad.status, bad.body.Message]).toEqual([
      400,
      "since 'forever' must be a duration from 1m to 366d, such as 30d or 12h",
    ]);
  });
});

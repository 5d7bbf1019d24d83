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
});

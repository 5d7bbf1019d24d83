import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt, cubOk } from '../support/cli.ts';

let env: Env;
const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
const report = async (health: string, observedAt: string) => {
  const rel = (await env.api.get('/space/soak-stg/release')).body[0];
  const r = await env.api.patch(`/space/soak-stg/release/${rel.ReleaseNum}`, {
    LiveStatus: { Sync: 'Synced', Health: health, ObservedAt: observedAt },
  });
  expect(r.status, r.text).toBe(200);
};

beforeAll(async () => {
  env = await startEnv();
  await env.api.post('/space', { Slug: 'soak-infra' });
  await env.api.post('/space/soak-infra/target', { Slug: 'stg' });
  expect(
    (
      await env.api.post('/variant/upload', {
        Component: 'soak',
        Variant: 'base',
        Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
      })
    ).status,
  ).toBe(201);
  await env.api.post('/variant', {
    Name: 'stg',
    UpstreamSpaceID: 'soak-base',
    Stage: 'Staging',
    Namespace: 'stg',
    ReleaseTargetID: 'soak-infra/stg',
  });
  await env.api.post('/variant', { Name: 'prd', UpstreamSpaceID: 'soak-base', Stage: 'Production', Namespace: 'prd' });
});
afterAll(async () => env.close());

describe('Soak', () => {
  it('is written as Soak: 3m or Soak=3m and stored as Soak=3m; a Soak without a sane duration is refused', async () => {
    const made = await env.api.post('/space/soak-base/change_workflow', {
      Slug: 'soaked',
      Stages: [
        { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging' AND Slug LIKE 'soak-%'" },
        {
          Name: 'prod',
          WhereSpace: "Labels.Stage = 'Production' AND Slug LIKE 'soak-%'",
          Prerequisites: ['Released', 'Soak: 3m'],
        },
      ],
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.Stages[1].Prerequisites).toEqual(['Released', 'Soak=3m']);
    for (const p of ['Soak', 'Soak=forever', 'Soak=31d']) {
      const r = await env.api.post('/space/soak-base/change_workflow', {
        Slug: 'bad',
        Stages: [{ Name: 's', WhereSpace: "Slug = 'x'", Prerequisites: [p] }],
      });
      expect(r.status).toBe(400);
      expect(r.body.Message).toBe(
        `Stage 's' names prerequisite '${p}': Soak takes a duration, e.g. Soak=30m (at most 30d)`,
      );
    }
  });

  it('opens the next stage only after the release has stayed Healthy for the duration; a Degraded report restarts the clock', async () => {
    await env.api.post('/space/soak-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['2'],
      UnitIDs: ['app'],
    });
    expect(
      (await env.api.post('/space/soak-base/change_order', { Slug: 'scale', ChangeWorkflowID: 'soak-base/soaked' }))
        .status,
    ).toBe(201);
    expect((await env.api.post('/promote', { ChangeOrderID: 'soak-base/scale' })).status).toBe(200);
    expect((await env.api.post('/space/soak-stg/release', { Revision: 'ChangeOrder:soak-base/scale' })).status).toBe(
      201,
    );

    const healthySince = ago(10);
    await report('Healthy', healthySince);
    const soaked = await env.api.post('/promote', { ChangeOrderID: 'soak-base/scale', DryRun: true });
    expect(soaked.body.Gates.find((g: { Prerequisite: string }) => g.Prerequisite === 'Soak=3m')).toMatchObject({
      Satisfied: true,
      Message: expect.stringContaining(`(since ${healthySince}), at least 3m`),
    });

    await report('Degraded', ago(2));
    const back = ago(1);
    await report('Healthy', back);
    const refused = await env.api.post('/promote', { ChangeOrderID: 'soak-base/scale' });
    expect(refused.status).toBe(409);
    expect(refused.body.Message).toMatch(
      new RegExp(
        `unable to promote to stage 'prod', Variant 'stg' release 1 has been Synced and Healthy for \\d+s \\(since ${back.replace(/[.]/g, '\\.')}\\); Soak needs 3m: it opens at ${new Date(Date.parse(back) + 180_000).toISOString().replace(/[.]/g, '\\.')} if it stays Healthy`,
      ),
    );
    // The release keeps each transition with its ObservedAt; cub release get shows them.
    const rel = (await env.api.get('/space/soak-stg/release/1')).body;
    expect(rel.LiveStatusHistory.map((h: { Health: string; ObservedAt: string }) => [h.Health, h.ObservedAt])).toEqual([
      ['Healthy', healthySince],
      ['Degraded', expect.any(String)],
      ['Healthy', back],
    ]);
    const shown = await cubOk(cubAt(env.url, env.api.token!))(['release', 'get', '--space', 'soak-stg', '1']);
    expect(shown).toContain('LiveStatusHistory:');
    expect(shown).toContain(`ObservedAt: ${back}`);
  });

  it('takes the flag form on the command line', async () => {
    const ok = cubOk(cubAt(env.url, env.api.token!));
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'soak-base',
      'flags',
      '--stage',
      'Staging',
      '--stage',
      'Production',
      '--prerequisites',
      'Released,Healthy,Soak=30m',
    ]);
    const wf = JSON.parse(await ok(['changeworkflow', 'get', '--space', 'soak-base', 'flags', '-o', 'json']));
    expect(wf.Stages[1].Prerequisites).toEqual(['Released', 'Healthy', 'Soak=30m']);
  });
});

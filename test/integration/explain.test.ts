import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { cubAt, type CubResult } from '../support/cli.ts';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const observed = new Date(Date.now() - 3600_000).toISOString();

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  await env.api.post('/space', { Slug: 'ex-infra' });
  await env.api.post('/space/ex-infra/target', { Slug: 'stg' });
  expect(
    (
      await env.api.post('/variant/upload', {
        Component: 'ex',
        Variant: 'base',
        Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
      })
    ).status,
  ).toBe(201);
  await env.api.post('/variant', {
    Name: 'stg',
    UpstreamSpaceID: 'ex-base',
    Stage: 'Staging',
    Namespace: 'stg',
    ReleaseTargetID: 'ex-infra/stg',
    SpaceLabels: { tier: 'api' },
  });
  await env.api.post('/variant', { Name: 'prd', UpstreamSpaceID: 'ex-base', Stage: 'Production', Namespace: 'prd' });
  const wf = await env.api.post('/space/ex-base/change_workflow', {
    Slug: 'w',
    Stages: [
      { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging' AND Slug LIKE 'ex-%'" },
      {
        Name: 'prod',
        WhereSpace: "Labels.Stage = 'Production' AND Slug LIKE 'ex-%'",
        Prerequisites: ['Released', 'Healthy', 'web-tier', 'reviewed'],
      },
    ],
    CustomPrerequisites: [
      {
        Name: 'web-tier',
        Expression: "cel:Space.Labels.Stage == 'Staging' && Release != null && Release.ReleaseNum > 1",
        Description: 'a second release',
      },
    ],
    AttestationPrerequisites: [{ Name: 'reviewed', Count: 1 }],
  });
  expect(wf.status, wf.text).toBe(201);
  await env.api.post('/space/ex-base/function/invoke', {
    FunctionName: 'set-replicas',
    Arguments: ['2'],
    UnitIDs: ['app'],
  });
  expect(
    (await env.api.post('/space/ex-base/change_order', { Slug: 'scale', ChangeWorkflowID: 'ex-base/w' })).status,
  ).toBe(201);
  expect((await env.api.post('/promote', { ChangeOrderID: 'ex-base/scale' })).status).toBe(200);
  expect((await env.api.post('/space/ex-stg/release', { Revision: 'ChangeOrder:ex-base/scale' })).status).toBe(201);
  const rel = (await env.api.get('/space/ex-stg/release/1')).body;
  expect(
    (
      await env.api.patch('/space/ex-stg/release/1', {
        Version: rel.Version,
        LiveStatus: { Sync: 'Synced', Health: 'Degraded', ObservedAt: observed, Reporter: 'argocd' },
      })
    ).status,
  ).toBe(200);
  // The author approves: it does not count.
  expect((await env.api.post('/attest', { ChangeOrderID: 'ex-base/scale', Stage: 'staging' })).status).toBe(201);
  await env.api.post('/hold', { Slug: 'quiet', Space: 'ex-prd', Reason: 'quiet period' });
});
afterAll(async () => env.close());

describe('explain', () => {
  it('gives every gate over the Stage before with what it read and what would open it, and writes nothing', async () => {
    const before = (await env.api.get('/space/ex-base/change_order/scale')).body;
    // Who wrote the change is read from the change's revisions alone, not from each Unit's history; what a
    // Release of it bundles (hash, validation errors) in one batch per Space, without the data.
    const whole = vi.spyOn(env.deps.store, 'listRevisions');
    const ranges = vi.spyOn(env.deps.store, 'revisionsBetween');
    const one = vi.spyOn(env.deps.store, 'getRevision');
    const batch = vi.spyOn(env.deps.store, 'revisionsAt');
    const r = await env.api.get('/space/ex-base/change_order/scale/explain');
    expect(r.status, r.text).toBe(200);
    const app = (await env.api.get('/space/ex-stg/unit/app')).body;
    expect(whole).not.toHaveBeenCalled();
    expect(ranges.mock.calls).toContainEqual([app.UnitID, app.HeadRevisionNum - 1, app.HeadRevisionNum]);
    expect(one).not.toHaveBeenCalled();
    expect(batch.mock.calls).toContainEqual([[{ UnitID: app.UnitID, RevisionNum: app.HeadRevisionNum }]]);
    for (const s of [whole, ranges, one, batch]) s.mockRestore();
    expect(r.body).toMatchObject({
      Slug: 'scale',
      Stage: 'prod',
      Open: false,
      Targets: [{ SpaceSlug: 'ex-prd' }],
      Over: [{ SpaceSlug: 'ex-stg' }],
    });
    const gate = (p: string) => r.body.Gates.find((g: { Prerequisite: string }) => g.Prerequisite === p);
    expect(gate('Taken')).toMatchObject({ Satisfied: true, SpaceSlug: 'ex-stg', Evidence: { Taken: true } });
    expect(gate('Released')).toMatchObject({
      Satisfied: true,
      Evidence: {
        ReleaseTarget: expect.any(String),
        Releases: [{ ReleaseNum: 1, Digest: expect.stringMatching(/^[0-9a-f]{64}$/), CarriesChange: true }],
      },
    });
    expect(gate('Healthy')).toMatchObject({
      Satisfied: false,
      Evidence: {
        Latest: {
          ReleaseNum: 1,
          CarriesChange: true,
          LiveStatus: { Sync: 'Synced', Health: 'Degraded', ObservedAt: observed, Reporter: 'argocd' },
        },
      },
      Opens:
        'a report of release 1 as Synced and Healthy (by Argo CD or Flux, or by hand): cub release report --space ex-stg --release 1 --sync Synced --health Healthy',
    });
    expect(gate('web-tier')).toMatchObject({
      Satisfied: false,
      Evidence: {
        Expression: "cel:Space.Labels.Stage == 'Staging' && Release != null && Release.ReleaseNum > 1",
        Values: {
          'Space.Labels.Stage': 'Staging',
          Release: { Slug: 'release-1', ReleaseNum: 1, Digest: expect.any(String) },
          'Release.ReleaseNum': 1,
        },
      },
    });
    expect(gate('reviewed')).toMatchObject({
      Satisfied: false,
      Evidence: {
        Type: 'Approval',
        Count: 1,
        Units: [{ Unit: 'app', Counted: [], Excluded: [{ User: 'admin', Why: 'wrote the change' }] }],
      },
      Opens: expect.stringContaining('cub variant approve'),
    });
    expect(gate('Hold')).toMatchObject({
      Satisfied: false,
      Evidence: { Hold: 'quiet', Owner: 'admin', Reason: 'quiet period' },
      Opens:
        'its owner (admin) or an Admin lifting it (or a promotion with --force --force-reason): cub hold lift quiet --note "lifted to promote"',
    });
    expect(r.body.Message).toContain("unable to promote to stage 'prod', Variant 'stg'");
    const after = (await env.api.get('/space/ex-base/change_order/scale')).body;
    expect(after.Version).toBe(before.Version);
    expect(after.PromotionLease).toBeUndefined();
    // The same through cub, as text and as data.
    const text = await cub(['changeorder', 'explain', '--space', 'ex-base', 'scale']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^Stage 'prod' \(ex-prd\): blocked, 4 of 6 gate\(s\) fail; gates over ex-stg\n/);
    expect(text.stdout).toContain(
      '  FAILS  ex-stg  Healthy: release 1 is Synced, Degraded\n         read: release 1 (',
    );
    expect(text.stdout).toContain(`Synced/Degraded observed ${observed} by argocd`);
    expect(text.stdout).toContain('read: app r3: 0/1 Approval; not counted: admin (wrote the change)');
    expect(text.stdout).toContain('opens: its owner (admin) or an Admin lifting it');
    const json = await cub([
      'variant',
      'promote',
      '--change-order',
      'ex-base/scale',
      '--dry-run',
      '--explain',
      '-o',
      'json',
    ]);
    expect(JSON.parse(json.stdout)).toEqual(r.body);
    const refused = await cub(['variant', 'promote', '--change-order', 'ex-base/scale', '--explain']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--explain goes with --dry-run');
    expect((await env.api.get('/space/ex-base/change_order/scale/explain?target_stage=nope')).body.Message).toBe(
      "the workflow of change order 'scale' has no stage 'nope'; stages: staging, prod",
    );
  });
});

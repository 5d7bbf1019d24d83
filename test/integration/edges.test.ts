// The edges a user hits in the first day (issue 38): each replayed through the API and cub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
let ok: (args: string[], input?: string) => Promise<string>;

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  ok = cubOk(cub);
  await env.api.post('/space', { Slug: 'ed-infra' });
  await env.api.post('/space/ed-infra/target', { Slug: 'stg' });
  expect((await env.api.post('/variant/upload', { Component: 'ed', Variant: 'base', Units: [{ Slug: 'app', Data: deploymentYaml('app') }] })).status).toBe(201);
  await env.api.post('/variant', { Name: 'stg', UpstreamSpaceID: 'ed-base', Stage: 'Staging', Namespace: 'stg', ReleaseTargetID: 'ed-infra/stg' });
  await env.api.post('/variant', { Name: 'prd', UpstreamSpaceID: 'ed-base', Stage: 'Production', Namespace: 'prd' });
  const wf = await env.api.post('/space/ed-base/change_workflow', {
    Slug: 'w',
    Stages: [
      { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging'" },
      { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'", Prerequisites: ['Released'] },
    ],
  });
  expect(wf.status, wf.text).toBe(201);
});
afterAll(async () => env.close());

/** A change in the base and a ChangeOrder carrying it, on workflow w. */
async function changeOrder(slug: string, replicas: number): Promise<void> {
  expect((await env.api.post('/space/ed-base/function/invoke', { FunctionName: 'set-replicas', Arguments: [String(replicas)], UnitIDs: ['app'] })).status).toBeLessThan(300);
  const r = await env.api.post('/space/ed-base/change_order', { Slug: slug, ChangeWorkflowID: 'ed-base/w' });
  expect(r.status, r.text).toBe(201);
}

describe('an abort', () => {
  it('is undone by clearing its reason while nothing has been restored, and not after', async () => {
    await changeOrder('undo', 3);
    await ok(['changeorder', 'update', '--space', 'ed-base', 'undo', '--aborted-reason', 'wrong replicas']);
    expect((await env.api.get('/space/ed-base/change_order/undo')).body).toMatchObject({ State: 'Aborted', AbortedReason: 'wrong replicas' });
    const cleared = await ok(['changeorder', 'update', '--space', 'ed-base', 'undo', '--aborted-reason', '']);
    expect(cleared).not.toMatch(/Aborted Reason/);
    const co = (await env.api.get('/space/ed-base/change_order/undo')).body;
    expect(co.State).not.toBe('Aborted');
    expect(co).not.toHaveProperty('AbortedReason');
    expect(co).not.toHaveProperty('AbortedBy');
    // Promotable again.
    expect(await ok(['variant', 'promote', '--change-order', 'ed-base/undo', '--target-stage', 'staging'])).toMatch(/Promoted change order into stage 'staging': 1 of 1/);
    // Aborted again and taken back out of staging: the abort stands for good.
    await ok(['changeorder', 'update', '--space', 'ed-base', 'undo', '--aborted-reason', 'wrong replicas']);
    await ok(['variant', 'demote', 'ed-stg', '--change-order', 'ed-base/undo']);
    const late = await cub(['changeorder', 'update', '--space', 'ed-base', 'undo', '--aborted-reason', '']);
    expect([late.code, late.stderr]).toEqual([1, expect.stringContaining("has been restored in some spaces, so its abort reason ('wrong replicas') can no longer be cleared")]);
    expect((await env.api.get('/space/ed-base/change_order/undo')).body.AbortedReason).toBe('wrong replicas');
  });
});

describe('an Invoke or Link-type ChangeOrder', () => {
  it('refuses a workflow whose first Stage has prerequisites, at create and at a workflow change, naming the Stage', async () => {
    await ok(['invocation', 'create', '--space', 'ed-base', 'scale', 'Kubernetes/YAML', '--', 'set-replicas', '4']);
    await ok(['changeworkflow', 'create', '--space', 'ed-base', 'gated', '--stage', 'Staging', '--stage', 'Production']);
    await ok(['changeworkflow', 'update', '--space', 'ed-base', 'gated', '--stage-prerequisites', 'Staging=Validated']);
    const refused = await cub(['changeorder', 'create', '--space', 'ed-base', 'inv', '--update-type', 'Invoke', '--invocation', 'ed-base/scale', '--change-workflow', 'ed-base/gated', '--component', 'ed']);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining("an Invoke change order cannot follow workflow 'gated': its first Stage 'Staging' has prerequisites (Validated), evaluated over the base")]);
    expect((await env.api.get('/space/ed-base/change_order/inv')).status).toBe(404);
    // Without them it is taken; then the workflow may not gain them while the order follows it.
    await ok(['changeworkflow', 'update', '--space', 'ed-base', 'gated', '--stage-prerequisites', 'Staging=']);
    expect((await env.api.get('/space/ed-base/change_workflow/gated')).body.Stages[0].Prerequisites ?? []).toEqual([]);
    await ok(['changeorder', 'create', '--space', 'ed-base', 'inv', '--update-type', 'Invoke', '--invocation', 'ed-base/scale', '--change-workflow', 'ed-base/gated', '--component', 'ed']);
    const change = await cub(['changeworkflow', 'update', '--space', 'ed-base', 'gated', '--stage-prerequisites', 'Staging=Validated']);
    expect([change.code, change.stderr]).toEqual([1, expect.stringContaining("change order 'inv' follows this workflow: an Invoke change order cannot follow workflow 'gated'")]);
    // A later Stage's prerequisites are fine.
    await ok(['changeworkflow', 'update', '--space', 'ed-base', 'gated', '--stage-prerequisites', 'Production=Validated']);
  });
});

describe('a blocked promotion', () => {
  it('exits 1 with --dry-run, with --dry-run --explain and for real, and 0 once open', async () => {
    await changeOrder('blocked', 5);
    await ok(['variant', 'promote', '--change-order', 'ed-base/blocked', '--target-stage', 'staging']);
    const words = ['variant', 'promote', '--change-order', 'ed-base/blocked', '--target-stage', 'prod'];
    const dry = await cub([...words, '--dry-run']);
    const explained = await cub([...words, '--dry-run', '--explain']);
    expect([dry.code, explained.code]).toEqual([1, 1]);
    expect(explained.stdout).toMatch(/^Stage 'prod' \(ed-prd\): blocked, 1 of 2 gate\(s\) fail/);
    expect((await cub([...words, '--dry-run', '--explain', '-o', 'json'])).code).toBe(1);
    // Released in staging: open, and both say so with 0.
    expect((await env.api.post('/space/ed-stg/release', { Revision: 'ChangeOrder:ed-base/blocked' })).status).toBe(201);
    expect((await cub([...words, '--dry-run'])).code).toBe(0);
    const open = await cub([...words, '--dry-run', '--explain']);
    expect([open.code, open.stdout]).toEqual([0, expect.stringMatching(/^Stage 'prod' \(ed-prd\): open/)]);
  });
});

describe("a CEL gate's evidence", () => {
  it('shows the values CEL read: a map read whole as it is, beside the entry read from it', async () => {
    const wf = await env.api.post('/space/ed-base/change_workflow', {
      Slug: 'freeze',
      Stages: [
        { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging'" },
        { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'", Prerequisites: ['not-frozen'] },
      ],
      CustomPrerequisites: [{ Name: 'not-frozen', Expression: "cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true'", Description: 'the space is not under a code freeze' }],
    });
    expect(wf.status, wf.text).toBe(201);
    await ok(['space', 'update', 'ed-stg', '--annotation', 'code-freeze=true']);
    expect((await env.api.post('/space/ed-base/function/invoke', { FunctionName: 'set-replicas', Arguments: ['6'], UnitIDs: ['app'] })).status).toBeLessThan(300);
    await ok(['changeorder', 'create', '--space', 'ed-base', 'frz', '--change-workflow', 'ed-base/freeze']);
    await ok(['variant', 'promote', '--change-order', 'ed-base/frz', '--target-stage', 'staging']);
    const text = (await cub(['changeorder', 'explain', '--space', 'ed-base', 'frz', '--target-stage', 'prod'])).stdout;
    expect(text).toContain(`FAILS  ed-stg  not-frozen`);
    expect(text).toContain(`read: cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true' with Space.Annotations = {"code-freeze":"true"}, Space.Annotations['code-freeze'] = "true"`);
    const json = JSON.parse((await ok(['changeorder', 'explain', '--space', 'ed-base', 'frz', '--target-stage', 'prod', '-o', 'json'])));
    expect(json.Gates.find((g: { Prerequisite: string }) => g.Prerequisite === 'not-frozen').Evidence.Values).toEqual({ 'Space.Annotations': { 'code-freeze': 'true' }, "Space.Annotations['code-freeze']": 'true' });
    await ok(['space', 'update', 'ed-stg', '--annotation', 'code-freeze=false']);
    expect((await ok(['changeorder', 'explain', '--space', 'ed-base', 'frz', '--target-stage', 'prod']))).toMatch(/: open/);
  });
});

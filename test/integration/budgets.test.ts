import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';
import { Api, deploymentYaml } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

/** A server that promotes one Space at a time, so a wave's order (slug order) is the order Spaces start in. */
let server: LocalServer;
let api: Api;

beforeAll(async () => {
  const client = dynamoClient(inject('dynamoEndpoint'));
  const table = `budget-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps } = localDeps(dynamoStore(client, table), { promoteConcurrency: 1 });
  server = await startServer(deps, { checkAnswers: true });
  api = new Api(server.url, (await createOrganization(deps, `budget-${table}`)).token);
});
afterAll(async () => server.close());

/** A base, `n` Production variants and a Staging one, a workflow (Production budgeted as given) and a change order. */
async function fleet(
  name: string,
  n: number,
  production: Record<string, unknown>,
  next: Record<string, unknown> = {},
): Promise<void> {
  expect(
    (
      await api.post('/variant/upload', {
        Component: name,
        Variant: 'base',
        Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
      })
    ).status,
  ).toBe(201);
  for (let i = 0; i < n; i++)
    expect(
      (await api.post('/variant', { Name: `p${i}`, UpstreamSpaceID: `${name}-base`, Stage: 'Production' })).status,
    ).toBe(201);
  expect((await api.post('/variant', { Name: 'after', UpstreamSpaceID: `${name}-base`, Stage: 'After' })).status).toBe(
    201,
  );
  const wf = await api.post(`/space/${name}-base/change_workflow`, {
    Slug: 'w',
    Stages: [
      { Name: 'Production', WhereSpace: `Labels.Stage = 'Production' AND Slug LIKE '${name}-%'`, ...production },
      { Name: 'After', WhereSpace: `Labels.Stage = 'After' AND Slug LIKE '${name}-%'`, ...next },
    ],
  });
  expect(wf.status, wf.text).toBe(201);
  await api.post(`/space/${name}-base/function/invoke`, {
    FunctionName: 'set-replicas',
    Arguments: ['3'],
    UnitIDs: ['app'],
  });
  expect(
    (await api.post(`/space/${name}-base/change_order`, { Slug: 'scale', ChangeWorkflowID: `${name}-base/w` })).status,
  ).toBe(201);
}

/** Locks a Space's Unit under an open ChangeSet: a promotion's merge into it fails. */
async function breakSpace(space: string): Promise<void> {
  expect((await api.post(`/space/${space}/change_set`, { Slug: 'held' })).status).toBe(201);
  expect(
    (
      await api.post(`/space/${space}/function/invoke`, {
        FunctionName: 'set-replicas',
        Arguments: ['9'],
        UnitIDs: ['app'],
        ChangeSetID: 'held',
      })
    ).status,
  ).toBe(200);
}

describe('failure budgets', () => {
  it('halt a wave part-way once more Spaces failed than the budget allows; the rest are NotStarted and the ChangeOrder records the halt', async () => {
    await fleet('halt', 6, { FailureBudget: { MaxFailedSpaces: 1 } });
    await breakSpace('halt-p1');
    await breakSpace('halt-p2');
    const r = await api.post('/promote', { ChangeOrderID: 'halt-base/scale' });
    expect(r.status).toBe(207);
    expect(r.body.Spaces.map((s: { SpaceSlug: string; Action: string }) => `${s.SpaceSlug}:${s.Action}`)).toEqual([
      'halt-p0:Promote',
      'halt-p1:Failed',
      'halt-p2:Failed',
      'halt-p3:NotStarted',
      'halt-p4:NotStarted',
      'halt-p5:NotStarted',
    ]);
    expect(r.body.Spaces[3].Error).toBe(
      "not started: more than 1 space(s) of stage 'Production' failed, its failure budget; promote again once they are fixed",
    );
    const co = (await api.get('/space/halt-base/change_order/scale')).body;
    expect(co.PromotionHalts).toEqual([
      expect.objectContaining({
        Stage: 'Production',
        Allowance: 1,
        FailedSpaceIDs: [r.body.Spaces[1].SpaceID, r.body.Spaces[2].SpaceID],
        NotStartedSpaceIDs: r.body.Spaces.slice(3).map((s: { SpaceID: string }) => s.SpaceID),
      }),
    ]);
    // Within the budget a wave runs to its end.
    await fleet('within', 4, { FailureBudget: { MaxFailedPercent: 25 } });
    await breakSpace('within-p0');
    const ok = await api.post('/promote', { ChangeOrderID: 'within-base/scale' });
    expect(ok.body.Spaces.map((s: { Action: string }) => s.Action)).toEqual([
      'Failed',
      'Promote',
      'Promote',
      'Promote',
    ]);
    expect((await api.get('/space/within-base/change_order/scale')).body.PromotionHalts ?? []).toEqual([]);
  });

  it('let the next Stage through when the failures are within the budget and enough Spaces took it, and hold it when they are not', async () => {
    await fleet('tol', 4, { FailureBudget: { MaxFailedSpaces: 1 }, MinHealthyPercent: 75 });
    await breakSpace('tol-p2');
    expect((await api.post('/promote', { ChangeOrderID: 'tol-base/scale' })).status).toBe(207);
    const next = await api.post('/promote', { ChangeOrderID: 'tol-base/scale', TargetStage: 'After' });
    expect(next.status, next.text).toBe(200);
    const forgiven = next.body.Gates.find((g: { SpaceSlug: string }) => g.SpaceSlug === 'tol-p2');
    expect(forgiven).toMatchObject({
      Prerequisite: 'Taken',
      Satisfied: true,
      Message:
        "has not taken change order 'scale' (tolerated: 3 of 4 space(s) pass (at least 75% needed), 1 within the failure budget of 1)",
    });
    // The rollout is done: a Stage within its budget counts as reached.
    expect((await api.get('/space/tol-base/change_order/scale')).body.Stage).toBe('Completed');

    await fleet('strict', 4, { FailureBudget: { MaxFailedSpaces: 1 }, MinHealthyPercent: 100 });
    await breakSpace('strict-p2');
    await api.post('/promote', { ChangeOrderID: 'strict-base/scale' });
    const held = await api.post('/promote', { ChangeOrderID: 'strict-base/scale', TargetStage: 'After' });
    expect(held.status).toBe(409);
    expect(held.body.Message).toContain("has not taken change order 'scale'");
    expect((await api.get('/space/strict-base/change_order/scale')).body.Stage).toBeUndefined();
  });

  it('show through cub: the halted Spaces in the table, the promotion failed', async () => {
    await fleet('cli', 3, { FailureBudget: { MaxFailedSpaces: 0 } });
    await breakSpace('cli-p0');
    const r = await cubAt(server.url, api.token!)(['variant', 'promote', '--change-order', 'cli-base/scale']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/cli-p0\s+Failed\s+app\s+Failed/);
    expect(r.stdout).toMatch(/cli-p1\s+NotStarted\s+not started: more than 0 space\(s\) of stage 'Production' failed/);
    expect(r.stderr).toContain("0 of 3 space(s) took change order 'scale'");
  });

  it('are checked when the workflow is written', async () => {
    await api.post('/space', { Slug: 'wf' });
    const both = await api.post('/space/wf/change_workflow', {
      Slug: 'b',
      Stages: [{ Name: 's', WhereSpace: "Slug = 'x'", FailureBudget: { MaxFailedSpaces: 1, MaxFailedPercent: 5 } }],
    });
    expect(both.status).toBe(400);
    expect(both.body.Message).toBe("Stage 's' FailureBudget takes one of MaxFailedSpaces or MaxFailedPercent");
    expect(
      (
        await api.post('/space/wf/change_workflow', {
          Slug: 'c',
          Stages: [{ Name: 's', WhereSpace: "Slug = 'x'", MinHealthyPercent: 120 }],
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await api.post('/space/wf/change_workflow', {
          Slug: 'd',
          Stages: [{ Name: 's', WhereSpace: "Slug = 'x'", FailureBudget: { MaxFailedSpaces: -1 } }],
        })
      ).status,
    ).toBe(400);
  });
});

import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEnv, type Env } from '../support/harness.ts';

// The change-order core's answers through the HTTP API (the same reproductions run through cub in test/scenarios/change-truths.test.ts).
let env: Env;
const deployment = readFileSync(new URL('../fixtures/acme/deployment.yaml', import.meta.url), 'utf8').replace(
  'confighubplaceholder',
  'acme',
);
const service =
  'apiVersion: v1\nkind: Service\nmetadata:\n  name: acme\n  namespace: acme\nspec:\n  ports:\n    - port: 80\n';

beforeEach(async () => {
  env = await startEnv();
  await env.api.post('/space', { Slug: 'infra' });
  await env.api.post('/space', { Slug: 'wf' });
  expect(
    (
      await env.api.post('/variant/upload', {
        Component: 'acme',
        Variant: 'base',
        Units: [
          { Slug: 'deployment', Data: deployment },
          { Slug: 'service', Data: service },
        ],
      })
    ).status,
  ).toBe(201);
});
afterEach(async () => env.close());

const post = async (path: string, body: unknown, status = 200) => {
  const r = await env.api.post(path, body);
  expect(r.status, `${path}: ${r.text}`).toBe(status);
  return r.body;
};
const variant = async (name: string, upstream: string, stage: string, target?: string) => {
  if (target) await post('/space/infra/target', { Slug: target }, 201);
  return post(
    '/variant',
    { Name: name, UpstreamSpaceID: upstream, Stage: stage, ...(target ? { ReleaseTargetID: `infra/${target}` } : {}) },
    201,
  );
};
const workflow = (slug: string, stages: string[], prerequisites: string[] = []) =>
  post(
    '/space/wf/change_workflow',
    {
      Slug: slug,
      Stages: stages.map((s, i) => ({
        Name: s,
        WhereSpace: `Labels.Stage = '${s}'`,
        ...(i > 0 && prerequisites.length ? { Prerequisites: prerequisites } : {}),
      })),
      ...(prerequisites.length ? { Final: { Prerequisites: prerequisites } } : {}),
    },
    201,
  );
const bump = (space: string, tag: string) =>
  post(`/space/${space}/function/invoke`, {
    FunctionName: 'set-image-reference-by-uri',
    Arguments: ['ghcr.io/acme/acme', tag],
    UnitIDs: ['deployment'],
  });
const changeOrder = (slug: string, wf: string, extra: Record<string, unknown> = {}) =>
  post('/space/acme-base/change_order', { Slug: slug, ChangeWorkflowID: `wf/${wf}`, ...extra }, 201);
const promote = (co: string, body: Record<string, unknown> = {}) =>
  env.api.post('/promote', { ChangeOrderID: `acme-base/${co}`, ...body });
const co = async (slug: string) => (await env.api.get(`/space/acme-base/change_order/${slug}`)).body;
const image = async (space: string) =>
  parseAllDocuments((await env.api.get(`/space/${space}/unit/deployment/data`)).text)[0]!.toJS().spec.template.spec
    .containers[0].image;

describe('the change-order core through the API', () => {
  it('records a Space as taken only when every Unit the change covers carries it', async () => {
    await variant('p', 'acme-base', 'Production');
    await workflow('w', ['Production']);
    await bump('acme-base', ':v452');
    const c = await changeOrder('l-1', 'w');
    // Past the change's end, not at it (a Unit at exactly its end already has it).
    await bump('acme-base', ':v453');
    await post('/space/acme-p/unit/deployment/upgrade', {});
    const failed = await promote('l-1');
    expect(failed.status).toBe(207);
    expect(failed.body).toMatchObject({ Landed: 0, Total: 1 });
    const space = (await env.api.get('/space/acme-p')).body;
    expect(
      ((await env.api.get('/space/acme-base/tag/l-1-co-end')).body.Marks as any[]).filter(
        (m) => m.SpaceID === space.SpaceID,
      ),
    ).toEqual([]);
    expect((await env.api.del('/space/acme-p/unit/deployment')).status).toBe(200);
    const rerun = await promote('l-1');
    expect(rerun.status).toBe(200);
    expect(rerun.body.Spaces[0].Units.map((u: any) => u.Action).sort()).toEqual(['Clone', 'Mark', 'Upgrade']);
    expect(await image('acme-p')).toBe('ghcr.io/acme/acme:v452');
    expect(await co('l-1')).toMatchObject({
      State: 'Resolved',
      ResolvedSpaceIDs: expect.arrayContaining([space.SpaceID]),
      ChangeOrderID: c.ChangeOrderID,
    });
  });

  it('reads Released from a Release of the change, never an older one', async () => {
    await variant('staging', 'acme-base', 'Staging', 't-staging');
    await variant('prod', 'acme-base', 'Production');
    await post('/space/acme-staging/release', {}, 201);
    await bump('acme-staging', ':v452');
    await bump('acme-base', ':v452');
    await workflow('w', ['Staging', 'Production'], ['Released']);
    await changeOrder('m-1', 'w');
    expect((await promote('m-1')).body).toMatchObject({ Stage: 'Staging', Landed: 1 });
    const held = await promote('m-1', { DryRun: true });
    expect(held.status).toBe(409);
    expect(held.body).toMatchObject({
      Code: 'GateRefused',
      Message:
        "unable to promote to stage 'Production', Variant 'staging' has taken change order 'm-1' but has not released it",
    });
  });

  it('takes the base as a first Stage, gating the next on the base having released the change', async () => {
    await post('/space/infra/target', { Slug: 't-base' }, 201);
    const base = (await env.api.get('/space/acme-base')).body;
    expect(
      (
        await env.api.patch('/space/acme-base', {
          Version: base.Version,
          Labels: { Stage: 'Base' },
          ReleaseTargetID: 'infra/t-base',
        })
      ).status,
    ).toBe(200);
    await variant('dev', 'acme-base', 'Development');
    await workflow('w', ['Base', 'Development'], ['Released']);
    await bump('acme-base', ':v452');
    await changeOrder('n-1', 'w');
    expect((await promote('n-1')).body.Message).toBe(
      "unable to promote to stage 'Development', Variant 'base' has taken change order 'n-1' but has not released it",
    );
    await post('/space/acme-base/release', { Revision: 'ChangeOrder:acme-base/n-1' }, 201);
    expect((await promote('n-1')).body).toMatchObject({ Stage: 'Development', Landed: 1 });
    expect(await co('n-1')).toMatchObject({ Stage: 'Completed', Completed: true });
  });

  it('never opens a gate over an empty Stage, and completes a change whose scope ends early', async () => {
    const dev = await variant('dev', 'acme-base', 'Development', 't-dev');
    await variant('prod', 'acme-base', 'Production');
    await workflow('w', ['Development', 'Staging', 'Production'], ['Released']);
    await bump('acme-base', ':v452');
    await changeOrder('o-1', 'w');
    await promote('o-1');
    expect((await promote('o-1')).body.Message).toBe(
      "unable to promote to stage 'Production', Variant 'dev' has taken change order 'o-1' but has not released it",
    );
    await changeOrder('o-2', 'w', { InScopeSpaceIDs: [dev.Space.SpaceID] });
    await promote('o-2');
    await post('/space/acme-dev/release', { Revision: 'ChangeOrder:acme-base/o-2' }, 201);
    expect(await co('o-2')).toMatchObject({ State: 'Released', Stage: 'Completed', Completed: true });
  });

  it('marks Units the change leaves unchanged where they rest', async () => {
    await variant('mid', 'acme-base', 'Mid');
    await variant('leaf', 'acme-mid', 'Leaf', 't-leaf');
    await post('/space/acme-leaf/release', {}, 201);
    await post('/space/acme-mid/function/invoke', {
      FunctionName: 'set-label',
      Arguments: ['tier', 'frontend'],
      UnitIDs: ['service'],
    });
    await bump('acme-base', ':v452');
    await workflow('w', ['Mid', 'Leaf']);
    await changeOrder('p-1', 'w', { PriorRevisions: 'Error' });
    await promote('p-1');
    expect((await promote('p-1')).body).toMatchObject({ Stage: 'Leaf', Landed: 1 });
    const svc = parseAllDocuments((await env.api.get('/space/acme-leaf/unit/service/data')).text)[0]!.toJS();
    expect(svc.metadata.labels).toBeUndefined();
    const r = await post('/space/acme-leaf/release', { Revision: 'ChangeOrder:acme-base/p-1', DryRun: true });
    expect(r.Units.map((u: any) => [u.Slug, u.RevisionNum])).toEqual([
      ['deployment', 2],
      ['service', 1],
    ]);
  });

  it('keeps what only the downstream added when both sides add the same map', async () => {
    await variant('dev', 'acme-base', 'Development');
    await post('/space/acme-dev/function/invoke', {
      FunctionName: 'set-label',
      Arguments: ['team', 'payments'],
      UnitIDs: ['service'],
    });
    await post('/space/acme-base/function/invoke', {
      FunctionName: 'set-label',
      Arguments: ['tier', 'frontend'],
      UnitIDs: ['service'],
    });
    await workflow('w', ['Development']);
    await changeOrder('q-1', 'w');
    const dry = await promote('q-1', { DryRun: true });
    expect(dry.body.Spaces[0].Units.find((u: any) => u.UnitSlug === 'service').Changes).toEqual([
      { Resource: 'Service/acme', Path: 'metadata.labels.tier', Op: 'Add', Value: 'frontend' },
    ]);
    await promote('q-1');
    expect(
      parseAllDocuments((await env.api.get('/space/acme-dev/unit/service/data')).text)[0]!.toJS().metadata.labels,
    ).toEqual({ team: 'payments', tier: 'frontend' });
  });

  it('copies the Links of the Space above with a promotion', async () => {
    await variant('dev', 'acme-base', 'Development');
    await post(
      '/space/acme-base/link',
      { Slug: 'deploy-needs-service', FromUnitID: 'deployment', ToUnitID: 'service', UpdateType: 'None' },
      201,
    );
    await bump('acme-base', ':v452');
    await workflow('w', ['Development']);
    await changeOrder('r-1', 'w');
    await promote('r-1');
    const units = new Map(((await env.api.get('/space/acme-dev/unit')).body as any[]).map((u) => [u.UnitID, u.Slug]));
    const links = ((await env.api.get('/space/acme-dev/link')).body as any[]).filter((l) => l.UpdateType === 'None');
    expect(links.map((l) => [l.Slug, units.get(l.FromUnitID), units.get(l.ToUnitID)])).toEqual([
      ['deploy-needs-service', 'deployment', 'service'],
    ]);
  });

  it('gives CEL the ChangeOrder as the API returns it, and refuses an undeclared name when the workflow is written', async () => {
    const typo = await env.api.post('/space/wf/change_workflow', {
      Slug: 'typo',
      Stages: [{ Name: 'a', WhereSpace: "Slug = 'x'", Prerequisites: ['f'] }],
      CustomPrerequisites: [{ Name: 'f', Expression: "cel:Spcae.Labels['x'] == 'y'" }],
    });
    expect(typo.status).toBe(400);
    expect(typo.body.Message).toBe(
      "custom prerequisite 'f': the expression does not compile: Unknown variable: Spcae (an expression may name Space, ChangeOrder, Release)",
    );
    await variant('dev', 'acme-base', 'Development');
    await variant('prod', 'acme-base', 'Production');
    await post(
      '/space/wf/change_workflow',
      {
        Slug: 'w',
        Stages: [
          { Name: 'dev', WhereSpace: "Labels.Stage = 'Development'" },
          { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'", Prerequisites: ['dev-done'] },
        ],
        CustomPrerequisites: [
          {
            Name: 'dev-done',
            Expression:
              "cel:ChangeOrder.State == 'InProgress' && ChangeOrder.Stage == 'dev' && size(ChangeOrder.ResolvedSpaceIDs) == 2",
          },
        ],
      },
      201,
    );
    await bump('acme-base', ':v452');
    await changeOrder('s-1', 'w');
    await promote('s-1');
    expect((await promote('s-1')).body).toMatchObject({ Stage: 'prod', Landed: 1 });
  });
});

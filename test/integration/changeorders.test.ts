import { parseAllDocuments } from 'yaml';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { dynamoClient } from '../../lib/store/table.ts';
import { startEnv, type Env } from '../support/harness.ts';

// Every test here sets up what it starts from (a seeded API per group, or per test where a test edits it), so their order is shuffled to keep it that way.
let env: Env;
const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: acme
  namespace: confighubplaceholder
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: acme
          image: ghcr.io/acme/acme:v451
`;
const configmap =
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: acme-config\n  namespace: confighubplaceholder\ndata:\n  LOG: info\n';
const workflow = {
  Slug: 'acme-main-line',
  Stages: [
    { Name: 'dev', WhereSpace: "Labels.Stage = 'Development'" },
    { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging'", Prerequisites: ['Validated', 'Released'] },
    { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'", Prerequisites: ['Released', 'Healthy', 'not-frozen'] },
  ],
  Final: { Prerequisites: ['Released', 'Healthy'] },
  CustomPrerequisites: [
    {
      Name: 'not-frozen',
      Expression: "cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true'",
      Description: 'the space is not under a code freeze',
    },
  ],
};
const variants: [string, string][] = [
  ['dev', 'Development'],
  ['staging-euw1', 'Staging'],
  ['staging-use1', 'Staging'],
  ['prod-euw1', 'Production'],
  ['prod-use1', 'Production'],
  ['prod-apse1', 'Production'],
];
const ids: Record<string, string> = {};
const image = async (space: string) =>
  parseAllDocuments((await env.api.get(`/space/${space}/unit/deployment/data`)).text)[0]!.toJS().spec.template.spec
    .containers[0].image;
const promote = (body: Record<string, unknown> = {}) =>
  env.api.post('/promote', { ChangeOrderID: 'acme-base/release-v452', ...body });
const co = async (slug = 'release-v452') => (await env.api.get(`/space/acme-base/change_order/${slug}`)).body;
const publishCo = (space: string, slug = 'release-v452') =>
  env.api.post(`/space/${space}/release`, { Revision: `ChangeOrder:acme-base/${slug}` });
const report = async (space: string, health: string, extra: Record<string, unknown> = {}) => {
  const rel = (await env.api.get(`/space/${space}/release`)).body[0];
  return env.api.patch(`/space/${space}/release/${rel.ReleaseNum}`, {
    LiveStatus: { Sync: 'Synced', Health: health, Operation: 'Succeeded', ...extra },
  });
};

/** The fleet every test starts from, seeded once for the file: acme-base, six variants with release Targets, the workflow, and the base's image bumped to v452. */
let fleet: Env | undefined;
async function seedFleet(): Promise<Env> {
  env = await startEnv();
  await env.api.post('/variant/upload', {
    Component: 'acme',
    Variant: 'base',
    Units: [
      { Slug: 'deployment', Data: deployment },
      { Slug: 'config', Data: configmap },
    ],
  });
  await env.api.post('/space', { Slug: 'infra' });
  for (const [name, stage] of variants) {
    await env.api.post('/space/infra/target', { Slug: `t-${name}` });
    const r = await env.api.post('/variant', {
      Name: name,
      UpstreamSpaceID: 'acme-base',
      Stage: stage,
      Namespace: 'acme',
      ReleaseTargetID: `infra/t-${name}`,
    });
    expect(r.status).toBe(201);
    ids[name] = r.body.Space.SpaceID;
  }
  await env.api.post('/space', { Slug: 'acme-workflows' });
  expect((await env.api.post('/space/acme-workflows/change_workflow', workflow)).status).toBe(201);
  await env.api.post('/space/acme-base/function/invoke', {
    FunctionName: 'set-image-reference-by-uri',
    Arguments: ['ghcr.io/acme/acme', ':v452'],
    UnitIDs: ['deployment'],
    ChangeDescription: 'Release v452: bump the image tag',
  });
  return env;
}

/** A fresh API over its own table holding the fleet (a copy of the one seeded once). */
async function seeded(): Promise<Env> {
  fleet ??= await seedFleet();
  env = await startEnv({ copyOf: fleet });
  return env;
}
afterAll(async () => fleet?.close());

/** Each group of tests runs on a seeded API of its own, so no group depends on what another left behind. */
function onSeededApi(): void {
  beforeAll(seeded);
  afterAll(async () => env.close());
}

const PRODS = ['prod-euw1', 'prod-use1', 'prod-apse1'];
/** The rollout of release-v452, step by step: a test brings a fresh fleet to the step it starts from. */
const STEPS = {
  created: async () =>
    expect(
      (
        await env.api.post('/space/acme-base/change_order', {
          Slug: 'release-v452',
          Description: 'Release v452: bump the image tag',
          ChangeWorkflowID: 'acme-workflows/acme-main-line',
        })
      ).status,
    ).toBe(201),
  dev: async () => expect((await promote()).status).toBe(200),
  staging: async () => {
    expect((await publishCo('acme-dev')).status).toBe(201);
    expect((await promote({ TargetStage: 'staging' })).status).toBe(200);
  },
  prodReady: async () => {
    for (const v of ['staging-euw1', 'staging-use1']) {
      expect((await publishCo(`acme-${v}`)).status).toBe(201);
      expect((await report(`acme-${v}`, 'Healthy')).status).toBe(200);
    }
  },
  prod: async () => expect((await promote()).status).toBe(200),
  completed: async () => {
    for (const v of PRODS) {
      expect((await publishCo(`acme-${v}`)).status).toBe(201);
      expect((await report(`acme-${v}`, 'Healthy')).status).toBe(200);
    }
  },
};
/** The fleet at each step, reached once for the file from the step before it: a test starts from a copy. */
const reached = new Map<string, Env>();
afterAll(async () => Promise.all([...reached.values()].map((e) => e.close())));
/** Replaces the test's fresh fleet with a copy of the fleet at `step` (the rollout's steps before it taken). */
async function reach(step: keyof typeof STEPS): Promise<void> {
  const names = Object.keys(STEPS) as (keyof typeof STEPS)[];
  let at = reached.get(step);
  if (!at) {
    const before = names.slice(0, names.indexOf(step)).findLast((n) => reached.has(n));
    const own = env;
    env = await startEnv({ copyOf: before ? reached.get(before)! : fleet! });
    for (const name of names.slice(before ? names.indexOf(before) + 1 : 0, names.indexOf(step) + 1))
      await STEPS[name]();
    reached.set(step, (at = env));
    env = own;
  }
  await env.close();
  env = await startEnv({ copyOf: at });
}
/** release-v453 (three replicas in the base) created and promoted into dev. */
async function v453AtDev(): Promise<void> {
  await env.api.post('/space/acme-base/function/invoke', {
    FunctionName: 'set-replicas',
    Arguments: ['3'],
    UnitIDs: ['deployment'],
  });
  expect(
    (
      await env.api.post('/space/acme-base/change_order', {
        Slug: 'release-v453',
        ChangeWorkflowID: 'acme-workflows/acme-main-line',
      })
    ).status,
  ).toBe(201);
  expect((await env.api.post('/promote', { ChangeOrderID: 'acme-base/release-v453' })).status).toBe(200);
}

describe.shuffle('change workflows', () => {
  onSeededApi();
  it('refuses a workflow that would not work, when it is written', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [
        {
          Slug: 'w1',
          Stages: [
            { Name: 'a', WhereSpace: "Labels.Stage = 'A'" },
            { Name: 'a', WhereSpace: "Labels.Stage = 'B'" },
          ],
        },
        /Stage 'a' is named twice/,
      ],
      [
        { Slug: 'w2', Stages: [{ Name: 'a', WhereSpace: "Labels.Stage = 'A'", Prerequisites: ['Approved'] }] },
        /names prerequisite 'Approved', which is neither built in/,
      ],
      [
        { Slug: 'w3', Stages: [{ Name: 'a', WhereSpace: 'Stage = 1' }] },
        /Stage 'a' WhereSpace: where: unknown attribute 'Stage' for Space/,
      ],
      [
        {
          Slug: 'w4',
          Stages: [{ Name: 'a', WhereSpace: "Slug = 'x'", Prerequisites: ['broken'] }],
          CustomPrerequisites: [{ Name: 'broken', Expression: 'cel:Space.Labels[' }],
        },
        /custom prerequisite 'broken': the expression does not compile/,
      ],
      [
        { Slug: 'w5', Stages: [{ Name: 'a', WhereSpace: "Slug = 'x'", ReleasePrerequisites: ['Healthy'] }] },
        /ReleasePrerequisites may name only attestation prerequisites, not 'Healthy'/,
      ],
    ];
    for (const [body, msg] of bad) {
      const r = await env.api.post('/space/acme-workflows/change_workflow', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.Message).toMatch(msg);
    }
    expect((await env.api.get('/space/acme-workflows/change_workflow')).body.map((w: any) => w.Slug)).toEqual([
      'acme-main-line',
    ]);
  });

  it('is cloned into another space, and edited in place with a Version', async () => {
    await env.api.post('/space', { Slug: 'team-b' });
    const c = await env.api.post('/space/team-b/change_workflow/clone', { Source: 'acme-workflows/acme-main-line' });
    expect(c.status).toBe(201);
    expect(c.body.Stages.map((s: any) => s.Name)).toEqual(['dev', 'staging', 'prod']);
    const u = await env.api.patch('/space/team-b/change_workflow/acme-main-line', {
      Version: c.body.Version,
      Stages: [c.body.Stages[0]],
    });
    expect(u.body.Stages).toHaveLength(1);
  });
});

describe.shuffle('a change order through dev, staging and prod', () => {
  beforeEach(seeded);
  afterEach(async () => env.close());

  it('is created with its scope, intervals, tags and skipped units', async () => {
    const r = await env.api.post('/space/acme-base/change_order', {
      Slug: 'release-v452',
      Description: 'Release v452: bump the image tag',
      ChangeWorkflowID: 'acme-workflows/acme-main-line',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ State: 'New', UpdateType: 'UpgradeUnit', PriorRevisions: 'Include' });
    expect([...r.body.InScopeSpaceIDs].sort()).toEqual(Object.values(ids).sort());
    const config = (await env.api.get('/space/acme-base/unit/config')).body;
    expect(r.body.SkippedUnits).toEqual({ [config.UnitID]: 'no change: the spaces that follow it have revision 1' });
    const start = (await env.api.get('/space/acme-base/tag/release-v452-co-start')).body;
    const end = (await env.api.get('/space/acme-base/tag/release-v452-co-end')).body;
    expect(start.Marks.map((m: any) => m.RevisionNum).sort()).toEqual([1, 1]);
    expect(end.Marks.map((m: any) => m.RevisionNum).sort()).toEqual([1, 2]);
    expect((await env.api.get('/space/acme-base/tag/release-v452-co-publish')).status).toBe(200);
    const dup = await env.api.post('/space/acme-base/change_order', { Slug: 'release-v452' });
    expect(dup.status).toBe(409);
    const again = await env.api.post('/space/acme-base/change_order', { Slug: 'release-v452', AllowExists: true });
    expect(again.status).toBe(200);
    expect(again.body.ChangeOrderID).toBe(r.body.ChangeOrderID);
  });

  it('promotes into the first stage, dev, which has no gates', async () => {
    await reach('created');
    const r = await promote();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ Stage: 'dev', Landed: 1, Total: 1 });
    expect(r.body.Spaces[0].Units.find((u: any) => u.UnitSlug === 'deployment')).toMatchObject({
      Action: 'Upgrade',
      RevisionNums: [3],
    });
    expect(await image('acme-dev')).toBe('ghcr.io/acme/acme:v452');
    expect(await image('acme-staging-euw1')).toBe('ghcr.io/acme/acme:v451');
    const c = await co();
    expect(c).toMatchObject({ State: 'InProgress', Stage: 'dev' });
    expect(c.ResolvedSpaceIDs).toContain(ids.dev);
    const revs = (await env.api.get('/space/acme-dev/unit/deployment/revision')).body;
    expect(revs[0].ChangeOrders).toEqual({ [c.ChangeOrderID]: '' });
    expect(revs[1].ChangeOrders).toEqual({});
  });

  it('holds staging until dev has released the change, naming the prerequisite and the space', async () => {
    await reach('dev');
    const r = await promote();
    expect(r.status).toBe(409);
    expect(r.body.Message).toBe(
      "unable to promote to stage 'staging', Variant 'dev' has taken change order 'release-v452' but has not released it",
    );
    expect(r.body.Gates.filter((g: any) => !g.Satisfied)).toEqual([
      {
        Prerequisite: 'Released',
        Satisfied: false,
        SpaceID: ids.dev,
        SpaceSlug: 'acme-dev',
        Message: "has taken change order 'release-v452' but has not released it",
      },
    ]);
    expect(await image('acme-staging-euw1')).toBe('ghcr.io/acme/acme:v451');
    expect((await co()).PromotionFailures).toEqual([]);
  });

  it('opens staging once dev released it, and a later stage named early is refused naming each blocker', async () => {
    await reach('dev');
    const p = await publishCo('acme-dev');
    expect(p.status).toBe(201);
    expect(p.body.Release.ChangeOrderID).toBe((await co()).ChangeOrderID);
    expect((await co()).ReleasedSpaceIDs).toContain(ids.dev);
    const early = await promote({ TargetStage: 'prod' });
    expect(early.status).toBe(409);
    expect(early.body.Message).toMatch(
      /unable to promote to stage 'prod', Variant 'staging-euw1' has not taken change order 'release-v452'; unable to promote to stage 'prod', Variant 'staging-use1' has not taken/,
    );
    const r = await promote({ TargetStage: 'staging' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ Stage: 'staging', Landed: 2, Total: 2 });
    expect(await image('acme-staging-use1')).toBe('ghcr.io/acme/acme:v452');
    expect((await co()).Stage).toBe('staging');
  });

  it('holds prod on Released, Healthy and not-frozen, read at evaluation time', async () => {
    await reach('staging');
    let r = await promote();
    expect(r.status).toBe(409);
    expect(r.body.Message).toMatch(
      /Variant 'staging-euw1' has taken change order 'release-v452' but has not released it/,
    );
    await publishCo('acme-staging-euw1');
    await publishCo('acme-staging-use1');
    r = await promote();
    expect(r.body.Message).toMatch(/Variant 'staging-euw1' release \d+ has not been reported on yet/);
    await report('acme-staging-euw1', 'Healthy');
    await report('acme-staging-use1', 'Degraded');
    r = await promote();
    expect(r.status).toBe(409);
    expect(r.body.Message).toMatch(
      /^unable to promote to stage 'prod', Variant 'staging-use1' release \d+ is Synced, Degraded, operation Succeeded$/,
    );
    await report('acme-staging-use1', 'Healthy');
    const euw1 = (await env.api.get('/space/acme-staging-euw1')).body;
    await env.api.patch('/space/acme-staging-euw1', { Version: euw1.Version, Annotations: { 'code-freeze': 'true' } });
    r = await promote();
    expect(r.body.Message).toBe(
      "unable to promote to stage 'prod', Variant 'staging-euw1': requires not-frozen (the space is not under a code freeze): the expression is false",
    );
    await env.api.patch('/space/acme-staging-euw1', {
      Version: euw1.Version + 1,
      Annotations: { 'code-freeze': null },
    });
  });

  it('lands a stage partway, records the failure, and a rerun repairs it', async () => {
    await reach('prodReady');
    // Lock prod-use1's deployment in an open changeset: its write fails, the other prod spaces land.
    await env.api.post('/space/acme-prod-use1/change_set', { Slug: 'hotfix' });
    await env.api.post('/space/acme-prod-use1/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['2'],
      UnitIDs: ['deployment'],
      ChangeSetID: 'hotfix',
    });
    const r = await promote();
    expect(r.status).toBe(207);
    expect(r.body).toMatchObject({ Stage: 'prod', Landed: 2, Total: 3 });
    expect(r.body.Spaces.find((s: any) => s.SpaceSlug === 'acme-prod-use1')).toMatchObject({ Action: 'Failed' });
    const failures = (await co()).PromotionFailures;
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      UserID: env.api.caller!.UserID,
      Stage: 'prod',
      Spaces: [
        {
          SpaceSlug: 'acme-prod-use1',
          Action: 'Failed',
          Units: [{ UnitSlug: 'deployment', Error: expect.stringMatching(/locked by open changeset 'hotfix'/) }],
        },
      ],
    });
    const failed = env.bus.log.filter(
      (e) => e.detailType === 'Promotion Failed' && e.detail.ChangeOrderID === r.body.ChangeOrderID,
    );
    expect(failed.map((e) => [e.detail.Stage, e.detail.SpaceIDs, e.detail.SpaceCount])).toEqual([
      ['prod', [ids['prod-use1']], 1],
    ]);
    expect(await image('acme-prod-euw1')).toBe('ghcr.io/acme/acme:v452');
    expect((await co()).Stage).toBe('staging');
    const cs = (await env.api.get('/space/acme-prod-use1/change_set/hotfix')).body;
    await env.api.patch('/space/acme-prod-use1/change_set/hotfix', { Version: cs.Version, State: 'Closed' });
    // One unit repaired directly, ungated; the rerun takes the rest of the space.
    const repaired = await env.api.post('/space/acme-prod-use1/unit/deployment/upgrade', {
      ChangeOrderID: 'acme-base/release-v452',
    });
    expect(repaired.status).toBe(200);
    expect(repaired.body).toMatchObject({ Action: 'Upgrade' });
    expect(await image('acme-prod-use1')).toBe('ghcr.io/acme/acme:v452');
    expect((await co()).ResolvedSpaceIDs).not.toContain(ids['prod-use1']);
    const again = await promote({ TargetStage: 'prod' });
    expect(again.status).toBe(200);
    expect(again.body.Spaces.map((s: any) => [s.SpaceSlug, s.Action]).sort()).toEqual([
      ['acme-prod-apse1', 'Unchanged'],
      ['acme-prod-euw1', 'Unchanged'],
      ['acme-prod-use1', 'Promote'],
    ]);
    const prodUse1 = parseAllDocuments(
      (await env.api.get('/space/acme-prod-use1/unit/deployment/data')).text,
    )[0]!.toJS();
    expect([prodUse1.spec.replicas, prodUse1.spec.template.spec.containers[0].image]).toEqual([
      2,
      'ghcr.io/acme/acme:v452',
    ]);
    const c = await co();
    expect(c).toMatchObject({ State: 'Resolved', Stage: 'prod', Completed: false });
  });

  it('reads Released and then Completed as releases and live status arrive', async () => {
    await reach('prod');
    for (const v of PRODS) expect((await publishCo(`acme-${v}`)).status).toBe(201);
    let c = await co();
    expect(c).toMatchObject({ State: 'Released', Stage: 'prod', Completed: false });
    for (const v of PRODS) await report(`acme-${v}`, 'Healthy');
    c = await co();
    expect(c).toMatchObject({ State: 'Released', Stage: 'Completed', Completed: true });
    const mine = env.bus.log.filter((e) => e.detail.ChangeOrderID === c.ChangeOrderID);
    expect(mine.filter((e) => e.detailType === 'ChangeOrder Stage Advanced').map((e) => e.detail.Stage)).toEqual([
      'dev',
      'staging',
      'prod',
      'Completed',
    ]);
    expect(mine.filter((e) => e.detailType === 'ChangeOrder Completed')).toHaveLength(1);
    expect(mine.filter((e) => e.detailType === 'Promotion Failed')).toEqual([]);
    expect((await promote()).body.Message).toBe("change order 'release-v452' has reached every stage");
  });

  it('answers the fleet queries', async () => {
    await reach('completed');
    await v453AtDev();
    const q = async (where: string, space?: string) =>
      (await env.api.get(`${space ? `/space/${space}` : ''}/change_order?where=${encodeURIComponent(where)}`)).body
        .map((c: any) => c.Slug)
        .sort();
    expect(await q("State = 'InProgress'")).toEqual(['release-v453']);
    expect(await q(`ResolvedSpaceIDs ? '${ids['prod-apse1']}'`, 'acme-base')).toEqual(['release-v452']);
    expect(await q('LEN(ResolvedSpaceIDs) > 1', 'acme-base')).toEqual(['release-v452', 'release-v453']);
    expect(await q("Stage = 'prod'")).toEqual([]);
    expect(await q("Stage = 'dev'")).toEqual(['release-v453']);
    expect(await q("Stage = 'Completed'")).toEqual(['release-v452']);
  });

  it('--component selects the spaces of that component, other than the base', async () => {
    await env.api.post('/space', { Slug: 'not-acme', Labels: { Stage: 'Staging' } });
    const r = await env.api.post('/space/acme-base/change_order', {
      Slug: 'by-component',
      ComponentID: 'acme',
      WhereSpace: "Labels.Stage = 'Staging'",
    });
    expect(r.status).toBe(201);
    expect([...r.body.InScopeSpaceIDs].sort()).toEqual([ids['staging-euw1'], ids['staging-use1']].sort());
    expect(r.body.WhereSpace).toMatch(/^Labels\.Stage = 'Staging' AND ComponentID = '[0-9a-f-]{36}'$/);
  });

  it('--force promotes past failing gates, recording who, when, which stage, why, and the gates', async () => {
    await reach('completed');
    await v453AtDev();
    const noReason = await env.api.post('/promote', { ChangeOrderID: 'acme-base/release-v453', Force: true });
    expect(noReason.status).toBe(400);
    const r = await env.api.post('/promote', {
      ChangeOrderID: 'acme-base/release-v453',
      Force: true,
      ForceReason: 'incident 1234',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ Stage: 'staging', Forced: true });
    const c = await co('release-v453');
    expect(c.PromotionOverrides).toEqual([
      expect.objectContaining({
        Reason: 'incident 1234',
        Stage: 'staging',
        UserID: env.api.caller!.UserID,
        FailedGates: [expect.objectContaining({ Prerequisite: 'Released', SpaceSlug: 'acme-dev', Satisfied: false })],
      }),
    ]);
  });

  it('re-releases the state before the change with Before:ChangeOrder, and adopts a fix by moving the release tag', async () => {
    await reach('completed');
    await v453AtDev();
    expect(
      (
        await env.api.post('/promote', {
          ChangeOrderID: 'acme-base/release-v453',
          Force: true,
          ForceReason: 'incident 1234',
        })
      ).status,
    ).toBe(200);
    const before = await env.api.post('/space/acme-dev/release', {
      Revision: 'Before:ChangeOrder:acme-base/release-v452',
      DryRun: true,
    });
    expect(before.body.Units.find((u: any) => u.Slug === 'deployment').RevisionNum).toBe(2);
    // release-v453 has not been released in staging-euw1: a fix there can be adopted into its release tag.
    await env.api.post('/space/acme-staging-euw1/function/invoke', {
      FunctionName: 'set-env-var',
      Arguments: ['acme', 'FIX', '1'],
      UnitIDs: ['deployment'],
    });
    const head = (await env.api.get('/space/acme-staging-euw1/unit/deployment')).body.HeadRevisionNum;
    const moved = await env.api.post('/space/acme-staging-euw1/unit/deployment/tag', {
      Tag: 'ChangeOrder:acme-base/release-v453',
      Revision: 'HeadRevisionNum',
      Move: true,
    });
    expect(moved.status).toBe(200);
    expect(moved.body.RevisionNum).toBe(head);
    const fixed = await env.api.post('/space/acme-staging-euw1/release', {
      Revision: 'ChangeOrder:acme-base/release-v453',
      DryRun: true,
    });
    expect(fixed.body.Units.find((u: any) => u.Slug === 'deployment').RevisionNum).toBe(head);
    // release-v452 was published in prod-euw1: its release tag there is fixed.
    const frozen = await env.api.post('/space/acme-prod-euw1/unit/deployment/tag', {
      Tag: 'ChangeOrder:acme-base/release-v452',
      Revision: 'HeadRevisionNum',
      Move: true,
    });
    expect(frozen.status).toBe(409);
  });
});

describe('where a change order keeps its start and release marks', () => {
  beforeEach(seeded);
  afterEach(async () => env.close());

  /** The mark items stored for a Unit, as the table holds them. */
  async function storedMarks(unitId: string): Promise<Record<string, unknown>[]> {
    const client = dynamoClient(inject('dynamoEndpoint'));
    try {
      const r = await client.send(
        new QueryCommand({
          TableName: env.table,
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: `$baton#UnitID_${unitId}` } },
        }),
      );
      return (r.Items ?? []).map((i) => unmarshall(i));
    } finally {
      client.destroy();
    }
  }
  /** A Tag's marks in one Space, as the API shows them: Unit → revision. */
  const marksIn = async (tag: string, space: string) =>
    Object.fromEntries(
      ((await env.api.get(`/space/acme-base/tag/${tag}`)).body.Marks as any[])
        .filter((m) => m.SpaceID === ids[space])
        .map((m) => [m.UnitID, m.RevisionNum]),
    );

  it('marks each promoted Unit with its start, end and release marks, one item each, and a fix adopted moves only the release mark', async () => {
    await reach('dev');
    const c = await co();
    const dep = (await env.api.get('/space/acme-dev/unit/deployment')).body;
    const items = (await storedMarks(dep.UnitID)).filter((m) => m.ChangeOrderID === c.ChangeOrderID);
    expect(items.map((m) => [m.Role, m.TagID, m.RevisionNum]).sort()).toEqual([
      ['end', c.EndTagID, dep.HeadRevisionNum],
      ['publish', c.PublishTagID, dep.HeadRevisionNum],
      ['start', c.StartTagID, dep.HeadRevisionNum - 1],
    ]);
    // The release Tag marks what the end Tag marks, in the Tag, on the revision, and for a Release;
    // the start Tag marks the revision before, in the Tag and on that revision.
    const end = await marksIn('release-v452-co-end', 'dev');
    expect(Object.keys(end)).toHaveLength(2);
    expect(end[dep.UnitID]).toBe(dep.HeadRevisionNum);
    expect(await marksIn('release-v452-co-publish', 'dev')).toEqual(end);
    const start = await marksIn('release-v452-co-start', 'dev');
    expect(Object.keys(start).sort()).toEqual(Object.keys(end).sort());
    expect(start[dep.UnitID]).toBe(dep.HeadRevisionNum - 1);
    const rev = (await env.api.get(`/space/acme-dev/unit/deployment/revision/${dep.HeadRevisionNum}`)).body;
    expect(Object.keys(rev.Tags).sort()).toEqual([c.EndTagID, c.PublishTagID].sort());
    const before = (await env.api.get(`/space/acme-dev/unit/deployment/revision/${dep.HeadRevisionNum - 1}`)).body;
    expect(Object.keys(before.Tags)).toContain(c.StartTagID);
    const dry = await env.api.post('/space/acme-dev/release', {
      Revision: 'ChangeOrder:acme-base/release-v452',
      DryRun: true,
    });
    expect(dry.body.Units.find((u: any) => u.Slug === 'deployment').RevisionNum).toBe(dep.HeadRevisionNum);

    // A fix adopted into the release: the release mark moves to it; the start and end marks stay.
    await env.api.post('/space/acme-dev/function/invoke', {
      FunctionName: 'set-env-var',
      Arguments: ['acme', 'FIX', '1'],
      UnitIDs: ['deployment'],
    });
    const moved = await env.api.post('/space/acme-dev/unit/deployment/tag', {
      Tag: 'ChangeOrder:acme-base/release-v452',
      Revision: 'HeadRevisionNum',
      Move: true,
    });
    expect(moved.status).toBe(200);
    const fixed = dep.HeadRevisionNum + 1;
    expect(
      (await storedMarks(dep.UnitID))
        .filter((m) => m.ChangeOrderID === c.ChangeOrderID)
        .map((m) => [m.Role, m.RevisionNum])
        .sort(),
    ).toEqual([
      ['end', dep.HeadRevisionNum],
      ['publish', fixed],
      ['start', dep.HeadRevisionNum - 1],
    ]);
    expect(await marksIn('release-v452-co-publish', 'dev')).toEqual({ ...end, [dep.UnitID]: fixed });
    expect(await marksIn('release-v452-co-end', 'dev')).toEqual(end);
    expect(await marksIn('release-v452-co-start', 'dev')).toEqual(start);
    const release = await publishCo('acme-dev');
    expect(release.status).toBe(201);
    expect(release.body.Units.find((u: any) => u.Slug === 'deployment').RevisionNum).toBe(fixed);
  });

  it('refuses to delete a change order’s Tags or to move them as plain Tags, writing nothing', async () => {
    await reach('dev');
    const before = (await env.api.get('/space/acme-base/tag/release-v452-co-publish')).body.Marks;
    for (const tag of ['release-v452-co-start', 'release-v452-co-end', 'release-v452-co-publish']) {
      const del = await env.api.del(`/space/acme-base/tag/${tag}`);
      expect(del.status).toBe(409);
      expect(del.body.Message).toBe(
        `tag '${tag}' belongs to a change order; where the change has got to is read from its marks`,
      );
    }
    const moved = await env.api.post('/space/acme-base/unit/deployment/tag', {
      Tag: 'release-v452-co-publish',
      Revision: 'HeadRevisionNum',
      Move: true,
    });
    expect(moved.status).toBe(409);
    expect(moved.body.Message).toMatch(
      /^tag 'release-v452-co-publish' belongs to a change order; its marks are set by the change order \(a fix is adopted into its release with ChangeOrder:<space>\/<change-order>\)$/,
    );
    expect((await env.api.get('/space/acme-base/tag/release-v452-co-publish')).body.Marks).toEqual(before);
  });
});

describe('what the gates read of a Space’s Releases', () => {
  beforeEach(seeded);
  afterEach(async () => env.close());

  it('read newest first until the Release carrying the change, not the Space’s whole history, with the same answers', async () => {
    await reach('dev');
    // Release 1 carries the change; twelve later ones do not: each bundles the deployment as it was before the change
    // (revision 2, Tag 'old') and the config as edited since (the Tag moved to each edit).
    expect((await publishCo('acme-dev')).status).toBe(201);
    expect((await env.api.post('/space/acme-dev/unit/deployment/tag', { Tag: 'old', Revision: 2 })).status).toBe(200);
    for (let i = 0; i < 12; i++) {
      expect(
        (
          await env.api.post('/space/acme-dev/function/invoke', {
            FunctionName: 'set-annotation',
            Arguments: ['round', String(i)],
            UnitIDs: ['config'],
          })
        ).status,
      ).toBe(200);
      expect(
        (await env.api.post('/space/acme-dev/unit/config/tag', { Tag: 'old', Revision: 'HeadRevisionNum', Move: true }))
          .status,
      ).toBe(200);
      const r = await env.api.post('/space/acme-dev/release', { Revision: 'Tag:old' });
      expect(r.status, r.text).toBe(201);
    }
    const devCell = async () => {
      const r = await env.api.get('/space/acme-base/change_order/release-v452/rollout');
      expect(r.status, r.text).toBe(200);
      return (r.body.Stages[0].Spaces as any[]).find((c) => c.SpaceSlug === 'acme-dev');
    };
    await devCell();
    const pages = vi.spyOn(env.deps.store, 'releasePage');
    const whole = vi.spyOn(env.deps.store, 'listInSpace');
    const cell = await devCell();
    const devPages = pages.mock.calls.filter(([id]) => id === ids.dev);
    const devWhole = whole.mock.calls.filter(([kind, id]) => kind === 'Release' && id === ids.dev);
    pages.mockRestore();
    whole.mockRestore();
    // Staging's prerequisites over dev: released in release 1 (on the second page), the latest (13) does not carry it.
    expect(cell.Gates.find((g: any) => g.Prerequisite === 'Released')).toMatchObject({
      Satisfied: true,
      Message: 'released it in release 1',
    });
    expect(cell.Release).toMatchObject({ ReleaseNum: 13, CarriesChange: false });
    expect(devPages.map(([, size]) => size)).toEqual([10, 100]);
    expect(devWhole).toEqual([]);
    // A Release carrying it again, newest: one page, the first.
    expect((await publishCo('acme-dev')).status).toBe(201);
    const again = vi.spyOn(env.deps.store, 'releasePage');
    const now = await devCell();
    const later = again.mock.calls.filter(([id]) => id === ids.dev).map(([, size]) => size);
    again.mockRestore();
    expect(now.Gates.find((g: any) => g.Prerequisite === 'Released')).toMatchObject({
      Satisfied: true,
      Message: 'released it in release 14',
    });
    expect(now.Release).toMatchObject({ ReleaseNum: 14, CarriesChange: true });
    expect(later).toEqual([10]);
  });
});

describe.shuffle('scope and prior revisions', () => {
  // Each test edits the chain: each gets one of its own.
  beforeEach(seeded);
  afterEach(async () => env.close());
  beforeEach(async () => {
    await env.api.post('/space/acme-workflows/change_workflow', {
      Slug: 'chain',
      Stages: [
        { Name: 'mid', WhereSpace: "Labels.Stage = 'Mid'" },
        { Name: 'leaf', WhereSpace: "Labels.Stage = 'Leaf'" },
      ],
    });
    await env.api.post('/space', { Slug: 'chain-base' });
    await env.api.post('/space/chain-base/unit', {
      Slug: 'app',
      Data: 'kind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 1\n',
    });
    for (const [name, up, stage] of [
      ['mid', 'chain-base', 'Mid'],
      ['leaf', 'chain-mid', 'Leaf'],
    ]) {
      await env.api.post('/variant', { Name: name, UpstreamSpaceID: up, Slug: `chain-${name}`, Stage: stage });
    }
  });

  it('refuses a selection that skips a space between the base and a selected space', async () => {
    const r = await env.api.post('/space/chain-base/change_order', { Slug: 'skip', InScopeSpaceIDs: ['chain-leaf'] });
    expect(r.status).toBe(400);
    expect(r.body.Message).toMatch(
      /the selection skips space 'chain-mid', which lies between 'chain-base' and 'chain-leaf'/,
    );
    const sel = await env.api.post('/space/chain-base/change_order', {
      Slug: 'sel',
      WhereSpace: "Labels.Stage = 'Leaf'",
    });
    expect(sel.status).toBe(400);
  });

  it('refuses an end inside an open changeset', async () => {
    await env.api.post('/space/chain-base/change_set', { Slug: 'open-cs' });
    await env.api.post('/space/chain-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['2'],
      UnitIDs: ['app'],
      ChangeSetID: 'open-cs',
    });
    const r = await env.api.post('/space/chain-base/change_order', { Slug: 'too-soon' });
    expect(r.status).toBe(409);
    expect(r.body.Message).toMatch(/ends inside changeset 'open-cs', which is still open/);
    const cs = (await env.api.get('/space/chain-base/change_set/open-cs')).body;
    await env.api.patch('/space/chain-base/change_set/open-cs', { Version: cs.Version, State: 'Closed' });
  });

  const replicas = (n: number, space = 'chain-base') =>
    env.api.post(`/space/${space}/function/invoke`, {
      FunctionName: 'set-replicas',
      Arguments: [String(n)],
      UnitIDs: ['app'],
    });

  it('takes revisions the space above wrote before the start: Include merges them, Skip leaves them, Error names them', async () => {
    await replicas(2);
    const made = await env.api.post('/space/chain-base/change_order', {
      Slug: 'c1',
      ChangeWorkflowID: 'acme-workflows/chain',
    });
    expect(made.status).toBe(201);
    // mid writes a change of its own before the change order reaches it.
    await env.api.post('/space/chain-mid/function/invoke', {
      FunctionName: 'set-label',
      Arguments: ['mid-only', 'yes'],
      UnitIDs: ['app'],
      ChangeDescription: 'mid local label',
    });
    expect((await env.api.post('/promote', { ChangeOrderID: 'chain-base/c1' })).status).toBe(200);
    const err = await env.api.post('/promote', {
      ChangeOrderID: 'chain-base/c1',
      PriorRevisions: 'Error',
      DryRun: true,
    });
    expect(err.status).toBe(207);
    expect(err.body.Spaces[0].Error).toMatch(
      /unit 'app' has revisions before the change order's start not yet merged through link 'app-upstream': revision 2 of 'chain-mid\/app' \(mid local label\)/,
    );
    const skip = await env.api.post('/promote', {
      ChangeOrderID: 'chain-base/c1',
      PriorRevisions: 'Skip',
      DryRun: true,
    });
    expect(skip.body.Spaces[0].Units[0].Changes.map((c: any) => c.Path)).toEqual(['spec.replicas']);
    const include = await env.api.post('/promote', { ChangeOrderID: 'chain-base/c1' });
    expect(include.status).toBe(200);
    const leaf = parseAllDocuments((await env.api.get('/space/chain-leaf/unit/app/data')).text)[0]!.toJS();
    expect([leaf.spec.replicas, leaf.metadata.labels['mid-only']]).toEqual([2, 'yes']);
  });

  it('refuses a unit that merged past the start, listing what it took', async () => {
    // mid has merged base revision 2; the change starts there, and mid then takes revisions 3 and 4 by hand.
    await replicas(2);
    expect((await env.api.post('/space/chain-mid/unit/app/upgrade', {})).status).toBe(200);
    await replicas(4);
    expect(
      (await env.api.post('/space/chain-base/change_order', { Slug: 'c2', ChangeWorkflowID: 'acme-workflows/chain' }))
        .status,
    ).toBe(201);
    await replicas(5);
    expect((await env.api.post('/space/chain-mid/unit/app/upgrade', {})).status).toBe(200);
    const r = await env.api.post('/promote', { ChangeOrderID: 'chain-base/c2' });
    expect(r.status).toBe(207);
    expect(r.body.Spaces[0].Error).toMatch(
      /has already merged past the change order's start \(revision 2 of 'app'\): it took revisions 3\.\.4/,
    );
  });

  it('refuses links that disagree on where the change starts, naming the unit and values', async () => {
    // chain-mid has merged base revision 4; a new variant cloned after revision 5 starts there.
    for (const n of [2, 3, 4]) await replicas(n);
    expect((await env.api.post('/space/chain-mid/unit/app/upgrade', {})).status).toBe(200);
    await replicas(6);
    await env.api.post('/variant', { Name: 'other', UpstreamSpaceID: 'chain-base', Slug: 'chain-other', Stage: 'Mid' });
    const r = await env.api.post('/space/chain-base/change_order', {
      Slug: 'c3',
      InScopeSpaceIDs: ['chain-mid', 'chain-other'],
    });
    expect(r.status).toBe(409);
    expect(r.body.Message).toBe(
      "unit 'app': the links pointing at it disagree on where the change starts: chain-mid has merged to revision 4, chain-other has merged to revision 5",
    );
  });
});

describe.shuffle('a MergeUnits change order', () => {
  onSeededApi();
  it('follows MergeUnits Links into spaces that are not variants, skipping base units nothing merges from', async () => {
    await env.api.post('/space', { Slug: 'shared-base' });
    await env.api.post('/space/shared-base/unit', {
      Slug: 'defaults',
      Data: 'kind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n',
    });
    await env.api.post('/space/shared-base/unit', {
      Slug: 'unused',
      Data: 'kind: ConfigMap\nmetadata:\n  name: unused\n',
    });
    for (const team of ['team-x', 'team-y']) {
      await env.api.post('/space', { Slug: team });
      await env.api.post(`/space/${team}/unit`, {
        Slug: 'web',
        Data: `kind: Deployment\nmetadata:\n  name: web\n  namespace: ${team}\nspec:\n  replicas: 1\n`,
      });
      await env.api.post(`/space/${team}/link`, {
        FromUnitID: 'web',
        ToUnitID: 'shared-base/defaults',
        UpdateType: 'MergeUnits',
      });
      await env.api.post(`/space/${team}/unit/web/upgrade`, {
        MergeSourceID: 'shared-base/defaults',
        MergeBaseRevisionNum: 1,
        MergeEndRevisionNum: 1,
      });
    }
    await env.api.post('/space/shared-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['3'],
      UnitIDs: ['defaults'],
    });
    const made = await env.api.post('/space/shared-base/change_order', { Slug: 'm1', UpdateType: 'MergeUnits' });
    expect(made.status).toBe(201);
    const unused = (await env.api.get('/space/shared-base/unit/unused')).body;
    expect(made.body.SkippedUnits[unused.UnitID]).toBe('nothing follows it by a MergeUnits link');
    expect(made.body.InScopeSpaceIDs).toHaveLength(2);
    const r = await env.api.post('/promote', { ChangeOrderID: 'shared-base/m1', Spaces: ['team-x', 'team-y'] });
    expect(r.status).toBe(200);
    for (const team of ['team-x', 'team-y']) {
      const d = parseAllDocuments((await env.api.get(`/space/${team}/unit/web/data`)).text)[0]!.toJS();
      expect([d.spec.replicas, d.metadata.namespace]).toEqual([3, team]);
    }
    expect((await env.api.get('/space/shared-base/change_order/m1')).body.State).toBe('Resolved');
  });
});

describe.shuffle('end tags and cloning', () => {
  beforeEach(seeded);
  afterEach(async () => env.close());
  beforeEach(async () => {
    await env.api.post('/space/acme-workflows/change_workflow', {
      Slug: 'one-hop',
      Stages: [{ Name: 'next', WhereSpace: "Labels.Stage = 'Next'" }],
    });
    await env.api.post('/space', { Slug: 'et-base' });
    await env.api.post('/space/et-base/unit', {
      Slug: 'app',
      Data: 'kind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 1\n',
    });
    await env.api.post('/variant', { Name: 'next', UpstreamSpaceID: 'et-base', Slug: 'et-next', Stage: 'Next' });
  });

  it('ends at the revision a closed changeset end tag marks, not the head', async () => {
    const cs = (await env.api.post('/space/et-base/change_set', { Slug: 'release-v9' })).body;
    await env.api.post('/space/et-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['2'],
      UnitIDs: ['app'],
      ChangeSetID: 'release-v9',
    });
    await env.api.patch('/space/et-base/change_set/release-v9', { Version: cs.Version, State: 'Closed' });
    await env.api.post('/space/et-base/function/invoke', {
      FunctionName: 'set-label',
      Arguments: ['after', 'yes'],
      UnitIDs: ['app'],
    });
    const made = await env.api.post('/space/et-base/change_order', {
      Slug: 'release-v9',
      ChangeWorkflowID: 'acme-workflows/one-hop',
      EndTagID: 'et-base/release-v9-end',
    });
    expect(made.status).toBe(201);
    expect((await env.api.get('/space/et-base/tag/release-v9-co-end')).body.Marks[0].RevisionNum).toBe(2);
    expect((await env.api.post('/promote', { ChangeOrderID: 'et-base/release-v9' })).status).toBe(200);
    const d = parseAllDocuments((await env.api.get('/space/et-next/unit/app/data')).text)[0]!.toJS();
    expect([d.spec.replicas, d.metadata.labels]).toEqual([2, undefined]);
  });

  it('with --prior-revisions All clones a unit the change does not change, which the space lacks', async () => {
    await env.api.post('/space/et-base/unit', { Slug: 'extra', Data: 'kind: ConfigMap\nmetadata:\n  name: extra\n' });
    const plain = await env.api.post('/space/et-base/change_order', {
      Slug: 'plain',
      ChangeWorkflowID: 'acme-workflows/one-hop',
    });
    const extra = (await env.api.get('/space/et-base/unit/extra')).body;
    expect(plain.body.SkippedUnits[extra.UnitID]).toBe('no change: nothing follows it; marked at revision 1');
    const dry = await env.api.post('/promote', { ChangeOrderID: 'et-base/plain', DryRun: true });
    expect(dry.body.Spaces[0].Units.find((u: any) => u.UnitSlug === 'extra')).toMatchObject({
      Action: 'Unchanged',
      Reason: 'NotCovered',
    });
    await env.api.post('/space/et-base/change_order', {
      Slug: 'all',
      ChangeWorkflowID: 'acme-workflows/one-hop',
      PriorRevisions: 'All',
    });
    const r = await env.api.post('/promote', { ChangeOrderID: 'et-base/all' });
    expect(r.status).toBe(200);
    expect(r.body.Spaces[0].Units.find((u: any) => u.UnitSlug === 'extra')).toMatchObject({ Action: 'Clone' });
    expect((await env.api.get('/space/et-next/unit/extra')).body.UpstreamUnitID).toBe(extra.UnitID);
  });
});

describe.shuffle('first-stage gates and --where-space', () => {
  onSeededApi();
  it("evaluates the first stage's prerequisites over the base, and promotes the spaces a where selects", async () => {
    await env.api.post('/space/acme-workflows/change_workflow', {
      Slug: 'gated-base',
      Stages: [{ Name: 'next', WhereSpace: "Labels.Stage = 'Next'", Prerequisites: ['Validated'] }],
    });
    await env.api.post('/space', { Slug: 'gb-base' });
    await env.api.post('/space/gb-base/unit', {
      Slug: 'app',
      Data: 'kind: Deployment\nmetadata:\n  name: app\n  namespace: confighubplaceholder\nspec:\n  replicas: 1\n',
    });
    for (const n of ['a', 'b'])
      await env.api.post('/variant', {
        Name: n,
        UpstreamSpaceID: 'gb-base',
        Slug: `gb-${n}`,
        Stage: 'Next',
        Namespace: 'gb',
      });
    await env.api.post('/space/gb-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['2'],
      UnitIDs: ['app'],
    });
    await env.api.post('/space/gb-base/change_order', { Slug: 'g1', ChangeWorkflowID: 'acme-workflows/gated-base' });
    const refused = await env.api.post('/promote', { ChangeOrderID: 'gb-base/g1' });
    expect(refused.status).toBe(409);
    expect(refused.body.Message).toMatch(
      /^unable to promote to stage 'next', Variant 'gb-base' has validation errors: app revision 2 \(placeholders left at Deployment\/app metadata\.namespace\)$/,
    );
    // Forced past the base's gate, into only the spaces the where selects.
    const r = await env.api.post('/promote', {
      ChangeOrderID: 'gb-base/g1',
      WhereSpace: "Slug = 'gb-a'",
      Force: true,
      ForceReason: 'base placeholders are filled per variant',
    });
    expect(r.status).toBe(200);
    expect(r.body.Spaces.map((s: any) => s.SpaceSlug)).toEqual(['gb-a']);
    const a = parseAllDocuments((await env.api.get('/space/gb-a/unit/app/data')).text)[0]!.toJS();
    const b = parseAllDocuments((await env.api.get('/space/gb-b/unit/app/data')).text)[0]!.toJS();
    expect([a.spec.replicas, b.spec.replicas]).toEqual([2, 1]);
  });
});

describe.shuffle('MergeUnits ordering and abort', () => {
  onSeededApi();
  it('promotes a space after the selected space its MergeUnits links merge from', async () => {
    await env.api.post('/space', { Slug: 'mu-base' });
    await env.api.post('/space/mu-base/unit', {
      Slug: 'lib',
      Data: 'kind: ConfigMap\nmetadata:\n  name: lib\ndata:\n  v: "1"\n',
    });
    for (const [space, from] of [
      ['mu-x', 'mu-base/lib'],
      ['mu-y', 'mu-x/lib'],
    ] as const) {
      await env.api.post('/space', { Slug: space });
      await env.api.post(`/space/${space}/unit`, {
        Slug: 'lib',
        Data: 'kind: ConfigMap\nmetadata:\n  name: lib\ndata:\n  v: "1"\n',
      });
      await env.api.post(`/space/${space}/link`, { FromUnitID: 'lib', ToUnitID: from, UpdateType: 'MergeUnits' });
      await env.api.post(`/space/${space}/unit/lib/upgrade`, {
        MergeSourceID: from,
        MergeBaseRevisionNum: 1,
        MergeEndRevisionNum: 1,
      });
    }
    const u = (await env.api.get('/space/mu-base/unit/lib')).body;
    await env.api.patch('/space/mu-base/unit/lib', {
      Version: u.Version,
      Data: 'kind: ConfigMap\nmetadata:\n  name: lib\ndata:\n  v: "2"\n',
    });
    const made = await env.api.post('/space/mu-base/change_order', {
      Slug: 'mu',
      UpdateType: 'MergeUnits',
      InScopeSpaceIDs: ['mu-y', 'mu-x'],
    });
    expect(made.status).toBe(201);
    // A dry run previews the later wave merging from what the earlier one would write, as the real run does.
    const dry = await env.api.post('/promote', { ChangeOrderID: 'mu-base/mu', Spaces: ['mu-y', 'mu-x'], DryRun: true });
    expect(dry.status).toBe(200);
    expect(
      dry.body.Spaces.map((s: any) => [
        s.SpaceSlug,
        s.Units.map((u: any) => [u.UnitSlug, u.Action, u.Changes.map((c: any) => [c.Path, c.Value])]),
      ]),
    ).toEqual([
      ['mu-x', [['lib', 'Upgrade', [['data.v', '2']]]]],
      ['mu-y', [['lib', 'Upgrade', [['data.v', '2']]]]],
    ]);
    expect(parseAllDocuments((await env.api.get('/space/mu-x/unit/lib/data')).text)[0]!.toJS().data.v).toBe('1');
    const r = await env.api.post('/promote', { ChangeOrderID: 'mu-base/mu', Spaces: ['mu-y', 'mu-x'] });
    expect(r.status).toBe(200);
    expect(r.body.Spaces.map((s: any) => s.SpaceSlug)).toEqual(['mu-x', 'mu-y']);
    for (const s of ['mu-x', 'mu-y'])
      expect(parseAllDocuments((await env.api.get(`/space/${s}/unit/lib/data`)).text)[0]!.toJS().data.v).toBe('2');
  });

  it('refuses every promotion of an aborted change order', async () => {
    await env.api.post('/space', { Slug: 'ab-base' });
    await env.api.post('/space/ab-base/unit', {
      Slug: 'app',
      Data: 'kind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 1\n',
    });
    expect((await env.api.post('/variant', { Name: 'mid', UpstreamSpaceID: 'ab-base', Slug: 'ab-mid' })).status).toBe(
      201,
    );
    await env.api.post('/space/ab-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['9'],
      UnitIDs: ['app'],
    });
    expect(
      (await env.api.post('/space/ab-base/change_order', { Slug: 'doomed', InScopeSpaceIDs: ['ab-mid'] })).status,
    ).toBe(201);
    const aborted = await env.api.patch('/space/ab-base/change_order/doomed', { AbortedReason: 'superseded by v453' });
    expect(aborted.body).toMatchObject({ State: 'Aborted', AbortedReason: 'superseded by v453' });
    const r = await env.api.post('/promote', { ChangeOrderID: 'ab-base/doomed', Spaces: ['ab-mid'] });
    expect(r.status).toBe(409);
    expect(r.body.Message).toMatch(/was aborted \(superseded by v453\)/);
  });
});

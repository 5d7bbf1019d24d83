import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HoldEventDetail } from '../../lib/events/contracts.ts';
import { Api, deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
let member: Api;

/** A base of one Unit, `n` Production variants with a release Target each, a one-Stage workflow and a change order. */
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
  await env.api.post('/space', { Slug: `${name}-infra` });
  for (let i = 0; i < n; i++) {
    await env.api.post(`/space/${name}-infra/target`, { Slug: `t${i}` });
    expect(
      (
        await env.api.post('/variant', {
          Name: `p${i}`,
          UpstreamSpaceID: `${name}-base`,
          Stage: 'Production',
          Namespace: 'prod',
          ReleaseTargetID: `${name}-infra/t${i}`,
        })
      ).status,
    ).toBe(201);
  }
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
  env = await startEnv();
  member = new Api(env.url, (await env.api.post('/user', { Slug: 'mia', Role: 'Member' })).body.Token);
});
afterAll(async () => env.close());

describe('holds', () => {
  it('refuse a promotion into a held Space naming the hold, its owner and reason; --force passes it and the override records the hold', async () => {
    await fleet('sp', 2);
    const placed = await env.api.post('/hold', {
      Slug: 'db-migration',
      Space: 'sp-p1',
      Reason: 'schema migration running',
    });
    expect(placed.status).toBe(201);
    expect(placed.body).toMatchObject({
      Slug: 'db-migration',
      Scope: 'Space',
      SpaceSlug: 'sp-p1',
      Blocks: ['promote'],
      InForce: true,
      OwnerSlug: 'admin',
      Reason: 'schema migration running',
    });
    const event = env.bus.log.find((e) => e.detailType === 'Hold Placed' && e.detail.Slug === 'db-migration')!;
    expect(HoldEventDetail.parse(event.detail)).toMatchObject({ Scope: 'Space', Reason: 'schema migration running' });

    const refused = await env.api.post('/promote', { ChangeOrderID: 'sp-base/scale' });
    expect(refused.status).toBe(409);
    expect(refused.body.Message).toBe(
      "unable to promote to stage 'Production': hold 'db-migration' on space 'sp-p1' is in force (placed by admin): schema migration running; lift it (cub hold lift db-migration) or pass it with --force --force-reason",
    );
    expect((await env.api.get('/space/sp-base/change_order/scale')).body).toMatchObject({
      Promotions: [],
      PromotionOverrides: [],
    });
    // A dry run shows the hold as a gate that does not hold.
    const preview = await env.api.post('/promote', { ChangeOrderID: 'sp-base/scale', DryRun: true });
    expect(preview.body.Gates).toEqual([
      expect.objectContaining({ Prerequisite: 'Hold', Satisfied: false, SpaceSlug: 'sp-p1' }),
    ]);

    const forced = await env.api.post('/promote', {
      ChangeOrderID: 'sp-base/scale',
      Force: true,
      ForceReason: 'the migration is done, hold forgotten',
    });
    expect(forced.status).toBe(200);
    expect(forced.body).toMatchObject({ Forced: true, Landed: 2 });
    const co = (await env.api.get('/space/sp-base/change_order/scale')).body;
    expect(co.PromotionOverrides).toEqual([
      expect.objectContaining({
        Reason: 'the migration is done, hold forgotten',
        FailedGates: [
          expect.objectContaining({ Prerequisite: 'Hold', Message: expect.stringContaining("hold 'db-migration'") }),
        ],
      }),
    ]);
    // A plain variant promote of the held Space is refused too.
    const plain = await env.api.post('/promote', { Space: 'sp-p1' });
    expect(plain.status).toBe(409);
    expect(plain.body.Message).toBe(
      "unable to promote space 'sp-p1': hold 'db-migration' on space 'sp-p1' is in force (placed by admin): schema migration running; lift it (cub hold lift db-migration)",
    );
  });

  it('a workflow freeze holds its ChangeOrders until it expires on its own', async () => {
    await fleet('fz', 1);
    const placed = await env.api.post('/hold', {
      Slug: 'short-freeze',
      Workflow: 'fz-base/w',
      Reason: 'freeze',
      ExpiresIn: '2s',
    });
    expect(placed.body).toMatchObject({
      Scope: 'Workflow',
      ChangeWorkflowSlug: 'w',
      InForce: true,
      ExpiresAt: expect.any(String),
    });
    const refused = await env.api.post('/promote', { ChangeOrderID: 'fz-base/scale' });
    expect(refused.status).toBe(409);
    expect(refused.body.Message).toContain(
      `hold 'short-freeze' on this workflow is in force (placed by admin, until ${placed.body.ExpiresAt}): freeze`,
    );
    // Another workflow's ChangeOrders are not held by it.
    expect((await env.api.get('/hold/short-freeze')).body.InForce).toBe(true);
    while (Date.now() <= Date.parse(placed.body.ExpiresAt)) await new Promise((r) => setTimeout(r, 100));
    expect((await env.api.get('/hold/short-freeze')).body.InForce).toBe(false);
    expect((await env.api.post('/promote', { ChangeOrderID: 'fz-base/scale' })).status).toBe(200);
  });

  it('a hold blocking publish refuses a Release there, not a promotion; only its owner or an Admin lifts it', async () => {
    await fleet('pb', 1);
    const placed = await member.post('/hold', {
      Slug: 'no-release',
      Space: 'pb-p0',
      Reason: 'change window closed',
      Blocks: ['publish'],
    });
    expect(placed.status).toBe(201);
    expect((await env.api.post('/promote', { ChangeOrderID: 'pb-base/scale' })).status).toBe(200);
    const publish = await env.api.post('/space/pb-p0/release', { Revision: 'ChangeOrder:pb-base/scale' });
    expect(publish.status, publish.text).toBe(409);
    expect(publish.body.Message).toBe(
      "unable to publish a release in space 'pb-p0': hold 'no-release' on space 'pb-p0' is in force (placed by mia): change window closed; lift it (cub hold lift no-release)",
    );
    expect((await env.api.get('/space/pb-p0/release')).body).toEqual([]);
    // Another Member may not lift it; its owner may, once.
    const other = new Api(env.url, (await env.api.post('/user', { Slug: 'oli', Role: 'Member' })).body.Token);
    const denied = await other.post('/hold/no-release/lift', { Note: 'mine now' });
    expect(denied.status).toBe(403);
    expect(denied.body.Message).toBe("only the owner of hold 'no-release' or an Admin may lift it");
    const lifted = await member.post('/hold/no-release/lift', { Note: 'window open' });
    expect(lifted.status).toBe(200);
    expect(lifted.body).toMatchObject({
      InForce: false,
      LiftNote: 'window open',
      LiftedBy: member.caller?.UserID ?? expect.any(String),
    });
    expect((await member.post('/hold/no-release/lift', {})).status).toBe(409);
    const event = env.bus.log.find((e) => e.detailType === 'Hold Lifted' && e.detail.Slug === 'no-release')!;
    expect(HoldEventDetail.parse(event.detail)).toMatchObject({ LiftNote: 'window open' });
    const released = await env.api.post('/space/pb-p0/release', { Revision: 'ChangeOrder:pb-base/scale' });
    expect(released.status, released.text).toBe(201);
  });

  it('an organization hold is an Admin’s; bad holds are refused with what is wrong, and nothing is written', async () => {
    const before = (await env.api.get('/hold')).body.length;
    expect((await member.post('/hold', { Slug: 'org', Organization: true, Reason: 'r' })).body.Message).toBe(
      'only an Admin may place a hold on the whole organization',
    );
    for (const [body, message] of [
      [
        { Slug: 'two', Space: 'sp-p0', Organization: true, Reason: 'r' },
        'a hold covers one thing: give exactly one of Space (--space S), Workflow (--workflow S/wf) or Organization (--organization)',
      ],
      [
        { Slug: 'none', Reason: 'r' },
        'a hold covers one thing: give exactly one of Space (--space S), Workflow (--workflow S/wf) or Organization (--organization)',
      ],
      [
        { Slug: 'when', Space: 'sp-p0', Reason: 'r', ExpiresIn: 'soon' },
        "ExpiresIn 'soon' must be a duration such as 2h, 30m or 7d",
      ],
      [{ Slug: 'where', Space: 'nowhere', Reason: 'r' }, "space 'nowhere' not found"],
    ] as const) {
      const r = await env.api.post('/hold', body);
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(r.body.Message).toBe(message);
    }
    expect(
      (await env.api.post('/hold', { Slug: 'what', Space: 'sp-p0', Reason: 'r', Blocks: ['deploy'] })).status,
    ).toBe(400);
    expect((await env.api.post('/hold', { Slug: 'why', Space: 'sp-p0' })).status).toBe(400);
    expect((await env.api.get('/hold')).body).toHaveLength(before);
    const org = await env.api.post('/hold', { Slug: 'everything', Organization: true, Reason: 'incident' });
    expect(org.status).toBe(201);
    await fleet('og', 1);
    expect((await env.api.post('/promote', { ChangeOrderID: 'og-base/scale' })).body.Message).toContain(
      "hold 'everything' on the organization is in force (placed by admin): incident",
    );
    expect((await env.api.post('/hold', { Slug: 'everything', Organization: true, Reason: 'again' })).status).toBe(409);
    expect((await env.api.post('/hold/everything/lift', {})).status).toBe(200);
    expect((await env.api.post('/promote', { ChangeOrderID: 'og-base/scale' })).status).toBe(200);
  });
});

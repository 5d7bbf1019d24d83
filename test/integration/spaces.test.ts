import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dynamoClient } from '../../lib/store/table.ts';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env.close());

describe('auth and organization scope', () => {
  it('refuses a request without a token with 401', async () => {
    const r = await env.anonymous.get('/space');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ Code: 'Unauthorized', Message: expect.stringMatching(/bearer token/) });
  });

  it('refuses an unknown token with 401', async () => {
    const r = await fetch(`${env.url}/space`, { headers: { authorization: 'Bearer bt_nope' } });
    expect(r.status).toBe(401);
  });

  it("answers 404 for another organization's space, by slug and by ID, and never lists it", async () => {
    const mine = await env.api.post('/space', { Slug: 'private-space' });
    expect(mine.status).toBe(201);
    expect((await env.other.get('/space/private-space')).status).toBe(404);
    expect((await env.other.get(`/space/${mine.body.SpaceID}`)).status).toBe(404);
    expect(
      (await env.other.post(`/space/${mine.body.SpaceID}/unit`, { Slug: 'x', Data: deploymentYaml('x') })).status,
    ).toBe(404);
    expect((await env.other.get('/space')).body.map((s: any) => s.Slug)).not.toContain('private-space');
    // The same slug is free in another organization.
    expect((await env.other.post('/space', { Slug: 'private-space' })).status).toBe(201);
  });
});

describe('spaces', () => {
  it('creates, reads and lists a space with labels', async () => {
    const r = await env.api.post('/space', {
      Slug: 'acme-dev',
      Labels: { Stage: 'Development' },
      Annotations: { owner: 'team-a' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      Slug: 'acme-dev',
      Labels: { Stage: 'Development' },
      Annotations: { owner: 'team-a' },
      Version: 1,
      OrganizationID: env.api.caller!.OrganizationID,
    });
    const got = await env.api.get('/space/acme-dev');
    expect(got.body.SpaceID).toBe(r.body.SpaceID);
  });

  it('validates the body: unknown fields, bad slugs and bad labels are 400s naming the field, and nothing is written', async () => {
    const cases: [unknown, RegExp][] = [
      [{ Slug: 'ok-space', Colour: 'red' }, /unknown field 'Colour'/],
      [{ Slug: '-bad' }, /Slug: must be letters, digits/],
      [{ Slug: 'ok-space', Labels: { 'bad key!': 'x' } }, /Labels\.bad key!: must be a label key/],
      [{ Slug: 'ok-space', Labels: { Stage: 3 } }, /Labels\.Stage/],
      [{}, /Slug/],
    ];
    for (const [body, msg] of cases) {
      const r = await env.api.post('/space', body);
      expect(r.status).toBe(400);
      expect(r.body.Code).toBe('Invalid');
      expect(r.body.Message).toMatch(msg);
    }
    expect((await env.api.get('/space/ok-space')).status).toBe(404);
    const notJson = await env.api.call('POST', '/space', '{"Slug": ');
    expect(notJson.status).toBe(400);
    expect(notJson.body.Message).toMatch(/not JSON/);
  });

  it('refuses a duplicate slug with 409', async () => {
    await env.api.post('/space', { Slug: 'dup-space' });
    const r = await env.api.post('/space', { Slug: 'dup-space' });
    expect(r.status).toBe(409);
    expect(r.body.Message).toMatch(/slug 'dup-space' already exists/);
  });

  it('updates with the Version read, merge-patching labels, and refuses a stale Version with 409', async () => {
    const s = (await env.api.post('/space', { Slug: 'upd-space', Labels: { Stage: 'Staging', Region: 'eu' } })).body;
    const r = await env.api.patch('/space/upd-space', {
      Version: s.Version,
      Labels: { Region: null, Tier: 'gold' },
      Annotations: { 'code-freeze': 'true' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      Version: 2,
      Labels: { Stage: 'Staging', Tier: 'gold' },
      Annotations: { 'code-freeze': 'true' },
    });
    expect(r.body.Labels.Region).toBeUndefined();
    const stale = await env.api.patch('/space/upd-space', { Version: s.Version, Labels: { Tier: 'silver' } });
    expect(stale.status).toBe(409);
    expect((await env.api.get('/space/upd-space')).body.Labels.Tier).toBe('gold');
  });

  it('lets exactly one of two racing updates with the same Version land', async () => {
    const s = (await env.api.post('/space', { Slug: 'race-space' })).body;
    const results = await Promise.all(
      [1, 2, 3].map((i) => env.api.patch('/space/race-space', { Version: s.Version, Labels: { Winner: String(i) } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    const winner = results.find((r) => r.status === 200)!.body.Labels.Winner;
    expect((await env.api.get('/space/race-space')).body).toMatchObject({ Version: 2, Labels: { Winner: winner } });
  });

  it('renames a space, freeing the old slug', async () => {
    const s = (await env.api.post('/space', { Slug: 'old-name' })).body;
    expect((await env.api.patch('/space/old-name', { Version: s.Version, Slug: 'new-name' })).status).toBe(200);
    expect((await env.api.get('/space/new-name')).body.SpaceID).toBe(s.SpaceID);
    expect((await env.api.get('/space/old-name')).status).toBe(404);
    expect((await env.api.post('/space', { Slug: 'old-name' })).status).toBe(201);
  });

  it('lists with where, limit and continue', async () => {
    for (const [slug, stage] of [
      ['w-a', 'Production'],
      ['w-b', 'Production'],
      ['w-c', 'Production'],
      ['w-d', 'Staging'],
    ] as const) {
      await env.api.post('/space', { Slug: slug, Labels: { Stage: stage, Group: 'w' } });
    }
    const all = await env.api.get(
      `/space?where=${encodeURIComponent("Labels.Group = 'w' AND Labels.Stage = 'Production'")}`,
    );
    expect(all.body.map((s: any) => s.Slug)).toEqual(['w-a', 'w-b', 'w-c']);
    const p1 = await env.api.get(`/space?where=${encodeURIComponent("Labels.Group = 'w'")}&limit=3`);
    expect(p1.body.map((s: any) => s.Slug)).toEqual(['w-a', 'w-b', 'w-c']);
    const token = p1.headers.get('x-continue');
    expect(token).toBeTruthy();
    const p2 = await env.api.get(`/space?where=${encodeURIComponent("Labels.Group = 'w'")}&limit=3&continue=${token}`);
    expect(p2.body.map((s: any) => s.Slug)).toEqual(['w-d']);
    expect(p2.headers.get('x-continue')).toBeNull();
    const bad = await env.api.get(`/space?where=${encodeURIComponent("Labels.Group = 'w' AND Nope = 1")}`);
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toBe("where: unknown attribute 'Nope' for Space at position 24");
    expect((await env.api.get('/space?limit=0')).status).toBe(400);
    expect((await env.api.get('/space?bogus=1')).status).toBe(400);
  });

  it('selects spaces by their component through Component.Slug', async () => {
    const c = (await env.api.post('/component', { Slug: 'chat' })).body;
    await env.api.post('/space', { Slug: 'chat-base', ComponentID: 'chat' });
    const r = await env.api.get(`/space?where=${encodeURIComponent("Component.Slug = 'chat'")}`);
    expect(r.body.map((s: any) => s.Slug)).toEqual(['chat-base']);
    expect(r.body[0].ComponentID).toBe(c.ComponentID);
    expect(r.body[0].Component).toBeUndefined();
    expect((await env.api.get('/component')).body.map((x: any) => x.Slug)).toContain('chat');
  });

  it('refuses to delete a space with units unless recursive, then deletes it whole', async () => {
    await env.api.post('/space', { Slug: 'doomed' });
    await env.api.post('/space/doomed/unit', { Slug: 'web', Data: deploymentYaml('web') });
    const r = await env.api.del('/space/doomed');
    expect(r.status).toBe(409);
    expect(r.body.Message).toBe("space 'doomed' is not empty (1 unit); delete them first or use --recursive");
    const deleted = await env.api.del('/space/doomed?recursive=true');
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ DeletedUnits: ['web'], RemovedLinks: [] });
    expect((await env.api.get('/space/doomed')).status).toBe(404);
    // The slugs are free again, for the space and for a unit in a new space of that name.
    expect((await env.api.post('/space', { Slug: 'doomed' })).status).toBe(201);
    expect((await env.api.post('/space/doomed/unit', { Slug: 'web', Data: deploymentYaml('web') })).status).toBe(201);
  });

  it('counts a change workflow, a change order or an invocation as something a space holds: refused unless recursive, then deleted with it', async () => {
    await env.api.post('/space', { Slug: 'flows' });
    expect(
      (
        await env.api.post('/space/flows/change_workflow', {
          Slug: 'w',
          Stages: [{ Name: 'prod', WhereSpace: "Labels.Stage = 'Production'" }],
        })
      ).status,
    ).toBe(201);
    const cub = cubAt(env.url, env.api.token!);
    const refused = await cub(['space', 'delete', 'flows']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(
      "space 'flows' is not empty (1 change workflow); delete them first or use --recursive",
    );
    expect((await env.api.get('/space/flows/change_workflow/w')).status).toBe(200);
    // A base whose change order is all that is left of the change: refused, naming it (and its three tags).
    await env.api.post('/space', { Slug: 'cobase' });
    expect((await env.api.post('/space/cobase/unit', { Slug: 'web', Data: deploymentYaml('web') })).status).toBe(201);
    expect(
      (await env.api.post('/space/cobase/change_order', { Slug: 'ship', ChangeWorkflowID: 'flows/w' })).status,
    ).toBe(201);
    expect((await env.api.del('/space/cobase/unit/web')).status).toBeLessThan(300);
    const base = await env.api.del('/space/cobase');
    expect(base.status).toBe(409);
    expect(base.body.Message).toBe(
      "space 'cobase' is not empty (3 tags, 1 change order); delete them first or use --recursive",
    );
    expect((await env.api.get('/space/cobase/change_order/ship')).status).toBe(200);
    // Recursive: the space goes with what it holds; the slugs are free again, and the organization's list no longer has the change order.
    const gone = await cub(['space', 'delete', 'cobase', '--recursive']);
    expect(gone.code, gone.stderr).toBe(0);
    expect((await env.api.get('/space/cobase')).status).toBe(404);
    expect((await env.api.get('/change_order')).body.map((c: { Slug: string }) => c.Slug)).not.toContain('ship');
    // Nor has the organization's index by slug.
    const client = dynamoClient(inject('dynamoEndpoint'));
    const entries = await client.send(
      new QueryCommand({
        TableName: env.table,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :p AND begins_with(gsi1sk, :s)',
        ExpressionAttributeValues: {
          ':p': { S: `$baton#OrganizationID_${env.api.caller!.OrganizationID}` },
          ':s': { S: '$changeorder_1#Slug_ship#' },
        },
      }),
    );
    client.destroy();
    expect(entries.Items).toEqual([]);
    // An invocation kept in a Space of its own, likewise.
    await env.api.post('/space', { Slug: 'calls' });
    const made = await cub([
      'invocation',
      'create',
      '--space',
      'calls',
      'scale',
      'Kubernetes/YAML',
      '--',
      'set-replicas',
      '3',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect((await env.api.del('/space/calls')).body.Message).toBe(
      "space 'calls' is not empty (1 invocation); delete them first or use --recursive",
    );
    expect((await env.api.del('/space/calls?recursive=true')).status).toBe(200);
    expect((await env.api.post('/space', { Slug: 'calls' })).status).toBe(201);
    expect(
      (await cub(['invocation', 'create', '--space', 'calls', 'scale', 'Kubernetes/YAML', '--', 'set-replicas', '3']))
        .code,
    ).toBe(0);
    expect((await env.api.del('/space/flows?recursive=true')).status).toBe(200);
    await env.api.post('/space', { Slug: 'flows' });
    expect(
      (
        await env.api.post('/space/flows/change_workflow', {
          Slug: 'w',
          Stages: [{ Name: 'prod', WhereSpace: "Labels.Stage = 'Production'" }],
        })
      ).status,
    ).toBe(201);
    await env.api.post('/space', { Slug: 'cobase' });
    expect(
      (await env.api.post('/space/cobase/change_order', { Slug: 'ship', ChangeWorkflowID: 'flows/w' })).status,
    ).toBe(201);
  });

  it('answers 404 for an unknown route and 405 for a wrong method', async () => {
    expect((await env.api.get('/nowhere')).status).toBe(404);
    const r = await env.api.call('PUT', '/space');
    expect(r.status).toBe(405);
  });
});

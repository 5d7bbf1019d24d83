import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import { GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import type { Store } from '../../lib/ports/store.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';
import { Api, deploymentYaml } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

/**
 * What a request asks of DynamoDB (issue 15: fewer requests per Unit, reads that don't grow with
 * history): counted by command and by what each request touches, so a read that comes back per Space,
 * per Unit or per Release shows here.
 */
const requests: { command: string; keys: string[]; index?: string; limit?: number; projection?: string[] }[] = [];
let counting = false;
const client = dynamoClient(inject('dynamoEndpoint'));
client.middlewareStack.add(
  (next, context) => async (args) => {
    if (counting) {
      type Projected = { ProjectionExpression?: string; ExpressionAttributeNames?: Record<string, string> };
      const input = args.input as Projected & {
        Key?: Record<string, unknown>;
        ExpressionAttributeValues?: Record<string, unknown>;
        RequestItems?: Record<string, Projected & { Keys?: Record<string, unknown>[] }>;
        Limit?: number;
        IndexName?: string;
      };
      const values = (o?: Record<string, unknown>) =>
        Object.values(o ?? {})
          .map(String)
          .join(' ');
      const keys = input.RequestItems
        ? Object.values(input.RequestItems).flatMap((r) => (r.Keys ?? []).map(values))
        : [values(input.Key ?? input.ExpressionAttributeValues)];
      // The attributes asked for, by name (none: the whole item).
      const p: Projected = input.RequestItems ? (Object.values(input.RequestItems)[0] ?? {}) : input;
      const projection = p.ProjectionExpression?.split(',').map(
        (a) => p.ExpressionAttributeNames?.[a.trim()] ?? a.trim(),
      );
      requests.push({
        command: String(context.commandName).replace('Command', ''),
        keys,
        index: input.IndexName,
        limit: input.Limit,
        projection,
      });
    }
    return next(args);
  },
  { step: 'initialize', name: 'countPromoteRequests' },
);
let server: LocalServer;
let api: Api;
let store: Store;
let table: string;
let orgId: string;

beforeAll(async () => {
  table = `promreq-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  store = dynamoStore(client, table);
  const { deps } = localDeps(store);
  server = await startServer(deps, { checkAnswers: true });
  const org = await createOrganization(deps, `promreq-${table}`);
  orgId = org.caller.OrganizationID;
  api = new Api(server.url, org.token);
  // A base of 3 Units, 1 dev and 5 prod variants.
  const units = ['a', 'b', 'c'].map((s) => ({ Slug: s, Data: deploymentYaml(s) }));
  expect((await api.post('/variant/upload', { Component: 'shop', Variant: 'base', Units: units })).status).toBe(201);
  expect((await api.post('/variant', { Name: 'dev', UpstreamSpaceID: 'shop-base', Stage: 'Development' })).status).toBe(
    201,
  );
  for (let i = 0; i < 5; i++)
    expect(
      (await api.post('/variant', { Name: `p${i}`, UpstreamSpaceID: 'shop-base', Stage: 'Production' })).status,
    ).toBe(201);
  expect(
    (
      await api.post('/space/shop-base/change_workflow', {
        Slug: 'two',
        Stages: [
          { Name: 'dev', WhereSpace: "Labels.Stage = 'Development'" },
          { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'" },
        ],
      })
    ).status,
  ).toBe(201);
  expect(
    (await api.post('/space/shop-base/function/invoke', { FunctionName: 'set-replicas', Arguments: ['4'] })).status,
  ).toBe(200);
  expect(
    (await api.post('/space/shop-base/change_order', { Slug: 'scale', ChangeWorkflowID: 'shop-base/two' })).status,
  ).toBe(201);
  expect((await api.post('/promote', { ChangeOrderID: 'shop-base/scale' })).status).toBe(200);
});
afterAll(async () => server.close());

/** A list read a page at a time to its end (each page within `limit`), its items as `show` names them. */
async function allPages<T>(
  path: string,
  limit: number,
  show: (r: { body: T[] }) => (string | number)[],
  where?: string,
): Promise<(string | number)[]> {
  const out: (string | number)[] = [];
  let token: string | null = null;
  do {
    const r = await api.get(
      `${path}?limit=${limit}${where ? `&where=${encodeURIComponent(where)}` : ''}${token ? `&continue=${token}` : ''}`,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.length).toBeLessThanOrEqual(limit);
    out.push(...show(r));
    token = r.headers.get('x-continue');
  } while (token);
  return out;
}

describe('a request on a /space/{space_id}/… route', () => {
  it('finds its Space once: the access check and the operation share it', async () => {
    const slugReads = () =>
      requests.filter((q) => q.command === 'GetItem' && q.keys.some((k) => k.includes('$slug_1#Kind_space#Slug_')));
    const spaceReads = () =>
      requests.filter((q) => q.command === 'GetItem' && q.keys.some((k) => k.includes('$space_1#SpaceID_')));
    for (const [what, call] of [
      ['GET a Unit', () => api.get('/space/shop-base/unit/a')],
      ['GET the Space', () => api.get('/space/shop-base')],
      ['invoke a function', () => api.post('/space/shop-p0/function/invoke', { FunctionName: 'get-placeholders' })],
    ] as const) {
      requests.length = 0;
      counting = true;
      const r = await call();
      counting = false;
      expect(r.status, `${what}: ${r.text}`).toBe(200);
      expect([what, slugReads().length, spaceReads().length]).toEqual([what, 1, 1]);
    }
  });
});

describe('a promotion into a stage of 5 Spaces × 3 Units', () => {
  it('reads each Space once, every head and the upstream side in one batch, resolves space/slug in three requests, and leaves the publish marks unread', async () => {
    requests.length = 0;
    counting = true;
    const r = await api.post('/promote', { ChangeOrderID: 'shop-base/scale' });
    counting = false;
    expect(r.status, r.text).toBe(200);
    expect(r.body.Spaces.map((s: { Action: string }) => s.Action)).toEqual(Array(5).fill('Promote'));
    expect(r.body.Spaces.flatMap((s: { Units: { Action: string }[] }) => s.Units.map((u) => u.Action))).toEqual(
      Array(15).fill('Upgrade'),
    );
    const of = (command: string, part: string) =>
      requests.filter((q) => q.command === command && q.keys.some((k) => k.includes(part)));
    // The Space with the change order's slug (2 keys); then the upstream revisions the merges read (each base Unit's 1 and 2) with the head data of all 15 Units.
    const batches = requests.filter((q) => q.command === 'BatchGetItem');
    expect(batches.map((b) => b.keys.length)).toEqual([2, 6 + 15]);
    expect(batches[0]!.keys.map((k) => k.split(' ')[1]!.split('#')[0])).toEqual(['$space_1', '$slug_1']);
    // Each Space's Units and Links listed once, and the base's (the upstream side) once.
    expect(of('Query', '$unit_1#UnitID_')).toHaveLength(6);
    expect(of('Query', '$link_1#LinkID_')).toHaveLength(6);
    // `shop-base/scale`: the Space's slug, then the Space with the change order's slug in one request, then the change order.
    expect(of('GetItem', '$slug_1#Kind_space#Slug_shop-base')).toHaveLength(1);
    expect(of('GetItem', '$changeorder_1#ChangeOrderID_')).toHaveLength(1);
    expect(
      requests.filter((q) => q.command === 'GetItem' && q.keys.some((k) => k.includes('$slug_1#Kind_changeorder'))),
    ).toHaveLength(0);
    // Start and end marks only: no gate here reads the publish marks.
    expect(of('Query', '$mark_1#UnitID_')).toHaveLength(2);
    // The lease; one transaction per Space (each Unit's revision, head, marks and cursor, then the Space's progress); the record.
    expect(requests.filter((q) => q.command === 'TransactWriteItems')).toHaveLength(1 + 5 + 1);
  });
});

describe('the change orders a Space report re-evaluates', () => {
  it('are read by the Space’s progress, not the organization’s ChangeOrders: those that reached it, in flight only when asked', async () => {
    // 'scale' went through both Stages above: Completed. One more in flight, one aborted, one elsewhere.
    expect(
      (await api.post('/space/shop-base/function/invoke', { FunctionName: 'set-replicas', Arguments: ['5'] })).status,
    ).toBe(200);
    expect(
      (await api.post('/space/shop-base/change_order', { Slug: 'next', ChangeWorkflowID: 'shop-base/two' })).status,
    ).toBe(201);
    expect(
      (await api.post('/space/shop-base/change_order', { Slug: 'dropped', ChangeWorkflowID: 'shop-base/two' })).status,
    ).toBe(201);
    expect((await api.patch('/space/shop-base/change_order/dropped', { AbortedReason: 'superseded' })).status).toBe(
      200,
    );
    expect(
      (
        await api.post('/variant/upload', {
          Component: 'other',
          Variant: 'base',
          Units: [{ Slug: 'x', Data: deploymentYaml('x') }],
        })
      ).status,
    ).toBe(201);
    expect((await api.post('/space/other-base/change_order', { Slug: 'own' })).status).toBe(201);
    const p3 = (await api.get('/space/shop-p3')).body.SpaceID as string;
    const base = (await api.get('/space/shop-base')).body.SpaceID as string;
    const slugs = (cos: { co: { Slug: string } }[]) => cos.map((c) => c.co.Slug).sort();
    // A ChangeOrder reaches its own Space when it is made, and each Space it was promoted into (none released there yet).
    expect(slugs(await store.changeOrdersReaching(orgId, base, { toRelease: true }))).toEqual([
      'dropped',
      'next',
      'scale',
    ]);
    expect(slugs(await store.changeOrdersReaching(orgId, p3, { toRelease: true }))).toEqual(['scale']);
    expect((await store.changeOrdersReaching(orgId, p3, { toRelease: true }))[0]!.progress).toMatchObject({
      SpaceID: p3,
      BaseSpaceID: base,
      ResolvedAt: expect.any(String),
    });
    expect(await store.changeOrdersReaching(orgId, p3, { inFlight: true })).toEqual([]);
    requests.length = 0;
    counting = true;
    const inFlight = await store.changeOrdersReaching(orgId, base, { inFlight: true });
    counting = false;
    expect(slugs(inFlight)).toEqual(['next']);
    // The organization's ChangeOrders in flight ('next' and 'own': 'scale' left them when it completed, 'dropped' when
    // it was aborted), their progress in the Space by key, the one that reached it whole: no read of the
    // organization's ChangeOrders, however many have finished.
    expect(requests.map((r) => `${r.command} ${r.keys.length}`)).toEqual([
      'Query 1',
      'BatchGetItem 2',
      'BatchGetItem 1',
    ]);
    expect(requests[0]!.index).toBe('gsi2');
    expect(requests[0]!.keys[0]).toContain('$changeorder_1#');
    const flying = await client.send(
      new QueryCommand({
        TableName: table,
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :p AND begins_with(gsi2sk, :s)',
        ExpressionAttributeValues: { ':p': { S: `$baton#OrganizationID_${orgId}` }, ':s': { S: '$changeorder_1#' } },
      }),
    );
    const ids = new Map((await store.changeOrdersOf(orgId)).map((c) => [c.ChangeOrderID, c.Slug]));
    expect(flying.Items!.map((i) => ids.get(i.ChangeOrderID!.S!)).sort()).toEqual(['next', 'own']);
  });

  it('the organization’s list derives only those its where can keep: the same answer, without the Completed or aborted ones’ progress', async () => {
    const where = "State IN ('New', 'InProgress', 'Resolved', 'Released') AND Completed = false";
    const slugs = (cos: { Slug: string }[]) => cos.map((c) => c.Slug).sort();
    const everything = (await api.get('/change_order')).body as { Slug: string; State: string; Completed: boolean }[];
    expect(everything.map((c) => `${c.Slug}:${c.State}:${c.Completed}`).sort()).toEqual([
      'dropped:Aborted:false',
      'next:New:false',
      'own:New:false',
      'scale:Resolved:true',
    ]);
    requests.length = 0;
    counting = true;
    const inFlight = await api.get(`/change_order?where=${encodeURIComponent(where)}`);
    counting = false;
    expect(inFlight.body.map((c: { Slug: string }) => c.Slug).sort()).toEqual(['next', 'own']);
    // Only their progress is read: one query each.
    expect(
      requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$progress_1#SpaceID_'))),
    ).toHaveLength(2);
    expect(slugs(await store.changeOrdersOf(orgId, { notCompleted: true }))).toEqual(['dropped', 'next', 'own']);
    expect(slugs(await store.changeOrdersOf(orgId, { notAborted: true }))).toEqual(['next', 'own', 'scale']);
  });
});

describe('a Release by its number', () => {
  it('costs the same reads with one Release or many, and is still found when its Tag is gone', async () => {
    expect((await api.post('/space/shop-base/target', { Slug: 'cluster' })).status).toBe(201);
    expect((await api.post('/space', { Slug: 'rels', ReleaseTargetID: 'shop-base/cluster' })).status).toBe(201);
    expect(
      (await api.post('/space/rels/unit', { Slug: 'a', Data: deploymentYaml('a', { namespace: 'prod' }) })).status,
    ).toBe(201);
    for (let n = 5; n < 15; n++) {
      expect(
        (
          await api.post('/space/rels/function/invoke', {
            FunctionName: 'set-replicas',
            Arguments: [String(n)],
            UnitIDs: ['a'],
          })
        ).status,
      ).toBe(200);
      const rel = await api.post('/space/rels/release', {});
      expect(rel.status, rel.text).toBe(201);
    }
    requests.length = 0;
    counting = true;
    const third = await api.get('/space/rels/release/3');
    counting = false;
    expect(third.status, third.text).toBe(200);
    expect(third.body).toMatchObject({ ReleaseNum: 3, Slug: 'release-3' });
    // Past the caller and the Space: the Tag's claim, the Tag, the Release — no query of the Space's Releases.
    expect(
      requests.filter((q) => q.keys.some((k) => k.includes('$release_1#ReleaseID_') && q.command === 'Query')),
    ).toHaveLength(0);
    expect(requests.filter((q) => q.keys.some((k) => k.includes('$slug_1#Kind_tag#Slug_release-3')))).toHaveLength(1);
    // The Tag deleted, the Release is still found (by reading the Releases).
    expect((await api.del('/space/rels/tag/release-3')).status).toBe(204);
    expect((await api.get('/space/rels/release/3')).body.ReleaseID).toBe(third.body.ReleaseID);
    expect((await api.get('/space/rels/release/11')).status).toBe(404);
    expect((await api.get('/space/rels/release/99')).status).toBe(404);
  });
});

describe("a Space's Releases, a page at a time", () => {
  const nums = (r: { body: { ReleaseNum: number }[] }) => r.body.map((x) => x.ReleaseNum);
  it('page newest first with DynamoDB’s cursor, reading only the page’s Releases; a where reads on until the page is full', async () => {
    // 'rels' has Releases 1..10 (above).
    const first = await api.get('/space/rels/release?limit=4');
    expect(nums(first)).toEqual([10, 9, 8, 7]);
    requests.length = 0;
    counting = true;
    const second = await api.get(`/space/rels/release?limit=4&continue=${first.headers.get('x-continue')}`);
    counting = false;
    expect(nums(second)).toEqual([6, 5, 4, 3]);
    // One query of the Releases' index by number (4 and one more): no read of the Space's Releases by ID, no batch read.
    expect(
      requests
        .filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$release_1')))
        .map((q) => [q.index, q.limit]),
    ).toEqual([['gsi1', 5]]);
    expect(requests.filter((q) => q.command === 'BatchGetItem')).toEqual([]);
    const last = await api.get(`/space/rels/release?limit=4&continue=${second.headers.get('x-continue')}`);
    expect(nums(last)).toEqual([2, 1]);
    expect(last.headers.get('x-continue')).toBeNull();
    // A page that ends the list exactly says so.
    expect((await api.get('/space/rels/release?limit=10')).headers.get('x-continue')).toBeNull();
    // Filtered: read on until the page is full.
    const odd = await api.get(`/space/rels/release?limit=2&where=${encodeURIComponent('ReleaseNum < 6')}`);
    expect(nums(odd)).toEqual([5, 4]);
    expect(
      nums(
        await api.get(
          `/space/rels/release?limit=2&where=${encodeURIComponent('ReleaseNum < 6')}&continue=${odd.headers.get('x-continue')}`,
        ),
      ),
    ).toEqual([3, 2]);
    // The whole list, unpaged, is the same order.
    expect(nums(await api.get('/space/rels/release'))).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    // cub pages the same way: `-q` prints the numbers, the next page's flag goes to standard error.
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['release', 'list', '--space', 'rels', '--limit', '3', '-q']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toBe('10\n9\n8\n');
    const token = /more: --continue (\S+)/.exec(one.stderr)?.[1];
    expect(token).toBeTruthy();
    expect((await cub(['release', 'list', '--space', 'rels', '--limit', '3', '--continue', token!, '-q'])).stdout).toBe(
      '7\n6\n5\n',
    );
    const bad = await cub(['release', 'list', '--space', 'rels', '--limit', '3', '--continue', 'bm90LWEtY3Vyc29y']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('continue token is not one this list issued');
    // Another list's token, or one made up, is refused.
    const units = await api.get('/space/shop-base/unit?limit=1');
    expect((await api.get(`/space/rels/release?limit=2&continue=${units.headers.get('x-continue')}`)).status).toBe(400);
    expect((await api.get('/space/rels/release?limit=2&continue=bm90LWEtY3Vyc29y')).status).toBe(400);
    expect((await api.get(`/space/shop-base/release?limit=2&continue=${first.headers.get('x-continue')}`)).status).toBe(
      400,
    );
  });
  it('of a second Space page on their own, from its own part of the index', async () => {
    expect((await api.post('/space', { Slug: 'old-rels', ReleaseTargetID: 'shop-base/cluster' })).status).toBe(201);
    expect(
      (await api.post('/space/old-rels/unit', { Slug: 'a', Data: deploymentYaml('a', { namespace: 'prod' }) })).status,
    ).toBe(201);
    for (let n = 2; n < 5; n++) {
      expect(
        (
          await api.post('/space/old-rels/function/invoke', {
            FunctionName: 'set-replicas',
            Arguments: [String(n)],
            UnitIDs: ['a'],
          })
        ).status,
      ).toBe(200);
      expect((await api.post('/space/old-rels/release', {})).status).toBe(201);
    }
    const all = (await api.get('/space/old-rels/release')).body.map((r: { ReleaseNum: number }) => r.ReleaseNum);
    expect(all).toHaveLength(3);
    expect(all).toEqual([...all].sort((x: number, y: number) => y - x));
    const paged = await api.get('/space/old-rels/release?limit=2');
    expect(nums(paged)).toEqual(all.slice(0, 2));
    expect(nums(await api.get(`/space/old-rels/release?limit=2&continue=${paged.headers.get('x-continue')}`))).toEqual(
      all.slice(2),
    );
  });
});

describe("a Space's attestations, a page at a time", () => {
  type Seen = { AttestationID: string; RevokedBy?: string; RevokedAttestationID?: string };
  const ids = (r: { body: Seen[] }) => r.body.map((a) => `${a.AttestationID}${a.RevokedBy ? `<-${a.RevokedBy}` : ''}`);
  const pages = (space: string, limit: number) => allPages(`/space/${space}/attestation`, limit, ids);

  it('page newest first as the whole list does, revocations shown on what they revoke, reading only the page', async () => {
    for (let i = 0; i < 5; i++)
      expect((await api.post('/space/rels/attestation', { Type: 'Approval', All: true })).status).toBe(201);
    const before = (await api.get('/space/rels/attestation')).body as Seen[];
    const revoked = before[2]!.AttestationID;
    expect((await api.post(`/space/rels/attestation/${revoked}/revoke`, {})).status).toBeLessThan(300);
    const whole = await api.get('/space/rels/attestation');
    expect(whole.body).toHaveLength(6);
    expect(ids(whole).filter((x) => x.includes('<-'))).toEqual([
      `${revoked}<-${(whole.body as Seen[]).find((a) => a.RevokedAttestationID === revoked)!.AttestationID}`,
    ]);
    expect(await pages('rels', 2)).toEqual(ids(whole));
    expect(await pages('rels', 4)).toEqual(ids(whole));
    const first = await api.get('/space/rels/attestation?limit=2');
    requests.length = 0;
    counting = true;
    const second = await api.get(`/space/rels/attestation?limit=2&continue=${first.headers.get('x-continue')}`);
    counting = false;
    expect(ids(second)).toEqual(ids(whole).slice(2, 4));
    // One query of the attestations' index by time and one of the Space's revocations; no read of the Space's attestations by ID.
    expect(
      requests
        .filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$attestation_1')))
        .map((q) => q.index),
    ).toEqual(['gsi1', 'gsi2']);
    expect(requests.filter((q) => q.command === 'BatchGetItem')).toEqual([]);
    expect(
      (await api.get(`/space/rels/attestation?limit=2&continue=${first.headers.get('x-continue')!.slice(0, -4)}xxxx`))
        .status,
    ).toBe(400);
    // cub pages the same way.
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['attestation', 'list', '--space', 'rels', '--limit', '4', '-o', 'json']);
    expect(one.code, one.stderr).toBe(0);
    expect((JSON.parse(one.stdout) as Seen[]).map((a) => a.AttestationID)).toEqual(
      (whole.body as Seen[]).slice(0, 4).map((a) => a.AttestationID),
    );
    const table = await cub(['attestation', 'list', '--space', 'rels', '--limit', '4']);
    const token = /more: --continue (\S+)/.exec(table.stderr)?.[1];
    const rest = await cub([
      'attestation',
      'list',
      '--space',
      'rels',
      '--limit',
      '4',
      '--continue',
      token!,
      '-o',
      'json',
    ]);
    expect((JSON.parse(rest.stdout) as Seen[]).map((a) => a.AttestationID)).toEqual(
      (whole.body as Seen[]).slice(4).map((a) => a.AttestationID),
    );
  });
});

describe('an attestation by its ID', () => {
  it('is read by key with whether it was revoked, not found among the Space’s attestations', async () => {
    const whole = (await api.get('/space/rels/attestation')).body as {
      AttestationID: string;
      RevokedBy?: string;
      RevokedAttestationID?: string;
    }[];
    const revoked = whole.find((a) => a.RevokedBy)!;
    const revocation = whole.find((a) => a.RevokedAttestationID)!;
    requests.length = 0;
    counting = true;
    const one = await api.get(`/space/rels/attestation/${revoked.AttestationID.toUpperCase()}`);
    counting = false;
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual({ ...revoked, SpaceSlug: 'rels' });
    expect(one.body.RevokedBy).toBe(revocation.AttestationID);
    // The attestation by key, and its own revocation by the index of revocations: never the Space's attestations.
    const queries = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$attestation_1')));
    expect(queries.map((q) => q.index)).toEqual(['gsi2']);
    expect(queries[0]!.keys[0]).toContain(`Revokes_${revoked.AttestationID}`);
    expect(
      requests
        .filter(
          (q) =>
            q.command === 'BatchGetItem' && q.keys.some((k) => k.includes(`AttestationID_${revoked.AttestationID}`)),
        )
        .map((q) => q.keys.length),
    ).toEqual([1]);
    expect((await api.get(`/space/rels/attestation/${revocation.AttestationID}`)).body).toEqual({
      ...revocation,
      SpaceSlug: 'rels',
    });
    const missing = await api.get('/space/rels/attestation/00000000-0000-0000-0000-000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.Message).toBe("attestation '00000000-0000-0000-0000-000000000000' not found in space 'rels'");
    // The ID of another Space's attestation is not found in this one.
    expect((await api.get(`/space/shop-base/attestation/${revoked.AttestationID}`)).status).toBe(404);
  });
});

describe("the organization's ChangeOrders, a page at a time", () => {
  type Seen = { ChangeOrderID: string; Slug: string; SpaceSlug: string };
  const names = (r: { body: Seen[] }) => r.body.map((c) => `${c.SpaceSlug}/${c.Slug}`);
  const pages = (limit: number, where?: string) => allPages('/change_order', limit, names, where);

  it('page in slug order with DynamoDB’s cursor, one slug in two Spaces kept apart, deriving only the page', async () => {
    for (const [space, slug] of [
      ['shop-base', 'zeta'],
      ['shop-p0', 'same'],
      ['shop-base', 'same'],
      ['shop-p1', 'alpha'],
      ['shop-p2', 'same'],
    ]) {
      expect(
        (await api.post(`/space/${space}/change_order`, { Slug: slug, ChangeWorkflowID: 'shop-base/two' })).status,
      ).toBe(201);
    }
    const whole = await api.get('/change_order');
    const all = names(whole);
    const slugs = (whole.body as Seen[]).map((c) => c.Slug);
    expect(slugs).toEqual([...slugs].sort());
    expect(all.filter((n) => n.endsWith('/same')).sort()).toEqual(['shop-base/same', 'shop-p0/same', 'shop-p2/same']);
    // The three of one slug by ID, as a page is.
    const same = (whole.body as Seen[]).filter((c) => c.Slug === 'same').map((c) => c.ChangeOrderID);
    expect(same).toEqual([...same].sort());
    for (const limit of [1, 2, 4]) expect(await pages(limit)).toEqual(all);
    // A page reads one page of the organization's index and derives only its ChangeOrders (and the one after).
    const first = await api.get('/change_order?limit=2');
    requests.length = 0;
    counting = true;
    const second = await api.get(`/change_order?limit=2&continue=${first.headers.get('x-continue')}`);
    counting = false;
    expect(names(second)).toEqual(all.slice(2, 4));
    // One query of the organization's index by slug (2 and one more), no batch read; each of those derived by its progress.
    const byOrg = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$changeorder_1')));
    expect(byOrg.map((q) => [q.index, q.limit])).toEqual([['gsi1', 3]]);
    expect(requests.filter((q) => q.command === 'BatchGetItem')).toEqual([]);
    expect(requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$progress_1')))).toHaveLength(
      3,
    );
    // A where on the stored ChangeOrder is applied by the database; the rest is read on until the page is full.
    const open = names(await api.get(`/change_order?where=${encodeURIComponent('Completed = false')}`));
    expect(await pages(2, 'Completed = false')).toEqual(open);
    const fresh = names(await api.get(`/change_order?where=${encodeURIComponent("State = 'New'")}`));
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh).not.toContain('shop-base/scale');
    expect(await pages(1, "State = 'New'")).toEqual(fresh);
    // Another list's token, or one made up, is refused.
    const units = await api.get('/space/shop-base/unit?limit=1');
    for (const token of [
      units.headers.get('x-continue'),
      'bm90LWEtY3Vyc29y',
      first.headers.get('x-continue')!.slice(0, -4) + 'xxxx',
    ]) {
      const bad = await api.get(`/change_order?limit=2&continue=${token}`);
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.Message).toBe('continue token is not one this list issued');
    }
    // cub pages the same way.
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['changeorder', 'list', '--limit', '3', '-o', 'json']);
    expect(one.code, one.stderr).toBe(0);
    expect((JSON.parse(one.stdout) as Seen[]).map((c) => `${c.SpaceSlug}/${c.Slug}`)).toEqual(all.slice(0, 3));
    const table = await cub(['changeorder', 'list', '--limit', '3']);
    const token = /more: --continue (\S+)/.exec(table.stderr)?.[1];
    expect(token).toBeTruthy();
    const rest = await cub(['changeorder', 'list', '--limit', '3', '--continue', token!, '-o', 'json']);
    expect((JSON.parse(rest.stdout) as Seen[]).map((c) => `${c.SpaceSlug}/${c.Slug}`)).toEqual(all.slice(3, 6));
  });
});

describe("the organization's Releases, a page at a time", () => {
  type Seen = { ReleaseNum: number; SpaceSlug: string; Slug: string };
  const names = (r: { body: Seen[] }) => r.body.map((x) => `${x.SpaceSlug}/${x.ReleaseNum}`);
  const pages = (limit: number, where?: string) => allPages('/release', limit, names, where);

  it('page Space by Space in slug order, each newest first, reading only the Spaces and Releases the page needs', async () => {
    const whole = await api.get('/release');
    const all = names(whole);
    // 'old-rels' (3) and 'rels' (10) have Releases (above), each newest first, as their own lists; no other Space has any.
    const own = async (space: string) => names(await api.get(`/space/${space}/release`));
    expect(all).toEqual([...(await own('old-rels')), ...(await own('rels'))]);
    expect(all).toHaveLength(13);
    expect((whole.body as Seen[])[0]!.Slug).toBe(`release-${(whole.body as Seen[])[0]!.ReleaseNum}`);
    for (const limit of [1, 2, 3, 4, 13, 20]) expect(await pages(limit)).toEqual(all);
    expect(await pages(2, 'ReleaseNum < 3')).toEqual(all.filter((n) => Number(n.split('/')[1]) < 3));
    // A page inside one Space reads that Space's part of the index by number, no Space's Releases whole.
    const first = await api.get('/release?limit=4');
    expect(names(first)).toEqual(all.slice(0, 4));
    requests.length = 0;
    counting = true;
    const second = await api.get(`/release?limit=4&continue=${first.headers.get('x-continue')}`);
    counting = false;
    expect(names(second)).toEqual(all.slice(4, 8));
    // One query of the Space's Releases by number (the page and one more), no batch read, no Space's Releases whole.
    const releases = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$release_1')));
    expect(releases.map((q) => [q.index, q.limit])).toEqual([['gsi1', 5]]);
    expect(requests.filter((q) => q.command === 'BatchGetItem')).toEqual([]);
    // Another list's token, or one made up, is refused.
    const spaceToken = (await api.get('/space/rels/release?limit=2')).headers.get('x-continue');
    const coToken = (await api.get('/change_order?limit=1')).headers.get('x-continue');
    // One naming a Space with another Space's cursor in it.
    const forged = Buffer.from(
      JSON.stringify({
        l: 'releases',
        s: (await api.get('/space/old-rels')).body.SpaceID,
        g: 'old-rels',
        r: spaceToken,
      }),
    ).toString('base64url');
    for (const token of [spaceToken, coToken, 'bm90LWEtY3Vyc29y', forged]) {
      const bad = await api.get(`/release?limit=2&continue=${token}`);
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.Message).toBe('continue token is not one this list issued');
    }
    // cub lists every Space's without --space, and pages the same way.
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['release', 'list', '--limit', '5']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^NUM\s+SPACE/);
    expect(one.stdout.trim().split('\n')).toHaveLength(6);
    const token = /more: --continue (\S+)/.exec(one.stderr)?.[1];
    expect(token).toBeTruthy();
    const rest = await cub(['release', 'list', '--limit', '5', '--continue', token!, '-o', 'json']);
    expect((JSON.parse(rest.stdout) as Seen[]).map((x) => `${x.SpaceSlug}/${x.ReleaseNum}`)).toEqual(all.slice(5, 10));
  });

  it('resume at the next Space by slug when the token’s Space is gone', async () => {
    const first = await api.get('/release?limit=1');
    const oldest = names(await api.get('/space/old-rels/release'));
    expect(names(first)).toEqual(oldest.slice(0, 1));
    expect((await api.del('/space/old-rels?recursive=true')).status).toBeLessThan(300);
    const next = await api.get(`/release?limit=2&continue=${first.headers.get('x-continue')}`);
    expect(next.status, next.text).toBe(200);
    expect(names(next)).toEqual(['rels/10', 'rels/9']);
  });
});

describe('revisions, a page at a time', () => {
  type Seen = { RevisionNum: number; UnitSlug?: string };
  const nums = (r: { body: Seen[] }) =>
    r.body.map((x) => (x.UnitSlug ? `${x.UnitSlug}/${x.RevisionNum}` : x.RevisionNum));
  const pages = (path: string, limit: number, where?: string) => allPages(path, limit, nums, where);

  it("of a Unit page newest first with DynamoDB's cursor, reading only the page; of a Space, Unit by Unit", async () => {
    expect((await api.post('/space', { Slug: 'revs' })).status).toBe(201);
    for (const [unit, edits] of [
      ['y', 2],
      ['x', 5],
      ['z', 0],
    ] as const) {
      expect((await api.post('/space/revs/unit', { Slug: unit, Data: deploymentYaml(unit) })).status).toBe(201);
      for (let n = 0; n < edits; n++)
        expect(
          (
            await api.post('/space/revs/function/invoke', {
              FunctionName: 'set-replicas',
              Arguments: [String(n + 2)],
              UnitIDs: [unit],
            })
          ).status,
        ).toBe(200);
    }
    const whole = await api.get('/space/revs/unit/x/revision');
    expect(nums(whole)).toEqual([6, 5, 4, 3, 2, 1]);
    for (const limit of [1, 2, 4, 6, 9])
      expect(await pages('/space/revs/unit/x/revision', limit)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(await pages('/space/revs/unit/x/revision', 2, 'RevisionNum < 5')).toEqual([4, 3, 2, 1]);
    const first = await api.get('/space/revs/unit/x/revision?limit=2');
    requests.length = 0;
    counting = true;
    const second = await api.get(`/space/revs/unit/x/revision?limit=2&continue=${first.headers.get('x-continue')}`);
    counting = false;
    expect(nums(second)).toEqual([4, 3]);
    expect(second.body[0]).toMatchObject({ SpaceSlug: 'revs', Tags: {}, ChangeOrders: {} });
    // One query of the Unit's revisions, for the page and one more; not the Unit's whole history.
    expect(
      requests
        .filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$revision_1')))
        .map((q) => q.limit),
    ).toEqual([3]);
    // The Space's: Unit by Unit in slug order, each newest first, as a page walks them.
    const space = nums(await api.get('/space/revs/revision'));
    expect(space).toEqual(['x/6', 'x/5', 'x/4', 'x/3', 'x/2', 'x/1', 'y/3', 'y/2', 'y/1', 'z/1']);
    for (const limit of [1, 3, 5, 10]) expect(await pages('/space/revs/revision', limit)).toEqual(space);
    expect(await pages('/space/revs/revision', 2, 'RevisionNum = 1')).toEqual(['x/1', 'y/1', 'z/1']);
    // Another list's token, or one made up, is refused.
    const yToken = (await api.get('/space/revs/unit/y/revision?limit=1')).headers.get('x-continue');
    const spaceToken = (await api.get('/space/revs/revision?limit=1')).headers.get('x-continue');
    for (const [path, token] of [
      ['/space/revs/unit/x/revision', yToken],
      ['/space/revs/unit/x/revision', spaceToken],
      ['/space/revs/revision', yToken],
      ['/space/revs/unit/x/revision', 'bm90LWEtY3Vyc29y'],
    ]) {
      const bad = await api.get(`${path}?limit=2&continue=${token}`);
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.Message).toBe('continue token is not one this list issued');
    }
    // cub pages the same way.
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['revision', 'list', '--space', 'revs', 'x', '--limit', '4']);
    expect(one.code, one.stderr).toBe(0);
    const token = /more: --continue (\S+)/.exec(one.stderr)?.[1];
    expect(token).toBeTruthy();
    const rest = await cub([
      'revision',
      'list',
      '--space',
      'revs',
      'x',
      '--limit',
      '4',
      '--continue',
      token!,
      '-o',
      'json',
    ]);
    expect((JSON.parse(rest.stdout) as Seen[]).map((r) => r.RevisionNum)).toEqual([2, 1]);
    const all = await cub(['revision', 'list', '--space', 'revs', '--limit', '7', '-o', 'json']);
    expect((JSON.parse(all.stdout) as Seen[]).map((r) => `${r.UnitSlug}/${r.RevisionNum}`)).toEqual(space.slice(0, 7));
  });

  it("of what a Unit's revisions changed page the same way", async () => {
    const whole = (await api.get('/space/revs/unit/x/mutation')).body.map((m: Seen) => m.RevisionNum);
    expect(whole).toEqual([6, 5, 4, 3, 2, 1]);
    for (const limit of [1, 4, 6]) expect(await pages('/space/revs/unit/x/mutation', limit)).toEqual(whole);
    const first = await api.get('/space/revs/unit/x/mutation?limit=4');
    requests.length = 0;
    counting = true;
    const second = await api.get(`/space/revs/unit/x/mutation?limit=4&continue=${first.headers.get('x-continue')}`);
    counting = false;
    expect(nums(second)).toEqual([2, 1]);
    expect(second.headers.get('x-continue')).toBeNull();
    // One query of the Unit's Mutation items (Limit: the page and one more to know if more follow); no revision read.
    expect(
      requests
        .filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$mutation_1')))
        .map((q) => q.limit),
    ).toEqual([5]);
    expect(requests.filter((q) => q.keys.some((k) => k.includes('$revision_1')))).toEqual([]);
    const revToken = (await api.get('/space/revs/unit/x/revision?limit=1')).headers.get('x-continue');
    for (const token of [revToken, 'bm90LWEtY3Vyc29y'])
      expect((await api.get(`/space/revs/unit/x/mutation?limit=1&continue=${token}`)).status).toBe(400);
    expect((await api.get('/space/revs/unit/x/mutation?where=RevisionNum%20%3D%201')).status).toBe(400);
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['mutation', 'list', '--space', 'revs', 'x', '--limit', '2']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^NUM\s+SOURCE/);
    const token = /more: --continue (\S+)/.exec(one.stderr)?.[1];
    const rest = await cub([
      'mutation',
      'list',
      '--space',
      'revs',
      'x',
      '--limit',
      '2',
      '--continue',
      token!,
      '-o',
      'json',
    ]);
    expect((JSON.parse(rest.stdout) as Seen[]).map((m) => m.RevisionNum)).toEqual([4, 3]);
  });
});

describe('the holds a gate reads', () => {
  it('come back from the database in force only: not lifted, not expired', async () => {
    for (const [slug, more] of [
      ['h-open', {}],
      ['h-lifted', {}],
      ['h-expiring', { ExpiresIn: '1h' }],
    ] as const) {
      expect((await api.post('/hold', { Slug: slug, Space: 'shop-p4', Reason: 'quiet', ...more })).status).toBe(201);
    }
    expect((await api.post('/hold/h-lifted/lift', { Note: 'done' })).status).toBe(200);
    const slugs = (hs: { Slug: string }[]) => hs.map((h) => h.Slug).sort();
    expect(slugs(await store.listHolds(orgId))).toEqual(['h-expiring', 'h-lifted', 'h-open']);
    const now = Date.now();
    expect(slugs(await store.listHolds(orgId, { inForceAt: new Date(now) }))).toEqual(['h-expiring', 'h-open']);
    expect(slugs(await store.listHolds(orgId, { inForceAt: new Date(now + 2 * 3600_000) }))).toEqual(['h-open']);
    // The rollout of a ChangeOrder reaching the held Space shows the two in force.
    const rollout = await api.get('/space/shop-base/change_order/scale/rollout');
    expect(rollout.status, rollout.text).toBe(200);
    expect(slugs(rollout.body.Holds)).toEqual(['h-expiring', 'h-open']);
    for (const slug of ['h-open', 'h-expiring'])
      expect((await api.post(`/hold/${slug}/lift`, { Note: 'done' })).status).toBe(200);
    expect(await store.listHolds(orgId, { inForceAt: new Date() })).toEqual([]);
  });

  it('page by slug with DynamoDB’s cursor, lifted ones too', async () => {
    const whole = (await api.get('/hold')).body.map((h: { Slug: string }) => h.Slug);
    expect(whole).toEqual(['h-expiring', 'h-lifted', 'h-open']);
    for (const limit of [1, 2, 3])
      expect(await allPages('/hold', limit, (r: { body: { Slug: string }[] }) => r.body.map((h) => h.Slug))).toEqual(
        whole,
      );
    const page = await api.get('/hold?limit=1');
    expect(page.body[0]).toMatchObject({ Slug: 'h-expiring', InForce: false, SpaceSlug: 'shop-p4' });
    const units = await api.get('/space/shop-base/unit?limit=1');
    for (const token of [units.headers.get('x-continue'), 'bm90LWEtY3Vyc29y'])
      expect((await api.get(`/hold?limit=1&continue=${token}`)).status).toBe(400);
    expect((await api.get('/hold?where=Slug%20%3D%20%27x%27')).status).toBe(400);
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['hold', 'list', '--limit', '2']);
    expect(one.code, one.stderr).toBe(0);
    const token = /more: --continue (\S+)/.exec(one.stderr)?.[1];
    expect(token).toBeTruthy();
    const rest = await cub(['hold', 'list', '--limit', '2', '--continue', token!, '-o', 'json']);
    expect(JSON.parse(rest.stdout).map((h: { Slug: string }) => h.Slug)).toEqual(['h-open']);
  });
});

describe('a publish', () => {
  it("finds the Space's last Release among the newest, not by reading its history", async () => {
    // 'rels' has 10 Releases (above); a change to its Unit, then a publish.
    expect(
      (
        await api.post('/space/rels/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['21'],
          UnitIDs: ['a'],
        })
      ).status,
    ).toBe(200);
    const newest = (await api.get('/space/rels/release?limit=1')).body[0] as { ReleaseNum: number };
    requests.length = 0;
    counting = true;
    const made = await api.post('/space/rels/release', {});
    counting = false;
    expect(made.status, made.text).toBe(201);
    // Numbers count per Target, which 'rels' shares with the Space deleted above.
    const num = made.body.Release.ReleaseNum as number;
    expect(num).toBeGreaterThan(newest.ReleaseNum);
    // One query of the newest by number, never the Space's Releases whole.
    expect(
      requests
        .filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$release_1')))
        .map((q) => [q.index, q.limit]),
    ).toEqual([['gsi1', 10]]);
    // Nothing changed since: the newest Release is found and no new one is made.
    const again = await api.post('/space/rels/release', {});
    expect(again.status, again.text).toBe(200);
    expect(again.body.Message).toBe(`nothing changed since release ${num} of space 'rels'; no new release`);
  });
});

describe('the organization’s tokens', () => {
  it('page oldest first with DynamoDB’s cursor: the same list, one query of an index a page; a member’s own only', async () => {
    const made = await api.post('/user', { Slug: 'tok-member', Role: 'Member' });
    expect(made.status).toBe(201);
    const member = new Api(server.url, made.body.Token);
    const mine: string[] = [];
    for (let i = 0; i < 3; i++) mine.push((await api.post('/token', { Description: `t${i}` })).body.TokenInfo.TokenID);
    expect((await member.post('/token', { Description: 'laptop' })).status).toBe(201);
    expect((await api.post('/token', { Service: 'argocd', Scope: 'ReportStatus' })).status).toBe(201);
    type Seen = { TokenID: string; UserID?: string; Service?: string; CreatedAt: string };
    const ids = (r: { body: Seen[] }) => r.body.map((t) => t.TokenID);
    const whole = (await api.get('/token')).body as Seen[];
    expect(whole.map((t) => t.CreatedAt)).toEqual(whole.map((t) => t.CreatedAt).sort());
    expect(whole.filter((t) => mine.includes(t.TokenID)).map((t) => t.TokenID)).toEqual(mine);
    for (const limit of [1, 2, 3, whole.length, 50])
      expect(await allPages('/token', limit, ids)).toEqual(whole.map((t) => t.TokenID));
    // A page past the first: one query of the organization's index by creation (the page and one more, to know if more follow), no batch read, no read of the organization's tokens whole.
    const first = await api.get('/token?limit=2');
    requests.length = 0;
    counting = true;
    const second = await api.get(`/token?limit=2&continue=${first.headers.get('x-continue')}`);
    counting = false;
    expect(ids(second)).toEqual(whole.slice(2, 4).map((t) => t.TokenID));
    expect(
      requests
        .filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$token_1')))
        .map((q) => [q.index, q.limit]),
    ).toEqual([['gsi2', 3]]);
    expect(requests.filter((q) => q.command === 'BatchGetItem')).toEqual([]);
    // A member sees their own only, page by page too, each page read from
    // their own part of the by-user index: the organization's tokens are not read through a filter.
    const own = ids(await member.get('/token'));
    expect(own).toEqual(whole.filter((t) => t.UserID === made.body.User.UserID).map((t) => t.TokenID));
    expect(own).toHaveLength(2);
    const paged: string[] = [];
    let token: string | null = null;
    requests.length = 0;
    counting = true;
    do {
      const r = await member.get(`/token?limit=1${token ? `&continue=${token}` : ''}`);
      expect(r.status, r.text).toBe(200);
      paged.push(...ids(r));
      token = r.headers.get('x-continue');
    } while (token);
    counting = false;
    expect(paged).toEqual(own);
    const tokenQueries = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$token_1')));
    expect(tokenQueries.length).toBeGreaterThanOrEqual(2);
    for (const q of tokenQueries) {
      expect(q.index).toBe('gsi3');
      expect(q.keys.join(' ')).toContain(`$baton#UserKey_${orgId}#${made.body.User.UserID}`);
    }
    // A member's token carries on in the Admin's list where it stopped, and the other way round: one order, one cursor.
    const memberFirst = (await member.get('/token?limit=1')).headers.get('x-continue')!;
    const adminAfter = await api.get(`/token?limit=50&continue=${memberFirst}`);
    expect(ids(adminAfter)).toEqual(
      whole.slice(whole.findIndex((t) => t.TokenID === own[0]) + 1).map((t) => t.TokenID),
    );
    const adminFirst = (await api.get('/token?limit=1')).headers.get('x-continue')!;
    expect(ids(await member.get(`/token?limit=50&continue=${adminFirst}`))).toEqual(
      own.filter((id) => whole.findIndex((t) => t.TokenID === id) > 0),
    );
    const memberCub = await cubAt(server.url, made.body.Token)(['token', 'list', '-o', 'json']);
    expect(memberCub.code, memberCub.stderr).toBe(0);
    expect((JSON.parse(memberCub.stdout) as Seen[]).map((t) => t.TokenID)).toEqual(own);
    // Another list's token, and a made-up one, are refused.
    const relToken = (await api.get('/change_order?limit=1')).headers.get('x-continue');
    for (const bad of [relToken, 'bm90LWEtY3Vyc29y']) {
      const r = await api.get(`/token?limit=1&continue=${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.Message).toBe('continue token is not one this list issued');
    }
    // cub: a page, then the rest from its token.
    const cub = cubAt(server.url, api.token!);
    const one = await cub(['token', 'list', '--limit', '3']);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout.split('\n').filter(Boolean)).toHaveLength(4);
    const next = /more: --continue (\S+)/.exec(one.stderr)?.[1];
    const rest = await cub(['token', 'list', '--limit', '50', '--continue', next!, '-o', 'json']);
    expect(rest.code, rest.stderr).toBe(0);
    expect((JSON.parse(rest.stdout) as Seen[]).map((t) => t.TokenID)).toEqual(whole.slice(3).map((t) => t.TokenID));
  });

  it('are revoked by their ID read by key, not found among the organization’s tokens', async () => {
    const made = await api.post('/user', { Slug: 'tok-revoker', Role: 'Member' });
    expect(made.status).toBe(201);
    const member = new Api(server.url, made.body.Token);
    const theirs: string[] = [];
    for (let i = 0; i < 3; i++)
      theirs.push((await member.post('/token', { Description: `r${i}` })).body.TokenInfo.TokenID);
    const adminOwn = (await api.post('/token', { Description: 'not theirs' })).body.TokenInfo.TokenID as string;
    requests.length = 0;
    counting = true;
    const revoked = await member.post(`/token/${theirs[1]}/revoke`);
    counting = false;
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body).toMatchObject({ TokenID: theirs[1], RevokedAt: expect.any(String) });
    // One query of the organization's index, at that token's ID: the organization's tokens are not read.
    const tokenQueries = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$token_1#')));
    expect(tokenQueries).toHaveLength(1);
    expect(tokenQueries[0]!.keys.join(' ')).toContain(`TokenID_${theirs[1]}`);
    // The others still work; a member cannot revoke another's token (not found), nor one that does not exist.
    const mine = (await member.get('/token')).body as { TokenID: string; RevokedAt?: string }[];
    expect(mine.filter((t) => t.RevokedAt).map((t) => t.TokenID)).toEqual([theirs[1]]);
    const other = await member.post(`/token/${adminOwn}/revoke`);
    expect(other.status).toBe(404);
    expect(other.body.Message).toBe(`token '${adminOwn}' not found`);
    expect((await member.post('/token/00000000-0000-4000-8000-000000000000/revoke')).status).toBe(404);
    expect((await member.post(`/token/${theirs[0]!.slice(0, 8)}/revoke`)).status).toBe(404);
    // An Admin revokes anyone's, by its ID in capitals too; cub the same way.
    expect((await api.post(`/token/${theirs[2]!.toUpperCase()}/revoke`)).body).toMatchObject({
      TokenID: theirs[2],
      RevokedAt: expect.any(String),
    });
    const cub = cubAt(server.url, api.token!);
    const byCub = await cub(['token', 'revoke', theirs[0]!]);
    expect(byCub.code, byCub.stderr).toBe(0);
    expect(
      ((await api.get('/token')).body as { TokenID: string; RevokedAt?: string }[]).filter(
        (t) => theirs.includes(t.TokenID) && t.RevokedAt,
      ),
    ).toHaveLength(3);
  });

  it('are found by their user’s index and deleted with them', async () => {
    const made = await api.post('/user', { Slug: 'tok-leaver', Role: 'Member' });
    expect(made.status).toBe(201);
    const leaver = new Api(server.url, made.body.Token);
    for (let i = 0; i < 2; i++) expect((await leaver.post('/token', { Description: `l${i}` })).status).toBe(201);
    const indexedOf = async (userId: string) => {
      const r = await client.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'gsi3',
          KeyConditionExpression: 'gsi3pk = :p',
          ExpressionAttributeValues: { ':p': { S: `$baton#UserKey_${orgId}#${userId}` } },
        }),
      );
      return r.Items ?? [];
    };
    const userId = made.body.User.UserID as string;
    expect(await indexedOf(userId)).toHaveLength(3);
    const before = (await api.get('/token')).body.length as number;
    requests.length = 0;
    counting = true;
    const del = await api.del('/user/tok-leaver');
    counting = false;
    expect(del.status, del.text).toBe(200);
    // Their tokens are found by the by-user index (one query), not among the organization's tokens.
    const byUser = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$token_1')));
    expect(byUser.map((q) => [q.index, q.keys.join(' ').includes(`UserKey_${orgId}#${userId}`)])).toEqual([
      ['gsi3', true],
    ]);
    expect(del.body).toMatchObject({ Deleted: 'tok-leaver', RevokedTokens: 3 });
    expect(await indexedOf(userId)).toEqual([]);
    expect((await leaver.get('/token')).status).toBe(401);
    expect((await api.get('/token')).body).toHaveLength(before - 3);
    expect(await allPages('/token', 2, (r: { body: { TokenID: string }[] }) => r.body.map((t) => t.TokenID))).toEqual(
      (await api.get('/token')).body.map((t: { TokenID: string }) => t.TokenID),
    );
    // A user with more tokens than fit one transaction: deleted all the same, by the tokens' hashes.
    const many = await api.post('/user', { Slug: 'tok-many', Role: 'Member' });
    const manyApi = new Api(server.url, many.body.Token);
    for (let i = 0; i < 49; i++) expect((await manyApi.post('/token', { Description: `m${i}` })).status).toBe(201);
    const gone = await api.del('/user/tok-many');
    expect(gone.status, gone.text).toBe(200);
    expect(gone.body).toMatchObject({ Deleted: 'tok-many', RevokedTokens: 50 });
    expect((await manyApi.get('/token')).status).toBe(401);
    const left = (await api.get('/token')).body.map((t: { TokenID: string }) => t.TokenID);
    expect(left).toHaveLength(before - 3);
    expect(await allPages('/token', 7, (r: { body: { TokenID: string }[] }) => r.body.map((t) => t.TokenID))).toEqual(
      left,
    );
  });
});

describe('an approval at a named revision', () => {
  it('finds what the revision names once for a Space’s Units and reads their marks of it by key in one batch; a Unit it does not mark is skipped, saying why', async () => {
    for (const u of ['a', 'b'])
      expect(
        (await api.post(`/space/shop-p4/unit/${u}/tag`, { Tag: 'approve-here', Revision: 'HeadRevisionNum' })).status,
      ).toBe(200);
    requests.length = 0;
    counting = true;
    const r = await api.post('/attest', { Spaces: ['shop-p4'], All: true, Revision: 'Tag:approve-here', DryRun: true });
    counting = false;
    expect(r.status, r.text).toBe(200);
    const heads = Object.fromEntries(
      ((await api.get('/space/shop-p4/unit')).body as { Slug: string; HeadRevisionNum: number }[]).map((u) => [
        u.Slug,
        u.HeadRevisionNum,
      ]),
    );
    expect(
      r.body.Spaces[0].Units.map((u: { UnitSlug: string; RevisionNum?: number; Skipped?: string }) => [
        u.UnitSlug,
        u.RevisionNum ?? u.Skipped,
      ]),
    ).toEqual([
      ['a', heads.a],
      ['b', heads.b],
      ['c', "tag 'approve-here' does not mark a revision of unit 'c'"],
    ]);
    // The Tag's slug read once (not once per Unit), and the 3 Units' marks of it in one batch of 3 keys.
    expect(requests.filter((q) => q.keys.some((k) => k.includes('Slug_approve-here')))).toHaveLength(1);
    expect(
      requests
        .filter((q) => q.command === 'BatchGetItem' && q.keys.some((k) => k.includes('$mark_1#')))
        .map((q) => q.keys.length),
    ).toEqual([3]);
    // cub: the same answer.
    const cub = await cubAt(
      server.url,
      api.token!,
    )(['variant', 'approve', 'shop-p4', '--all', '--revision', 'Tag:approve-here', '--dry-run']);
    expect(cub.code, cub.stderr).toBe(0);
    expect(cub.stdout).toMatch(
      new RegExp(
        `shop-p4\\s+a\\s+${heads.a}\\nshop-p4\\s+b\\s+${heads.b}\\nshop-p4\\s+c\\s+tag 'approve-here' does not mark a revision of unit 'c'\\n`,
      ),
    );
  });
});

describe('a Release at a change order, and a fix adopted into its release tag', () => {
  it('find the change order once and read the Units’ marks and revisions by key; a fix is refused once a Release was published at it, found by it rather than among the Space’s Releases', async () => {
    // shop-dev took 'scale' (above). It releases to a Target of its own, many times at revisions, then once at the change order.
    expect((await api.post('/space/shop-base/target', { Slug: 'adopt-cluster' })).status).toBe(201);
    const dev = (await api.get('/space/shop-dev')).body;
    expect(
      (await api.patch('/space/shop-dev', { Version: dev.Version, ReleaseTargetID: 'shop-base/adopt-cluster' })).status,
    ).toBe(200);
    expect(
      (await api.post('/space/shop-dev/function/invoke', { FunctionName: 'set-namespace', Arguments: ['dev'] })).status,
    ).toBe(200);
    for (let n = 30; n < 36; n++) {
      expect(
        (
          await api.post('/space/shop-dev/function/invoke', {
            FunctionName: 'set-replicas',
            Arguments: [String(n)],
            UnitIDs: ['b'],
          })
        ).status,
      ).toBe(200);
      requests.length = 0;
      counting = n === 30;
      const made = await api.post('/space/shop-dev/release', {});
      counting = false;
      expect(made.status).toBe(201);
      if (n !== 30) continue;
      // The first carries the change, and is recorded on it: judged from the change's marks on this Space's 3 Units
      // (its start, end and release Tags on each, in one batch), not from its marks in every Space.
      const scale = (await api.get('/space/shop-base/change_order/scale')).body;
      expect(await store.progressAt(scale.ChangeOrderID, dev.SpaceID)).toMatchObject({
        ReleaseID: made.body.Release.ReleaseID,
        ReleaseNum: made.body.Release.ReleaseNum,
      });
      expect(
        requests.filter(
          (q) => q.command === 'Query' && q.keys.some((k) => k.includes('$baton#TagID_') && k.includes('$mark_1#')),
        ),
      ).toEqual([]);
      expect(
        requests
          .filter((q) => q.command === 'BatchGetItem' && q.keys.some((k) => k.includes('$mark_1#')))
          .map((q) => q.keys.length),
      ).toEqual([9]);
    }
    // Recorded, the progress leaves the Space's index of those with a Release still to record, so later Releases there
    // do not read it.
    const scaleId = (await api.get('/space/shop-base/change_order/scale')).body.ChangeOrderID as string;
    const progressKey = {
      pk: { S: `$baton#ChangeOrderID_${scaleId}` },
      sk: { S: `$progress_1#SpaceID_${dev.SpaceID}` },
    };
    const indexed = async () =>
      (
        (
          await client.send(
            new QueryCommand({
              TableName: table,
              IndexName: 'gsi1',
              KeyConditionExpression: 'gsi1pk = :p AND begins_with(gsi1sk, :s)',
              ExpressionAttributeValues: { ':p': { S: `$baton#SpaceID_${dev.SpaceID}` }, ':s': { S: '$progress_1#' } },
            }),
          )
        ).Items ?? []
      ).map((i) => i.ChangeOrderID!.S!);
    expect((await client.send(new GetItemCommand({ TableName: table, Key: progressKey }))).Item).not.toHaveProperty(
      'gsi1pk',
    );
    expect(await indexed()).not.toContain(scaleId);
    // Before the change order is released there, fixes are adopted: the release tag moves to each Unit's head.
    for (const u of ['a', 'c'])
      expect(
        (
          await api.post(`/space/shop-dev/unit/${u}/tag`, {
            Tag: 'ChangeOrder:shop-base/scale',
            Revision: 'HeadRevisionNum',
            Move: true,
          })
        ).status,
      ).toBe(200);
    const head = (await api.get('/space/shop-dev/unit/b')).body.HeadRevisionNum as number;
    const moved = await api.post('/space/shop-dev/unit/b/tag', {
      Tag: 'ChangeOrder:shop-base/scale',
      Revision: 'HeadRevisionNum',
      Move: true,
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.RevisionNum).toBe(head);
    requests.length = 0;
    counting = true;
    const atCo = await api.post('/space/shop-dev/release', { Revision: 'ChangeOrder:shop-base/scale' });
    counting = false;
    expect(atCo.status, atCo.text).toBe(201);
    // The change order is found once for the Release and once for the revisions it names (not once per Unit); the
    // Units' marks of it are read by key in one batch (3 Units × its end and release Tags), not each Unit's marks
    // whole; each revision bundled is read once, all in one batch.
    const has = (q: { keys: string[] }, ...parts: string[]) => q.keys.some((k) => parts.every((x) => k.includes(x)));
    expect(requests.filter((q) => q.command === 'GetItem' && has(q, '$changeorder_1#'))).toHaveLength(2);
    expect(requests.filter((q) => q.command === 'Query' && has(q, '$baton#UnitID_', '$mark_1'))).toEqual([]);
    expect(
      requests.filter((q) => q.command === 'BatchGetItem' && has(q, '$mark_1#')).map((q) => q.keys.length),
    ).toEqual([6]);
    expect(requests.filter((q) => q.command === 'GetItem' && has(q, '$revision_1#'))).toEqual([]);
    expect(
      requests.filter((q) => q.command === 'BatchGetItem' && has(q, '$revision_1#')).map((q) => q.keys.length),
    ).toEqual([3]);
    // Its workflow has no release gates, so its progress in every Space (and the organization's Spaces) is not read;
    // whether this Space took it is read by key (an earlier Release here carried the change: nothing left to record).
    expect(requests.filter((q) => q.command === 'Query' && has(q, '$baton#ChangeOrderID_', '$progress_1#'))).toEqual(
      [],
    );
    expect(requests.filter((q) => q.command === 'Query' && has(q, '$space_1#'))).toEqual([]);
    expect(requests.filter((q) => q.command === 'GetItem' && has(q, '$progress_1#SpaceID_'))).toHaveLength(1);
    const num = atCo.body.Release.ReleaseNum as number;
    expect(atCo.body.Release.Units.find((u: { Slug: string }) => u.Slug === 'b').RevisionNum).toBe(head);
    expect(
      (
        await api.post('/space/shop-dev/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['40'],
          UnitIDs: ['b'],
        })
      ).status,
    ).toBe(200);
    const refusedOnce = async () => {
      requests.length = 0;
      counting = true;
      const r = await api.post('/space/shop-dev/unit/b/tag', {
        Tag: 'ChangeOrder:shop-base/scale',
        Revision: 'HeadRevisionNum',
        Move: true,
      });
      counting = false;
      expect(r.status, r.text).toBe(409);
      expect(r.body.Message).toBe(
        `release ${num} of space 'shop-dev' was published at change order 'scale': its release tag there is fixed`,
      );
      // No read of the Space's Releases: one query of the index of Releases made at the change order, no batch read.
      const releases = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$release_1')));
      expect(releases.map((q) => q.index)).toEqual(['gsi2']);
      expect(releases[0]!.keys.join(' ')).toContain(`AtChangeOrder_${dev.SpaceID}#${scaleId}`);
      expect(
        requests.filter((q) => q.command === 'BatchGetItem' && q.keys.some((k) => k.includes('$release_1#'))),
      ).toEqual([]);
    };
    await refusedOnce();
    // cub says the same.
    const cub = cubAt(server.url, api.token!);
    const byCub = await cub([
      'unit',
      'tag',
      'ChangeOrder:shop-base/scale',
      '--move',
      '--revision',
      'HeadRevisionNum',
      '--space',
      'shop-dev',
      '--unit',
      'b',
    ]);
    expect(byCub.code).not.toBe(0);
    expect(byCub.stderr).toContain(`release ${num} of space 'shop-dev' was published at change order 'scale'`);
  });
});

describe('a demote', () => {
  it('reads what the restore drops as one range of each Unit’s revisions, not the Unit’s history', async () => {
    // shop-dev took 'scale' (above), then Unit b was changed seven more times: its history is long, the change's end far back.
    const co = (await api.get('/space/shop-base/change_order/scale')).body;
    expect(
      (
        await api.patch('/space/shop-base/change_order/scale', {
          Version: co.Version,
          AbortedReason: 'replicas were wrong',
        })
      ).status,
    ).toBe(200);
    const b = (await api.get('/space/shop-dev/unit/b')).body as { UnitID: string; HeadRevisionNum: number };
    const history = (await api.get('/space/shop-dev/unit/b/revision')).body as {
      RevisionNum: number;
      Description?: string;
    }[];
    requests.length = 0;
    counting = true;
    const plan = await api.post('/demote', { Space: 'shop-dev', ChangeOrderID: 'shop-base/scale', DryRun: true });
    counting = false;
    expect(plan.status, plan.text).toBe(200);
    const planned = (
      plan.body.Units as { UnitSlug: string; Action: string; Dropped: { RevisionNum: number }[] }[]
    ).find((u) => u.UnitSlug === 'b')!;
    // Past the release tag it adopted (the change's end is revision 2 there): every later revision, newest last.
    expect(planned.Action).toBe('Restore');
    expect(planned.Dropped.map((d) => d.RevisionNum)).toEqual(
      history
        .map((r) => r.RevisionNum)
        .filter((n) => n > 2)
        .sort((x, y) => x - y),
    );
    expect(planned.Dropped.at(-1)!.RevisionNum).toBe(b.HeadRevisionNum);
    // One range query of revisions per Unit (3 Units), each bounded above by the Unit's head: no query of a Unit's whole history.
    const ranges = requests.filter((q) => q.command === 'Query' && q.keys.some((k) => k.includes('$revision_1#')));
    expect(ranges).toHaveLength(3);
    for (const q of ranges)
      expect(q.keys[0]!.split(' ').filter((k) => k.includes('$revision_1#RevisionNum_'))).toHaveLength(2);
    expect(ranges.map((q) => q.keys[0]!).find((k) => k.includes(b.UnitID))).toBe(
      `$baton#UnitID_${b.UnitID} $revision_1#RevisionNum_0000000003 $revision_1#RevisionNum_${String(b.HeadRevisionNum).padStart(10, '0')}`,
    );
  });
});

describe('a Release recorded on the change orders it carries', () => {
  it('lists its Space’s Units once for all of them, not once per change order', async () => {
    // shop-base is where 'scale', 'next', 'dropped' and others were made: each has a Release still to record there.
    const base = (await api.get('/space/shop-base')).body;
    const open = (await store.changeOrdersReaching(orgId, base.SpaceID, { toRelease: true })).map((c) => c.co.Slug);
    expect(open).toEqual(expect.arrayContaining(['dropped', 'next', 'scale']));
    expect(
      (await api.patch('/space/shop-base', { Version: base.Version, ReleaseTargetID: 'shop-base/adopt-cluster' }))
        .status,
    ).toBe(200);
    // A base keeps placeholders a Release refuses: given a namespace first.
    expect(
      (await api.post('/space/shop-base/function/invoke', { FunctionName: 'set-namespace', Arguments: ['shop'] }))
        .status,
    ).toBe(200);
    requests.length = 0;
    counting = true;
    const made = await api.post('/space/shop-base/release', {});
    counting = false;
    expect(made.status, made.text).toBe(201);
    // Bundling them is one list; recording the Release on the change orders (their marks on those Units) is one more, however many.
    const listed = requests.filter(
      (q) =>
        q.command === 'Query' &&
        q.keys.some((k) => k.includes(`$baton#SpaceID_${base.SpaceID}`) && k.includes('$unit_1')),
    );
    expect(listed).toHaveLength(2);
    // It carries 'scale' and 'next' (the base's heads are at or past their release marks): recorded on them, which leave the index.
    for (const c of await store.changeOrdersOf(orgId))
      if (c.Slug === 'scale' || c.Slug === 'next')
        expect(await store.progressAt(c.ChangeOrderID, base.SpaceID)).toMatchObject({
          ReleaseID: made.body.Release.ReleaseID,
        });
    const left = (await store.changeOrdersReaching(orgId, base.SpaceID, { toRelease: true })).map((c) => c.co.Slug);
    expect(left).not.toContain('scale');
    expect(left).not.toContain('next');
    expect(open.length).toBeGreaterThan(2);
  });
});

describe('a change order of the Links’ type ending at a Tag', () => {
  it('reads the Tag’s marks on the sources by key in one batch, not each source’s marks whole', async () => {
    const registry = (tag: string) =>
      `configHub:\n  configSchema: registrybot.confighub.com/v1alpha4\n  configName: acme\nrepository: ghcr.io/acme/acme\nstreams:\n  stable:\n    tag: ${tag}\n`;
    const link = readFileSync(fileURLToPath(new URL('../fixtures/registrybot/link.yaml', import.meta.url)), 'utf8');
    const cub = cubAt(server.url, api.token!);
    const ok = async (args: string[], input?: string) => {
      const r = await cub(args, input);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    await ok(['space', 'create', 'lc-facts']);
    await ok(['unit', 'create', '--space', 'lc-facts', 'acme', '-', '--toolchain', 'ConfigHub/YAML'], registry('v1'));
    await ok(['space', 'create', 'lc-app']);
    await ok(['space', 'create', 'lc-base']);
    await ok(['unit', 'create', '--space', 'lc-app', 'deployment', '-'], deploymentYaml('acme', { namespace: 'acme' }));
    await ok(
      [
        'link',
        'create',
        '--space',
        'lc-app',
        '-',
        'deployment',
        'acme',
        'lc-facts',
        '--update-type',
        'TransformPaths',
        '--from-stdin',
      ],
      link,
    );
    await ok(['unit', 'update', '--patch', '--resolve', 'Link:*', '--space', 'lc-app', 'deployment']);
    // The source moves on, is tagged there, and is marked by many Tags besides (as every Release marks its Units).
    await ok(['unit', 'update', '--space', 'lc-facts', 'acme', '-'], registry('v2'));
    await ok(['unit', 'tag', 'lc-v2', '--space', 'lc-facts', '--unit', 'acme', '--revision', '2']);
    for (let i = 0; i < 4; i++)
      await ok(['unit', 'tag', `lc-other-${i}`, '--space', 'lc-facts', '--unit', 'acme', '--revision', '1']);
    const acme = (await api.get('/space/lc-facts/unit/acme')).body.UnitID as string;
    requests.length = 0;
    counting = true;
    const made = await api.post('/space/lc-base/change_order', {
      Slug: 'lc-to-v2',
      UpdateType: 'TransformPaths',
      InScopeSpaceIDs: ['lc-app'],
      EndTagID: 'lc-facts/lc-v2',
    });
    counting = false;
    expect(made.status, made.text).toBe(201);
    expect(
      requests.filter(
        (q) => q.command === 'Query' && q.keys.some((k) => k.includes(`UnitID_${acme}`) && k.includes('$mark_1')),
      ),
    ).toEqual([]);
    expect(
      requests
        .filter((q) => q.command === 'BatchGetItem' && q.keys.some((k) => k.includes('$mark_1#') && k.includes(acme)))
        .map((q) => q.keys.length),
    ).toEqual([1]);
    // It ends where the Tag marks the source: promoted, the app resolves v2.
    expect((await api.post('/promote', { ChangeOrderID: 'lc-base/lc-to-v2', Spaces: ['lc-app'] })).status).toBe(200);
    expect((await api.get('/space/lc-app/unit/deployment/data')).text).toContain('image: ghcr.io/acme/acme:v2');
    // A Tag that marks no revision of the source is refused, naming it.
    await ok(['unit', 'tag', 'lc-elsewhere', '--space', 'lc-app', '--unit', 'deployment', '--revision', '1']);
    const none = await api.post('/space/lc-base/change_order', {
      Slug: 'lc-none',
      UpdateType: 'TransformPaths',
      InScopeSpaceIDs: ['lc-app'],
      EndTagID: 'lc-app/lc-elsewhere',
    });
    expect(none.status).toBe(404);
    expect(none.body.Message).toBe("tag 'lc-elsewhere' does not mark source unit 'acme'");
  });
});

describe('progress in the index of those with a Release to record', () => {
  it('leaves it with the write that records one, whatever the write is given as read: progress is written whole', async () => {
    const space = (await api.get('/space/shop-p1')).body.SpaceID as string;
    const p = {
      ChangeOrderID: randomUUID(),
      BaseSpaceID: space,
      SpaceID: space,
      ResolvedAt: '2026-12-04T00:00:00.000Z',
      Version: 1,
    };
    const key = { pk: { S: `$baton#ChangeOrderID_${p.ChangeOrderID}` }, sk: { S: `$progress_1#SpaceID_${space}` } };
    const item = async () => (await client.send(new GetItemCommand({ TableName: table, Key: key }))).Item!;
    await store.transact([{ op: 'create', kind: 'Progress', item: p }]);
    expect((await item()).gsi1pk).toEqual({ S: `$baton#SpaceID_${space}` });
    // Demoted, then that released: each update handed the item as read, which would leave only what changed to set.
    const restored = {
      ...p,
      ReleaseID: 'r1',
      ReleaseNum: 1,
      ReleasedAt: p.ResolvedAt,
      RestoredAt: p.ResolvedAt,
      Version: 2,
    };
    await store.transact([{ op: 'update', kind: 'Progress', item: restored, expectedVersion: 1, before: p }]);
    expect((await item()).gsi1pk).toEqual({ S: `$baton#SpaceID_${space}` });
    const released = { ...restored, RestoreReleaseID: 'r2', RestoreReleaseNum: 2, Version: 3 };
    await store.transact([{ op: 'update', kind: 'Progress', item: released, expectedVersion: 2, before: restored }]);
    expect(await item()).not.toHaveProperty('gsi1pk');
    expect(await store.progressAt(p.ChangeOrderID, space)).toMatchObject({ RestoreReleaseID: 'r2', Version: 3 });
    await store.transact([{ op: 'delete', kind: 'Progress', item: released }]);
  });
});

describe('the reads a person waits on for a change order in flight', () => {
  const count = (part: string, command = 'Query') =>
    requests.filter((q) => q.command === command && q.keys.some((k) => k.includes(part))).length;
  const counted = async (path: string) => {
    requests.length = 0;
    counting = true;
    const r = await api.get(path);
    counting = false;
    expect(r.status, r.text).toBe(200);
    return { body: r.body, spaces: count('$space_1#SpaceID_'), progress: count('$progress_1#SpaceID_') };
  };
  beforeAll(async () => {
    const units = [{ Slug: 'w', Data: deploymentYaml('w') }];
    expect((await api.post('/variant/upload', { Component: 'rd', Variant: 'base', Units: units })).status).toBe(201);
    // dev deploys to a target: 'Released' asks for a Release of the change there.
    expect((await api.post('/space', { Slug: 'rd-infra' })).status).toBe(201);
    expect((await api.post('/space/rd-infra/target', { Slug: 'dev' })).status).toBe(201);
    for (const [name, stage, target] of [
      ['dev', 'Development', 'rd-infra/dev'],
      ['prd', 'Production', undefined],
    ])
      expect(
        (
          await api.post('/variant', {
            Name: name,
            UpstreamSpaceID: 'rd-base',
            Stage: stage,
            ...(target ? { ReleaseTargetID: target } : {}),
          })
        ).status,
      ).toBe(201);
    for (const [slug, prereqs] of [
      ['plain', []],
      ['gated', ['Released']],
    ] as const)
      expect(
        (
          await api.post('/space/rd-base/change_workflow', {
            Slug: slug,
            Stages: [
              { Name: 'dev', WhereSpace: "Labels.Stage = 'Development' AND Slug LIKE 'rd-%'" },
              { Name: 'prod', WhereSpace: "Labels.Stage = 'Production' AND Slug LIKE 'rd-%'", Prerequisites: prereqs },
            ],
          })
        ).status,
      ).toBe(201);
    for (const slug of ['plain', 'gated']) {
      expect(
        (await api.post('/space/rd-base/function/invoke', { FunctionName: 'set-replicas', Arguments: ['3'] })).status,
      ).toBe(200);
      const made = await api.post('/space/rd-base/change_order', { Slug: slug, ChangeWorkflowID: `rd-base/${slug}` });
      expect(made.status, made.text).toBe(201);
    }
    for (const slug of ['plain', 'gated'])
      expect((await api.post('/promote', { ChangeOrderID: `rd-base/${slug}` })).status).toBe(200);
  });

  it('explain reads the marks only when a gate of the next Stage needs them', async () => {
    const plain = await counted('/space/rd-base/change_order/plain/explain');
    expect([
      plain.body.Stage,
      plain.body.Open,
      plain.body.Targets.map((t: { SpaceSlug: string }) => t.SpaceSlug),
    ]).toEqual(['prod', true, ['rd-prd']]);
    expect(count('$mark_1#UnitID_')).toBe(0);
    expect([plain.spaces, plain.progress]).toEqual([1, 1]);
    // 'Released' weighs what a Release of the change bundles: the start, end and publish marks, read once each.
    const gated = await counted('/space/rd-base/change_order/gated/explain');
    expect([gated.body.Stage, gated.body.Open]).toEqual(['prod', false]);
    expect(gated.body.Gates.find((g: { Prerequisite: string }) => g.Prerequisite === 'Released')?.Satisfied).toBe(
      false,
    );
    expect(count('$mark_1#UnitID_')).toBe(3);
  });

  it('changeorder get and the rollout page read the Spaces and the progress once, Completed included', async () => {
    const got = await counted('/space/rd-base/change_order/plain');
    expect([got.body.Stage, got.body.Completed, got.spaces, got.progress]).toEqual(['dev', false, 1, 1]);
    const page = await counted('/space/rd-base/change_order/plain/rollout');
    expect(page.body.Stages.map((s: { Name: string; Status: string }) => `${s.Name}:${s.Status}`)).toEqual([
      'dev:Reached',
      'prod:Next',
    ]);
    expect([page.body.ChangeOrder.Completed, page.spaces, page.progress]).toEqual([false, 1, 1]);
    // cub answers the same.
    const cub = cubAt(server.url, api.token!);
    const shown = await cub(['changeorder', 'get', '--space', 'rd-base', 'plain', '-o', 'json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ Stage: 'dev', Completed: false });
  });
});

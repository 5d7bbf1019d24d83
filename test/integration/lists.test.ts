import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';
import { Api, deploymentYaml } from '../support/harness.ts';

/** Every DynamoDB request the server makes: its command and, for a query, its Limit and the items it returned. */
const requests: { command: string; limit?: number; count?: number }[] = [];
const client = dynamoClient(inject('dynamoEndpoint'));
client.middlewareStack.add(
  (next, context) => async (args) => {
    const out = await next(args);
    const input = args.input as { Limit?: number };
    requests.push({
      command: String(context.commandName),
      limit: input.Limit,
      count: (out.output as { Count?: number }).Count,
    });
    return out;
  },
  { step: 'initialize', name: 'recordRequests' },
);
let server: LocalServer;
let api: Api;

beforeAll(async () => {
  const table = `lists-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps } = localDeps(dynamoStore(client, table));
  server = await startServer(deps, { checkAnswers: true });
  api = new Api(server.url, (await createOrganization(deps, `lists-${table}`)).token);
  await api.post('/space', { Slug: 'big' });
  await api.post('/space', { Slug: 'other' });
  // 40 Units, created out of slug order; a Tag and a Target of the same slug (their claims share a prefix).
  for (const i of Array.from({ length: 40 }, (_, n) => (n * 17) % 40))
    expect(
      (
        await api.post('/space/big/unit', {
          Slug: `u${String(i).padStart(2, '0')}`,
          Labels: { Even: String(i % 2 === 0) },
          Data: deploymentYaml(`u${i}`),
        })
      ).status,
    ).toBe(201);
  await api.post('/space/big/tag', { Slug: 't' });
  await api.post('/space/big/target', { Slug: 't' });
  await api.post('/space/big/target', { Slug: 'ta' });
});
afterAll(async () => server.close());

/** Follows a list's pages to the end; each page's slugs. */
async function pages(path: string): Promise<string[][]> {
  const out: string[][] = [];
  let token: string | null = null;
  do {
    const r = await api.get(`${path}${token ? `&continue=${token}` : ''}`);
    expect(r.status, r.text).toBe(200);
    out.push(r.body.map((x: { Slug: string }) => x.Slug));
    token = r.headers.get('x-continue');
  } while (token);
  return out;
}

describe('lists page with DynamoDB’s own cursor', () => {
  it('walks a Space’s Units a page at a time in slug order, reading only the claims and items of each page', async () => {
    requests.length = 0;
    const first = await api.get('/space/big/unit?limit=5');
    expect(first.body.map((u: { Slug: string }) => u.Slug)).toEqual(['u00', 'u01', 'u02', 'u03', 'u04']);
    // One query of six claims (the page's and one to tell whether more follow) and one batch read of their
    // items: the partition's 40 Units are never read.
    const queries = requests.filter((r) => r.command === 'QueryCommand');
    expect(queries.at(-1)).toMatchObject({ limit: 6, count: 6 });
    expect(requests.filter((r) => r.command === 'QueryCommand' && (r.count ?? 0) > 6)).toEqual([]);
    expect(requests.filter((r) => r.command === 'BatchGetItemCommand')).toHaveLength(1);
    const all = await pages('/space/big/unit?limit=7');
    expect(all.map((p) => p.length)).toEqual([7, 7, 7, 7, 7, 5]);
    expect(all.flat()).toEqual(Array.from({ length: 40 }, (_, i) => `u${String(i).padStart(2, '0')}`));
  });

  it('fills a page with what matches the where, and ends without a token', async () => {
    const even = await pages(`/space/big/unit?limit=6&where=${encodeURIComponent("Labels.Even = 'true'")}`);
    expect(even.map((p) => p.length)).toEqual([6, 6, 6, 2]);
    expect(even.flat()).toEqual(Array.from({ length: 20 }, (_, i) => `u${String(2 * i).padStart(2, '0')}`));
    // Asked for no limit, the list is whole, as before.
    expect((await api.get('/space/big/unit')).body).toHaveLength(40);
  });

  it('keeps kinds apart and refuses a token of another list, or none of ours', async () => {
    expect(await pages('/space/big/tag?limit=1')).toEqual([['t']]);
    expect((await pages('/space/big/target?limit=1')).flat()).toEqual(['t', 'ta']);
    const token = (await api.get('/space/big/unit?limit=2')).headers.get('x-continue')!;
    for (const path of [
      `/space/other/unit?limit=2&continue=${token}`,
      `/space/big/tag?limit=2&continue=${token}`,
      '/space/big/unit?limit=2&continue=bm90LWEtdG9rZW4',
      '/space/big/unit?limit=2&continue=%2F%2F%2F',
    ]) {
      const r = await api.get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.Message).toBe('continue token is not one this list issued');
    }
  });

  it('pages the organization’s Spaces, hiding those the caller may not view', async () => {
    for (const s of ['sa', 'sb', 'sc']) await api.post('/space', { Slug: s });
    expect((await pages('/space?limit=2')).flat()).toEqual(['big', 'other', 'sa', 'sb', 'sc']);
  });
});

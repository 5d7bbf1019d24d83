/**
 * What the benches share: the fleet they promote (a base of M Units, N variant Spaces across dev, staging and prod, a
 * ChangeWorkflow of the three Stages, a change made in the base and a ChangeOrder of it), built through the HTTP API as
 * a user would; the engine's ceiling for the least a promotion can write per Unit; and measuring until settled.
 */
import { randomUUID } from 'node:crypto';
import {
  DeleteTableCommand,
  TransactWriteItemsCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { performance } from 'node:perf_hooks';
import { dynamoClient, ensureTable } from '../lib/store/table.ts';

/** Calls the API as the bench's user: the answer's JSON, or an error naming the call and its answer. */
export type ApiCall = (method: string, path: string, body?: unknown) => Promise<any>;

/** An `ApiCall` for the server at `url`, with `token`. */
export function apiCaller(url: string, token: string): ApiCall {
  return async (method, path, body) => {
    const r = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await r.json()) as any;
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json).slice(0, 400)}`);
    return json;
  };
}

/** The value after `--name` on the command line, if given. */
export function option(name: string): string | undefined {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** The Units a promotion's answer upgraded, over its Spaces. */
export const upgradedUnits = (answer: { Spaces: { Units: { Action: string }[] }[] }): number =>
  answer.Spaces.reduce((n, s) => n + s.Units.filter((u) => u.Action === 'Upgrade').length, 0);

/** How many of a fleet's Spaces are in dev (the first), and in dev and staging together (the rest are prod). */
export const stageCounts = (spaces: number) => ({
  dev: Math.ceil(spaces / 10),
  devAndStaging: Math.ceil((spaces * 4) / 10),
});

/**
 * Builds the fleet: the base `fleet-base` of `unitsPer` Units, `spaces` variants of it (10% dev, 30% staging, 60% prod),
 * the workflow `workflows/three-stages`, a change in the base (an image and the replicas) and its ChangeOrder
 * `fleet-base/bench`, not yet promoted.
 */
export async function buildFleet(call: ApiCall, spaces: number, unitsPer: number): Promise<void> {
  const units = Array.from({ length: unitsPer }, (_, i) => ({
    Slug: `svc-${i}`,
    Data: `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-${i}\n  namespace: confighubplaceholder\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        - name: svc-${i}\n          image: ghcr.io/acme/svc-${i}:v1\n`,
  }));
  await call('POST', '/variant/upload', { Component: 'fleet', Variant: 'base', Units: units });
  await call('POST', '/space', { Slug: 'workflows' });
  await call('POST', '/space/workflows/change_workflow', {
    Slug: 'three-stages',
    Stages: [
      { Name: 'dev', WhereSpace: "Labels.Stage = 'Development'" },
      { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging'" },
      { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'" },
    ],
  });
  const { dev, devAndStaging } = stageCounts(spaces);
  const stageOf = (i: number) => (i < dev ? 'Development' : i < devAndStaging ? 'Staging' : 'Production');
  let next = 0;
  let made = 0;
  const t0 = performance.now();
  // A large fleet says how far it has got, on one line (on standard error: --json output stays clean).
  const progress = spaces >= 1000;
  await Promise.all(
    Array.from({ length: spaces >= 1000 ? 8 : 4 }, async () => {
      while (next < spaces) {
        const i = next++;
        await call('POST', '/variant', {
          Name: `v${i}`,
          UpstreamSpaceID: 'fleet-base',
          Stage: stageOf(i),
          Namespace: 'fleet',
        });
        made++;
        if (progress && (made % 250 === 0 || made === spaces))
          process.stderr.write(
            `\r  building the fleet: ${made} of ${spaces} variants (${((performance.now() - t0) / 1000).toFixed(0)} s)${made === spaces ? '\n' : ''}`,
          );
      }
    }),
  );
  await call('POST', '/space/fleet-base/function/invoke', {
    FunctionName: 'set-image-reference-by-uri',
    Arguments: ['ghcr.io/acme/svc-0', ':v2'],
  });
  for (let i = 0; i < unitsPer; i++)
    await call('POST', '/space/fleet-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['2'],
      UnitIDs: [`svc-${i}`],
    });
  await call('POST', '/space/fleet-base/change_order', { Slug: 'bench', ChangeWorkflowID: 'workflows/three-stages' });
}

/**
 * The fewest Units a ceiling is measured over. Over a 10-Space fleet's 50 it was a tenth of a second, four rounds of 16
 * transactions, the last with 2 in flight: a rate low by up to a fifth, and the noisiest number of the run.
 */
export const CEILING_UNITS = 1000;
/** The most Units a ceiling is measured over. */
export const CEILING_MOST_UNITS = 5000;

/** Measures again until two measurements in a row agree within `within` (a fraction), at least `min` and at most `max` times: each rate measured. */
export async function settle(
  measure: () => Promise<number>,
  within: number,
  min: number,
  max: number,
): Promise<number[]> {
  const rates: number[] = [];
  while (rates.length < max) {
    rates.push(await measure());
    const [a, b] = rates.slice(-2);
    if (rates.length >= min && a !== undefined && b !== undefined && Math.abs(b - a) <= within * Math.max(a, b)) break;
  }
  return rates;
}

/** Drops a table once measured: an in-memory engine otherwise holds every fleet and ceiling of the run, and its heap grows with them. */
export async function dropTable(client: DynamoDBClient, table: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: table }));
}

/**
 * The engine's ceiling for the least a promotion can write per Unit: one transaction of four items
 * (the revision, the head, the start and end marks), 16 in flight, over the same number of Units (at least CEILING_UNITS). With
 * `perSpace`, the write a promotion does make, in bare form: seven items per Unit (the Unit's head
 * updated if its Version matches, the revision with its data, its mutation record, the start, end and
 * release marks, each also in the by-Unit index, and the Link's cursor updated if its Version matches),
 * a Space's `perSpace` Units in one transaction, as a promotion writes them.
 */
export async function ceiling(endpoint: string, asked: number, perSpace = 0): Promise<number> {
  // A rate: over 5,000 Units it is as steady as over 50,000, which at 10,000 Spaces would take minutes each time.
  const units = Math.min(Math.max(CEILING_UNITS, asked), CEILING_MOST_UNITS);
  const client = dynamoClient(endpoint);
  const table = `ceiling-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const item = (pk: string, sk: string, extra: Record<string, AttributeValue> = {}) => ({
    Put: { TableName: table, Item: { pk: { S: pk }, sk: { S: sk }, ...extra } },
  });
  const guarded = (pk: string, sk: string, extra: Record<string, AttributeValue>) => ({
    Update: {
      TableName: table,
      Key: { pk: { S: pk }, sk: { S: sk } },
      UpdateExpression: `SET ${Object.keys(extra)
        .map((k, i) => `#a${i} = :v${i}`)
        .join(', ')}`,
      ConditionExpression: 'attribute_not_exists(Version) OR Version = :v0',
      ExpressionAttributeNames: Object.fromEntries(Object.keys(extra).map((k, i) => [`#a${i}`, k])),
      ExpressionAttributeValues: Object.fromEntries(Object.values(extra).map((v, i) => [`:v${i}`, v])),
    },
  });
  const writeOf = (i: number) => {
    const u = `unit-${i}`;
    const mark = (role: string, rev: string, extra: Record<string, AttributeValue> = {}) =>
      item(`${role}#${u}`, u, {
        RevisionNum: { N: rev },
        gsi1pk: { S: u },
        gsi1sk: { S: role },
        SpaceID: { S: `space-${i % 100}` },
        UpdatedAt: { S: '2026-12-03T00:00:00.000Z' },
        ...extra,
      });
    return perSpace
      ? [
          guarded(`space-${i % 100}`, `unit#${u}`, {
            Version: { N: '1' },
            HeadRevisionNum: { N: '2' },
            DataHash: { S: 'h'.repeat(64) },
            UpdatedAt: { S: '2026-12-03T00:00:00.000Z' },
          }),
          item(u, 'rev#0000000002', {
            Data: { S: 'x'.repeat(600) },
            DataHash: { S: 'h'.repeat(64) },
            Description: { S: 'change order bench' },
          }),
          item(u, 'mut#0000000002', { Source: { S: 'Merge' }, Changes: { S: 'x'.repeat(200) } }),
          mark('start', '1'),
          mark('end', '2'),
          mark('publish', '2'),
          guarded(`space-${i % 100}`, `link#${u}`, {
            Version: { N: '1' },
            UpstreamLastMergedRevisionNum: { N: '2' },
            gsi1pk: { S: `up-${u}` },
            gsi1sk: { S: u },
          }),
        ]
      : [
          item(u, 'rev#0000000002', { Data: { S: 'x'.repeat(600) } }),
          item(u, 'head', { HeadRevisionNum: { N: '2' }, Version: { N: '2' } }),
          item(`start#${u}`, u, { RevisionNum: { N: '1' } }),
          item(`end#${u}`, u, { RevisionNum: { N: '2' } }),
        ];
  };
  const step = Math.max(1, perSpace);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < units) {
        const first = next;
        next += step;
        const TransactItems = [];
        for (let i = first; i < Math.min(units, first + step); i++) TransactItems.push(...writeOf(i));
        await client.send(new TransactWriteItemsCommand({ TransactItems }));
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await dropTable(client, table);
  client.destroy();
  return units / seconds;
}

/**
 * The ceiling's write again over 3,000 Units until two runs agree within 5% (at least 2, at most 6): a cold DynamoDB Local
 * writes at half its speed, and its JIT compiles as it runs. Each rate measured.
 */
export function warmCeiling(endpoint: string): Promise<number[]> {
  return settle(() => ceiling(endpoint, 3000), 0.05, 2, 6);
}

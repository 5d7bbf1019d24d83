import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  ScanCommand,
  type AttributeValue,
  type BatchWriteItemCommandOutput,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { inject } from 'vitest';
import type { Deps } from '../../lib/ports/deps.ts';
import type { InProcessBus } from '../../lib/events/bus.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import type { LocalJobPool } from '../../lib/local/jobs.ts';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import type { Caller } from '../../lib/model/entities.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';

/** A response as the tests read it. */
export interface Res {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** Calls the API as one user. */
export class Api {
  constructor(
    readonly url: string,
    readonly token: string | undefined,
    readonly caller?: Caller,
  ) {}
  async call(method: string, path: string, body?: unknown): Promise<Res> {
    const res = await fetch(this.url + path, {
      method,
      headers: {
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
  }
  get = (p: string) => this.call('GET', p);
  post = (p: string, b?: unknown) => this.call('POST', p, b);
  patch = (p: string, b: unknown) => this.call('PATCH', p, b);
  del = (p: string) => this.call('DELETE', p);
}

/** A local API over DynamoDB Local, on a table of its own, with two organizations. */
export interface Env {
  url: string;
  deps: Deps;
  bus: InProcessBus;
  api: Api;
  other: Api;
  anonymous: Api;
  server: LocalServer;
  pool: LocalJobPool;
  table: string;
  close(): Promise<void>;
}

/**
 * A fresh API on a table of its own, with two organizations; with `copyOf`, on a copy of that Env's table
 * instead (its items as they are now, its organizations and tokens, the events it has put): a file that
 * seeds a fleet once starts each test from a copy of it, a scan and a few batch writes instead of the
 * seeding requests again. With `now`, the server's clock is that function (deploy windows, expiries).
 */
export async function startEnv(
  o: { copyOf?: Env; now?: () => Date; sleep?: (ms: number) => Promise<void> } = {},
): Promise<Env> {
  const endpoint = inject('dynamoEndpoint');
  const table = `test-${randomUUID().slice(0, 8)}`;
  const client = dynamoClient(endpoint);
  await ensureTable(client, table);
  if (o.copyOf) await copyItems(client, o.copyOf.table, table);
  const { deps, bus, pool } = localDeps(
    dynamoStore(client, table),
    { ...(o.now ? { now: o.now } : {}), ...(o.sleep ? { sleep: o.sleep } : {}) },
    {
      keepEventLog: true,
    },
  );
  if (o.copyOf) bus.log.push(...o.copyOf.bus.log);
  // Every answer is parsed with its route's schema (lib/api/answers.ts): one not as declared is a 500 naming what differs.
  const server = await startServer(deps, { checkAnswers: true });
  // A copy holds the same organizations: their callers and tokens are the original's.
  const [a, b] = o.copyOf
    ? ([o.copyOf.api, o.copyOf.other] as const)
    : ([await createOrganization(deps, `org-${table}`), await createOrganization(deps, `other-${table}`)] as const);
  return {
    url: server.url,
    deps,
    bus,
    api: new Api(server.url, a.token, a.caller),
    other: new Api(server.url, b.token, b.caller),
    anonymous: new Api(server.url, undefined),
    server,
    pool,
    table,
    async close() {
      await server.close();
      client.destroy();
    },
  };
}

/** Every item of one table written to another (empty) one, 25 to a batch. */
async function copyItems(client: ReturnType<typeof dynamoClient>, from: string, to: string): Promise<void> {
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: from, ExclusiveStartKey: start }));
    const items = page.Items ?? [];
    for (let i = 0; i < items.length; i += 25) {
      let writes: WriteRequest[] | undefined = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
      while (writes?.length) {
        const r: BatchWriteItemCommandOutput = await client.send(
          new BatchWriteItemCommand({ RequestItems: { [to]: writes } }),
        );
        writes = r.UnprocessedItems?.[to];
      }
    }
    start = page.LastEvaluatedKey;
  } while (start);
}

/** Kubernetes YAML for a Deployment, for tests. */
export function deploymentYaml(
  name: string,
  opts: { replicas?: number; image?: string; namespace?: string } = {},
): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${opts.namespace ?? 'confighubplaceholder'}
spec:
  replicas: ${opts.replicas ?? 1}
  template:
    spec:
      containers:
        - name: ${name}
          image: ${opts.image ?? `ghcr.io/acme/${name}:v1`}
`;
}

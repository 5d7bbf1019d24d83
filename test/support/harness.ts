import { randomUUID } from 'node:crypto';
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

export async function startEnv(): Promise<Env> {
  const endpoint = inject('dynamoEndpoint');
  const table = `test-${randomUUID().slice(0, 8)}`;
  const client = dynamoClient(endpoint);
  await ensureTable(client, table);
  const { deps, bus, pool } = localDeps(dynamoStore(client, table), {}, { keepEventLog: true });
  // Every answer is parsed with its route's schema (lib/api/answers.ts): one not as declared is a 500 naming what differs.
  const server = await startServer(deps, { checkAnswers: true });
  const a = await createOrganization(deps, `org-${table}`);
  const b = await createOrganization(deps, `other-${table}`);
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

/** A local Baton for a benchmark: DynamoDB Local (unless AWS_ENDPOINT_URL), a fresh table, the API server and one organization's token. */
import { randomUUID } from 'node:crypto';
import { createOrganization } from '../lib/local/bootstrap.ts';
import { startDynamoLocal } from '../lib/local/dynamo.ts';
import { startServer } from '../lib/local/server.ts';
import { localDeps } from '../lib/local/wiring.ts';
import { dynamoStore } from '../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../lib/store/table.ts';

export interface BenchServer {
  url: string;
  token: string;
  /** Calls the API as the organization's admin; the status, the body read and dropped. */
  call(method: string, path: string, body?: unknown): Promise<number>;
  /** The API's JSON answer to a GET. */
  get<T>(path: string): Promise<T>;
  close(): Promise<void>;
}

export async function benchServer(prefix: string): Promise<BenchServer> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const dynamo = process.env.AWS_ENDPOINT_URL ? undefined : await startDynamoLocal();
  const client = dynamoClient(process.env.AWS_ENDPOINT_URL ?? dynamo!.endpoint);
  const table = `${prefix}-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps } = localDeps(dynamoStore(client, table));
  const server = await startServer(deps);
  const { token } = await createOrganization(deps, `${prefix}-${table}`);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return {
    url: server.url,
    token,
    async call(method, path, body) {
      const r = await fetch(server.url + path, {
        method,
        headers,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      await r.arrayBuffer();
      return r.status;
    },
    async get<T>(path: string) {
      return (await (await fetch(server.url + path, { headers })).json()) as T;
    },
    async close() {
      await server.close();
      await dynamo?.stop();
    },
  };
}

/**
 * `npm run soak`: mixed requests against a local server over DynamoDB Local for SOAK_MINUTES (30 by
 * default), printing the server process's RSS and heap every SOAK_EVERY_SECONDS (30): they should stay
 * flat (the in-process bus keeps nothing it has delivered; events leave the outbox once published).
 */
import { randomUUID } from 'node:crypto';
import { createOrganization } from '../lib/local/bootstrap.ts';
import { startDynamoLocal } from '../lib/local/dynamo.ts';
import { startServer } from '../lib/local/server.ts';
import { localDeps } from '../lib/local/wiring.ts';
import { DynamoStore } from '../lib/store/dynamo-store.ts';
import { dynamoClient, ensureTable } from '../lib/store/table.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const minutes = Number(process.env.SOAK_MINUTES ?? 30);
const every = Number(process.env.SOAK_EVERY_SECONDS ?? 30) * 1000;
const dynamo = process.env.AWS_ENDPOINT_URL ? undefined : await startDynamoLocal();
try {
  const client = dynamoClient(process.env.AWS_ENDPOINT_URL ?? dynamo!.endpoint);
  const table = `soak-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps } = localDeps(new DynamoStore(client, table));
  const server = await startServer(deps);
  const { token } = await createOrganization(deps, `soak-${table}`);
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    await r.arrayBuffer();
    return r.status;
  };
  const yaml = (i: number, replicas: number) => `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-${i}\n  namespace: soak\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n        - name: svc\n          image: ghcr.io/acme/svc:v${replicas}\n`;
  await call('POST', '/space', { Slug: 'infra' });
  await call('POST', '/space/infra/target', { Slug: 'cluster' });
  await call('POST', '/space', { Slug: 'soak', ReleaseTargetID: 'infra/cluster', Labels: { tier: 'web' } });
  for (let i = 0; i < 10; i++) await call('POST', '/space/soak/unit', { Slug: `svc-${i}`, Data: yaml(i, 1) });
  const start = Date.now();
  let n = 0;
  let nextReport = start;
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  console.log('minute  requests  rss MB  heap MB');
  while (Date.now() - start < minutes * 60_000) {
    const i = n % 10;
    const unit = (await (await fetch(`${server.url}/space/soak/unit/svc-${i}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { Version: number };
    await call('PATCH', `/space/soak/unit/svc-${i}`, { Version: unit.Version, Data: yaml(i, (n % 7) + 1) });
    await call('GET', `/space?where=${encodeURIComponent("Labels.tier ~ '^w(e|b)+$'")}`);
    await call('GET', '/space/soak/unit');
    if (n % 10 === 0) {
      const rel = await call('POST', '/space/soak/release', {});
      if (rel < 300) await call('POST', '/hooks/argocd', { app: { metadata: { name: 'soak', annotations: { 'baton.io/space': 'soak', 'baton.io/release': '1' } }, status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } } }, pad: 'p'.repeat(200_000) });
    }
    n++;
    if (Date.now() >= nextReport) {
      const m = process.memoryUsage();
      console.log(`${((Date.now() - start) / 60_000).toFixed(1).padStart(6)}  ${String(n).padStart(8)}  ${mb(m.rss).padStart(6)}  ${mb(m.heapUsed).padStart(7)}`);
      nextReport += every;
    }
  }
  await server.close();
} finally {
  await dynamo?.stop();
}

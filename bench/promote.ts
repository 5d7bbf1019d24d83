/**
 * `npm run bench`: builds a fleet (a base of M Units and N variant Spaces across dev, staging and
 * prod), promotes one ChangeOrder through the three stages, and prints Units promoted per second and
 * DynamoDB requests per Unit promoted, then the same at N/4, with the ratios, all from one run.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createOrganization } from '../lib/local/bootstrap.ts';
import { startDynamoLocal } from '../lib/local/dynamo.ts';
import { startServer } from '../lib/local/server.ts';
import { localDeps } from '../lib/local/wiring.ts';
import { DynamoStore } from '../lib/store/dynamo-store.ts';
import { dynamoClient, ensureTable } from '../lib/store/table.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const N = Number(process.env.BENCH_SPACES ?? 200);
const M = Number(process.env.BENCH_UNITS ?? 5);

interface Run {
  spaces: number;
  units: number;
  seconds: number;
  requests: number;
}

async function fleet(endpoint: string, spaces: number, unitsPer: number): Promise<Run> {
  const client = dynamoClient(endpoint);
  let requests = 0;
  client.middlewareStack.add((next) => async (args) => {
    requests++;
    return next(args);
  }, { step: 'initialize', name: 'countRequests' });
  const table = `bench-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps } = localDeps(new DynamoStore(client, table));
  const server = await startServer(deps);
  const { token } = await createOrganization(deps, `bench-${table}`);
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await r.json()) as any;
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json).slice(0, 400)}`);
    return json;
  };
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
  const stageOf = (i: number) => (i < Math.ceil(spaces / 10) ? 'Development' : i < Math.ceil((spaces * 4) / 10) ? 'Staging' : 'Production');
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < spaces) {
        const i = next++;
        await call('POST', '/variant', { Name: `v${i}`, UpstreamSpaceID: 'fleet-base', Stage: stageOf(i), Namespace: 'fleet' });
      }
    }),
  );
  await call('POST', '/space/fleet-base/function/invoke', { FunctionName: 'set-image-reference-by-uri', Arguments: ['ghcr.io/acme/svc-0', ':v2'] });
  for (let i = 0; i < unitsPer; i++) await call('POST', '/space/fleet-base/function/invoke', { FunctionName: 'set-replicas', Arguments: ['2'], UnitIDs: [`svc-${i}`] });
  await call('POST', '/space/fleet-base/change_order', { Slug: 'bench', ChangeWorkflowID: 'workflows/three-stages' });
  requests = 0;
  const t0 = performance.now();
  let promoted = 0;
  for (const stage of ['dev', 'staging', 'prod']) {
    const r = await call('POST', '/promote', { ChangeOrderID: 'fleet-base/bench', TargetStage: stage });
    if (r.Landed !== r.Total) throw new Error(`stage ${stage}: ${r.Landed} of ${r.Total} landed: ${r.Message}`);
    promoted += r.Spaces.reduce((n: number, s: any) => n + s.Units.filter((u: any) => u.Action === 'Upgrade').length, 0);
  }
  const seconds = (performance.now() - t0) / 1000;
  const counted = requests;
  await server.close();
  client.destroy();
  if (promoted !== spaces * unitsPer) throw new Error(`expected ${spaces * unitsPer} units upgraded, got ${promoted}`);
  return { spaces, units: promoted, seconds, requests: counted };
}

function row(label: string, r: Run): string {
  return [label.padEnd(8), String(r.spaces).padStart(6), String(r.units).padStart(6), r.seconds.toFixed(2).padStart(9), (r.units / r.seconds).toFixed(1).padStart(8), String(r.requests).padStart(9), (r.requests / r.units).toFixed(2).padStart(13)].join('  ');
}

const dynamo = process.env.AWS_ENDPOINT_URL ? undefined : await startDynamoLocal();
try {
  const endpoint = process.env.AWS_ENDPOINT_URL ?? dynamo!.endpoint;
  console.log(`Fleet: a base of ${M} units; spaces 10% dev, 30% staging, 60% prod; one change order promoted through all three stages.\n`);
  const big = await fleet(endpoint, N, M);
  const small = await fleet(endpoint, Math.max(4, Math.round(N / 4)), M);
  console.log(['fleet'.padEnd(8), 'spaces'.padStart(6), 'units'.padStart(6), 'promote s'.padStart(9), 'units/s'.padStart(8), 'requests'.padStart(9), 'requests/unit'.padStart(13)].join('  '));
  console.log(row('N', big));
  console.log(row('N/4', small));
  console.log(`\nrequests per unit, N vs N/4: ${(big.requests / big.units / (small.requests / small.units)).toFixed(2)}x (1.00x: the cost of a unit does not grow with the fleet)`);
  console.log(`units per second, N vs N/4:  ${(big.units / big.seconds / (small.units / small.seconds)).toFixed(2)}x`);
} finally {
  await dynamo?.stop();
}

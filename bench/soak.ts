/**
 * `npm run soak`: mixed requests against a local server over DynamoDB Local for SOAK_MINUTES (30 by
 * default), printing the server process's RSS and heap every SOAK_EVERY_SECONDS (30): they should stay
 * flat (the in-process bus keeps nothing it has delivered; events leave the outbox once published).
 */
import { benchServer } from './server.ts';

const minutes = Number(process.env.SOAK_MINUTES ?? 30);
const every = Number(process.env.SOAK_EVERY_SECONDS ?? 30) * 1000;
const server = await benchServer('soak');
const { call } = server;
try {
  const yaml = (i: number, replicas: number) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-${i}\n  namespace: soak\nspec:\n  replicas: ${replicas}\n  template:\n    spec:\n      containers:\n        - name: svc\n          image: ghcr.io/acme/svc:v${replicas}\n`;
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
    const unit = await server.get<{ Version: number }>(`/space/soak/unit/svc-${i}`);
    await call('PATCH', `/space/soak/unit/svc-${i}`, { Version: unit.Version, Data: yaml(i, (n % 7) + 1) });
    await call('GET', `/space?where=${encodeURIComponent("Labels.tier ~ '^w(e|b)+$'")}`);
    await call('GET', '/space/soak/unit');
    if (n % 10 === 0) {
      const rel = await call('POST', '/space/soak/release', {});
      if (rel < 300)
        await call('POST', '/hooks/argocd', {
          app: {
            metadata: { name: 'soak', annotations: { 'baton.io/space': 'soak', 'baton.io/release': '1' } },
            status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } },
          },
          pad: 'p'.repeat(200_000),
        });
    }
    n++;
    if (Date.now() >= nextReport) {
      const m = process.memoryUsage();
      console.log(
        `${((Date.now() - start) / 60_000).toFixed(1).padStart(6)}  ${String(n).padStart(8)}  ${mb(m.rss).padStart(6)}  ${mb(m.heapUsed).padStart(7)}`,
      );
      nextReport += every;
    }
  }
} finally {
  await server.close();
}

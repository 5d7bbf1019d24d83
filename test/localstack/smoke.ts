/**
 * The smoke test of a deployed Baton, through its HTTP API only: a Space, a Unit, a ChangeOrder
 * promoted, a Release, an Argo CD report of it, and the Stage re-evaluated to Completed by the event
 * consumer (on AWS or LocalStack, asynchronously through EventBridge; locally at once).
 */
const deployment = (tag: string) =>
  `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: smoke\n  namespace: smoke\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        - name: smoke\n          image: ghcr.io/acme/smoke:${tag}\n`;

export async function smoke(
  url: string,
  token: string,
  log: (line: string) => void = () => undefined,
  o: { waitMs?: number } = {},
): Promise<void> {
  const run = Math.random().toString(36).slice(2, 8);
  const call = async (method: string, path: string, body?: unknown, want?: number) => {
    const res = await fetch(url.replace(/\/$/, '') + path, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (want !== undefined ? res.status !== want : res.status >= 300)
      throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
    log(`${method} ${path} → ${res.status}`);
    return text ? (JSON.parse(text) as Record<string, any>) : {};
  };
  const infra = `smoke-${run}-infra`;
  const base = `smoke-${run}-base`;
  const dev = `smoke-${run}-dev`;
  await call('POST', '/space', { Slug: infra });
  await call('POST', `/space/${infra}/target`, { Slug: 'cluster' });
  await call('POST', '/variant/upload', {
    Component: `smoke-${run}`,
    Variant: 'base',
    Units: [{ Slug: 'deployment', Data: deployment('v1') }],
  });
  await call('POST', '/variant', {
    Name: 'dev',
    UpstreamSpaceID: base,
    Stage: 'Development',
    ReleaseTargetID: `${infra}/cluster`,
  });
  await call('POST', `/space/${base}/change_workflow`, {
    Slug: 'w',
    Stages: [{ Name: 'Development', WhereSpace: "Labels.Stage = 'Development'" }],
    Final: { Prerequisites: ['Released', 'Healthy'] },
  });
  await call('POST', `/space/${base}/function/invoke`, {
    FunctionName: 'set-image-reference-by-uri',
    Arguments: ['ghcr.io/acme/smoke', ':v2'],
    UnitIDs: ['deployment'],
  });
  await call('POST', `/space/${base}/change_order`, { Slug: 'v2', ChangeWorkflowID: `${base}/w` });
  const promoted = await call('POST', '/promote', { ChangeOrderID: `${base}/v2` });
  if (promoted.Stage !== 'Development' || promoted.Landed !== 1)
    throw new Error(`promote: expected Development, 1 landed; got ${JSON.stringify(promoted)}`);
  const release = await call('POST', `/space/${dev}/release`, { Revision: `ChangeOrder:${base}/v2` });
  const before = await call('GET', `/space/${base}/change_order/v2`);
  if (before.Stage === 'Completed')
    throw new Error('the change order completed before its Release was reported Healthy');
  await call(
    'POST',
    '/hooks/argocd',
    {
      app: {
        metadata: {
          name: `${dev}-app`,
          namespace: 'argocd',
          annotations: { 'baton.io/space': dev, 'baton.io/release': String(release.Release.ReleaseNum) },
        },
        status: {
          sync: { status: 'Synced', revision: 'smoke' },
          health: { status: 'Healthy' },
          operationState: { phase: 'Succeeded', finishedAt: new Date().toISOString() },
          reconciledAt: new Date().toISOString(),
        },
      },
    },
    200,
  );
  // The hook applied the report to the Release; the Stage re-evaluation follows it the Stage re-evaluation, through the bus: wait for it.
  const deadline = Date.now() + (o.waitMs ?? 90_000);
  for (;;) {
    const co = await call('GET', `/space/${base}/change_order/v2`);
    if (co.Stage === 'Completed') return log(`change order ${base}/v2 Completed after the Healthy report`);
    if (Date.now() > deadline)
      throw new Error(
        `the change order is still at ${co.Stage} ${o.waitMs ?? 90_000} ms after the Healthy report: the event consumer did not re-evaluate it`,
      );
    await new Promise((r) => setTimeout(r, 2000));
  }
}

import { randomBytes, randomUUID } from 'node:crypto';
import { fc } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import { startServer } from '../../lib/local/server.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import type { Store, StoreOp } from '../../lib/ports/store.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';
import { Api, deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
  await env.api.post('/space', { Slug: 'infra' });
  await env.api.post('/space/infra/target', { Slug: 'cluster' });
  await env.api.post('/space', { Slug: 'hard', ReleaseTargetID: 'infra/cluster' });
  await env.api.post('/space/hard/unit', { Slug: 'app', Data: deploymentYaml('app', { namespace: 'prod' }) });
});
afterAll(async () => env.close());

const raw = async (method: string, path: string, body: string | Buffer, headers: Record<string, string> = {}) => {
  const res = await fetch(env.url + path, {
    method,
    headers: { authorization: `Bearer ${env.api.token}`, 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers };
};

describe('early, clear refusals', () => {
  it('refuses a hook body over 256 KB (EventBridge’s limit) and any body over the limit while it streams, with a 413', async () => {
    const hook = await raw(
      'POST',
      '/hooks/argocd',
      JSON.stringify({ app: { metadata: { name: 'x' } }, pad: 'p'.repeat(300 * 1024) }),
    );
    expect(hook.status).toBe(413);
    expect(JSON.parse(hook.text).Message).toMatch(/more than this route takes \(256 KB\)/);
    const huge = await raw('POST', '/space/hard/unit', Buffer.alloc(8 * 1024 * 1024, 'a'));
    expect(huge.status).toBe(413);
  });

  it('refuses data that would pass an item’s 400 KB, before anything is written', async () => {
    const noise = randomBytes(450 * 1024).toString('base64');
    const r = await env.api.post('/space/hard/unit', {
      Slug: 'noise',
      Data: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: noise\ndata:\n  blob: ${noise}\n`,
    });
    expect(r.status).toBe(413);
    expect(r.body.Message).toMatch(/compresses to \d+ bytes/);
    expect((await env.api.get('/space/hard/unit/noise')).status).toBe(404);
  });

  it('writes a large Unit (80,000 keys) whose Mutation keeps its size in check', async () => {
    const data = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n${Array.from({ length: 80000 }, (_, i) => `  k${i}: v${i}\n`).join('')}`;
    const r = await env.api.post('/space/hard/unit', { Slug: 'big', Data: data });
    expect(r.status).toBe(201);
    expect(r.body.DataSize).toBe(Buffer.byteLength(data));
    const muts = (await env.api.get('/space/hard/unit/big/mutation')).body;
    expect(muts[0].Changes).toEqual([{ Resource: 'ConfigMap/big', Path: '', Op: 'Add', ValueOmitted: true }]);
  });

  it('answers a bad %-escape, YAML tricks and prototype-named keys with 4xx, never 500', async () => {
    expect((await env.api.get('/space/%E0%A4%A')).status).toBe(400);
    expect(
      (await env.api.post('/space/hard/unit', { Slug: 'tag', Data: 'kind: A\nmetadata:\n  name: !!js/function x\n' }))
        .status,
    ).toBe(400);
    const bad = await env.api.post('/space', '{"Slug":"proto","Labels":{"__proto__":{"polluted":"y"}}}');
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toBe(
      "request body has a key '__proto__', which is not allowed anywhere (it names an object's prototype)",
    );
    const created = await env.api.post('/space', { Slug: 'proto', Labels: { constructor: 'x', toString: 'z' } });
    expect(created.status).toBe(201);
    expect(created.body.Labels).toEqual({ constructor: 'x', toString: 'z' });
    const found = await env.api.get(`/space?where=${encodeURIComponent("Labels.constructor = 'x'")}`);
    expect(found.body.map((s: { Slug: string }) => s.Slug)).toEqual(['proto']);
    expect((await env.api.get(`/space?where=${encodeURIComponent('Labels.hasOwnProperty IS NOT NULL')}`)).body).toEqual(
      [],
    );
  });

  it('refuses a live-status report from the future or of no time on the route, and drops it from a hook', async () => {
    const published = await env.api.post('/space/hard/release', {});
    expect(published.status).toBe(201);
    const num = published.body.Release.ReleaseNum;
    const rel = (await env.api.get(`/space/hard/release/${num}`)).body;
    const future = await env.api.patch(`/space/hard/release/${num}`, {
      Version: rel.Version,
      LiveStatus: { Sync: 'Synced', Health: 'Healthy', ObservedAt: '2999-01-01T00:00:00Z' },
    });
    expect(future.status).toBe(400);
    expect(future.body.Message).toMatch(/ObservedAt 2999-01-01T00:00:00Z is more than 5 minutes ahead/);
    const hook = await env.api.post('/hooks/argocd', {
      app: {
        metadata: { name: 'hard-app', annotations: { 'baton.io/space': 'hard', 'baton.io/release': String(num) } },
        status: {
          sync: { status: 'Synced' },
          health: { status: 'Healthy' },
          operationState: { phase: 'Succeeded', finishedAt: '2999-01-01T00:00:00Z' },
        },
      },
    });
    expect([hook.status, hook.body.Message]).toEqual([
      400,
      expect.stringMatching(/ObservedAt 2999-01-01T00:00:00Z is more than 5 minutes ahead/),
    ]);
    expect((await env.api.get(`/space/hard/release/${num}`)).body.LiveStatus ?? {}).toEqual({});
  });
});

describe('the database away', () => {
  it('answers 503 with Retry-After, not 500', async () => {
    const client = dynamoClient('http://127.0.0.1:9');
    const { deps } = localDeps(dynamoStore(client, 'nowhere'));
    const server = await startServer(deps);
    try {
      const r = await fetch(`${server.url}/space`, { headers: { authorization: 'Bearer bt_whatever' } });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('2');
      expect(((await r.json()) as { Code: string }).Code).toBe('Unavailable');
    } finally {
      await server.close();
    }
  });
});

/** A store whose transactions fail (as the database going away would) while `down` says so of what they write. */
function flaky(store: Store, down: (ops: StoreOp[]) => boolean): Store {
  const gone = () =>
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { name: 'Error', code: 'ECONNREFUSED' });
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (prop === 'transact') {
        return async (ops: StoreOp[]) => {
          if (down(ops)) throw gone();
          return target.transact(ops);
        };
      }
      if (prop === 'transactGroups') {
        return async (...a: Parameters<Store['transactGroups']>) => {
          if (down(a[0].flat())) throw gone();
          return target.transactGroups(...a);
        };
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('promotion failures, always recorded', () => {
  it('reports and records a wave the database left part-way, refuses to release a partly landed Space, and a rerun finishes it', async () => {
    const client = dynamoClient(inject('dynamoEndpoint'));
    const table = `fault-${randomUUID().slice(0, 8)}`;
    await ensureTable(client, table);
    // While `failing`, a write that records a Space's progress finds the database gone (one each).
    let failing = 0;
    const { deps } = localDeps(
      flaky(
        dynamoStore(client, table),
        (ops) => failing > 0 && ops.some((o) => o.kind === 'Progress' && o.op === 'create') && failing-- > 0,
      ),
    );
    const server = await startServer(deps);
    const { token } = await createOrganization(deps, `fault-${table}`);
    const api = new Api(server.url, token);
    try {
      const units = Array.from({ length: 4 }, (_, i) => ({ Slug: `svc-${i}`, Data: deploymentYaml(`svc-${i}`) }));
      expect((await api.post('/variant/upload', { Component: 'acme', Variant: 'base', Units: units })).status).toBe(
        201,
      );
      await api.post('/space', { Slug: 'infra' });
      for (const t of ['t1', 't2', 't3']) await api.post('/space/infra/target', { Slug: t });
      for (const [i, v] of ['p1', 'p2', 'p3'].entries())
        expect(
          (
            await api.post('/variant', {
              Name: v,
              UpstreamSpaceID: 'acme-base',
              Stage: 'Production',
              ReleaseTargetID: `infra/t${i + 1}`,
            })
          ).status,
        ).toBe(201);
      await api.post('/space/acme-base/change_workflow', {
        Slug: 'w',
        Stages: [{ Name: 'Production', WhereSpace: "Labels.Stage = 'Production'" }],
      });
      await api.post('/space/acme-base/function/invoke', {
        FunctionName: 'set-replicas',
        Arguments: ['3'],
        UnitIDs: units.map((u) => u.Slug),
      });
      expect(
        (await api.post('/space/acme-base/change_order', { Slug: 'scale', ChangeWorkflowID: 'acme-base/w' })).status,
      ).toBe(201);
      // A Link that travels with the promotion: each Space's Units land first, then the Links are copied and the progress recorded.
      expect(
        (
          await api.post('/space/acme-base/link', {
            Slug: 'svc-0-needs-svc-1',
            FromUnitID: 'svc-0',
            ToUnitID: 'svc-1',
            UpdateType: 'None',
          })
        ).status,
      ).toBe(201);
      // The database goes away after the Units of the Spaces landed, as two of them come to record their progress, and comes back.
      failing = 2;
      const first = await api.post('/promote', { ChangeOrderID: 'acme-base/scale' });
      expect(first.status).toBe(207);
      const failed = first.body.Spaces.filter((s: { Action: string }) => s.Action === 'Failed');
      expect(failed).toHaveLength(2);
      expect(failing).toBe(0);
      for (const s of failed) expect(s.Error).toMatch(/stopped part-way .*ECONNREFUSED.*promote again to finish/);
      const co = (await api.get('/space/acme-base/change_order/scale')).body;
      expect(co.PromotionFailures).toHaveLength(1);
      expect(co.PromotionFailures[0].Spaces.map((s: { SpaceSlug: string }) => s.SpaceSlug).sort()).toEqual(
        failed.map((s: { SpaceSlug: string }) => s.SpaceSlug).sort(),
      );
      expect(co.PromotionLease).toBeUndefined();
      // A Space some of whose Units took the change is not released as the change until a rerun finishes it.
      const marks = (await api.get('/space/acme-base/tag/scale-co-end')).body.Marks as { SpaceID: string }[];
      const partial = [];
      for (const s of failed) {
        const sp = (await api.get(`/space/${s.SpaceSlug}`)).body;
        if (marks.some((m) => m.SpaceID === sp.SpaceID)) partial.push(s.SpaceSlug);
      }
      expect(partial).toHaveLength(2);
      for (const slug of partial) {
        const r = await api.post(`/space/${slug}/release`, { Revision: 'ChangeOrder:acme-base/scale' });
        expect(r.status).toBe(409);
        expect(r.body.Message).toMatch(/has only partly landed in space/);
      }
      const rerun = await api.post('/promote', { ChangeOrderID: 'acme-base/scale' });
      expect(rerun.status).toBe(200);
      expect((await api.get('/space/acme-base/change_order/scale')).body).toMatchObject({ State: 'Resolved' });
      for (const v of ['p1', 'p2', 'p3'])
        expect((await api.get(`/space/acme-${v}/unit/svc-3/data`)).text).toContain('replicas: 3');
    } finally {
      await server.close();
    }
  });

  it('runs one promotion of a change order at a time: the others answer 409 and record nothing', async () => {
    await env.api.post('/variant/upload', {
      Component: 'race',
      Variant: 'base',
      Units: [{ Slug: 'svc', Data: deploymentYaml('svc') }],
    });
    for (const v of ['r1', 'r2', 'r3', 'r4'])
      await env.api.post('/variant', { Name: v, UpstreamSpaceID: 'race-base', Stage: 'Production' });
    await env.api.post('/space/race-base/change_workflow', {
      Slug: 'w',
      Stages: [{ Name: 'Production', WhereSpace: "Labels.Stage = 'Production'" }],
    });
    await env.api.post('/space/race-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['5'],
      UnitIDs: ['svc'],
    });
    await env.api.post('/space/race-base/change_order', { Slug: 'go', ChangeWorkflowID: 'race-base/w' });
    const answers = await Promise.all([0, 1, 2].map(() => env.api.post('/promote', { ChangeOrderID: 'race-base/go' })));
    const statuses = answers.map((a) => a.status).sort();
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(answers.map((a) => a.body)),
    ).toHaveLength(1);
    expect(statuses.filter((s) => s === 200 || s === 409)).toHaveLength(3);
    for (const a of answers.filter((x) => x.status === 409))
      expect(a.body.Message).toMatch(/is being promoted already .*promotion in progress/);
    const co = (await env.api.get('/space/race-base/change_order/go')).body;
    expect(co).toMatchObject({ State: 'Resolved', PromotionFailures: [] });
  });

  it('reads the gates again when another promotion finished between its read of the change order and its lease', async () => {
    const client = dynamoClient(inject('dynamoEndpoint'));
    const table = `lease-${randomUUID().slice(0, 8)}`;
    await ensureTable(client, table);
    // The first lease this promotion asks for waits until another whole promotion of the same change order has run.
    let other: (() => Promise<unknown>) | undefined;
    const raw = dynamoStore(client, table);
    const store = new Proxy(raw, {
      get(target, prop, receiver) {
        if (prop === 'transact') {
          return async (ops: StoreOp[]) => {
            const leasing =
              ops.length === 1 &&
              ops[0]!.kind === 'ChangeOrder' &&
              (ops[0]!.item as { PromotionLease?: unknown }).PromotionLease;
            if (leasing && other) {
              const run = other;
              other = undefined;
              await run();
            }
            return target.transact(ops);
          };
        }
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const { deps } = localDeps(store);
    const server = await startServer(deps);
    const { token } = await createOrganization(deps, `lease-${table}`);
    const api = new Api(server.url, token);
    try {
      await api.post('/variant/upload', {
        Component: 'late',
        Variant: 'base',
        Units: [{ Slug: 'svc', Data: deploymentYaml('svc') }],
      });
      for (const v of ['l1', 'l2'])
        await api.post('/variant', { Name: v, UpstreamSpaceID: 'late-base', Stage: 'Production' });
      await api.post('/space/late-base/change_workflow', {
        Slug: 'w',
        Stages: [{ Name: 'Production', WhereSpace: "Labels.Stage = 'Production'" }],
      });
      await api.post('/space/late-base/function/invoke', {
        FunctionName: 'set-replicas',
        Arguments: ['4'],
        UnitIDs: ['svc'],
      });
      expect(
        (await api.post('/space/late-base/change_order', { Slug: 'go', ChangeWorkflowID: 'late-base/w' })).status,
      ).toBe(201);
      let first: { status: number; body: any } | undefined;
      other = async () => (first = await api.post('/promote', { ChangeOrderID: 'late-base/go' }));
      // This promotion read the change order and started its gates' reads before the other took the lease; its own lease
      // then conflicts, and what it read before is read again: the Stage has been reached, nothing is merged twice.
      const late = await api.post('/promote', { ChangeOrderID: 'late-base/go' });
      expect(first?.status, JSON.stringify(first?.body)).toBe(200);
      expect(first?.body.Landed).toBe(2);
      expect(late.status, JSON.stringify(late.body)).toBe(200);
      expect(late.body).toMatchObject({ Landed: 0, Total: 0, Message: "change order 'go' has reached every stage" });
      const co = (await api.get('/space/late-base/change_order/go')).body;
      expect(co).toMatchObject({ State: 'Resolved', PromotionFailures: [] });
      expect(co.Promotions).toHaveLength(1);
      for (const v of ['l1', 'l2'])
        expect((await api.get(`/space/late-${v}/unit/svc/data`)).text).toContain('replicas: 4');
    } finally {
      await server.close();
    }
  });
});

describe('generated workflow documents', () => {
  const name = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,8}$/);
  const expression = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.constantFrom(
      "Space.Labels.tier == 'web'",
      'ChangeOrder.Completed',
      'Release != null && Release.ReleaseNum > 1',
      '[1,2].all(x, [3].exists(y, x < y))',
    ),
  );
  const stage = fc.record({
    Name: name,
    WhereSpace: fc.oneof(fc.string({ maxLength: 40 }), fc.constant("Labels.Stage = 'Production'")),
    Prerequisites: fc.array(fc.oneof(name, fc.constantFrom('Released', 'Healthy', 'Validated', 'p')), { maxLength: 3 }),
  });
  it('are written or refused with a 4xx naming the problem, never a 500, and a refused one writes nothing', async () => {
    await env.api.post('/space', { Slug: 'wf-prop' });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(stage, { maxLength: 3 }),
        fc.array(fc.record({ Name: fc.constant('p'), Expression: expression.map((e) => `cel:${e}`) }), {
          maxLength: 1,
        }),
        async (stages, custom) => {
          const slug = `wf-${n++}`;
          const r = await env.api.post('/space/wf-prop/change_workflow', {
            Slug: slug,
            Stages: stages,
            CustomPrerequisites: custom,
          });
          expect(r.status, r.text).toBeLessThan(500);
          if (r.status >= 400) {
            expect(r.body.Message.length).toBeGreaterThan(10);
            expect((await env.api.get(`/space/wf-prop/change_workflow/${slug}`)).status).toBe(404);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

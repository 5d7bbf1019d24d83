import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
  await env.api.post('/space', { Slug: 'infra' });
  await env.api.post('/space/infra/target', { Slug: 'cluster-a' });
  await env.api.post('/space', { Slug: 'rel', ReleaseTargetID: 'infra/cluster-a' });
  await env.api.post('/space/rel/unit', { Slug: 'api', Data: deploymentYaml('api', { namespace: 'prod' }) });
  await env.api.post('/space/rel/unit', { Slug: 'web', Data: deploymentYaml('web', { namespace: 'prod' }) });
});
afterAll(async () => env.close());

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const fn = (space: string, unit: string, name: string, args: string[]) =>
  env.api.post(`/space/${space}/function/invoke`, { FunctionName: name, Arguments: args, UnitIDs: [unit] });
const publish = (space: string, body: Record<string, unknown> = {}) => env.api.post(`/space/${space}/release`, body);

describe('publishing releases', () => {
  it('refuses a space with no release target, clearly', async () => {
    await env.api.post('/space', { Slug: 'no-target' });
    await env.api.post('/space/no-target/unit', { Slug: 'x', Data: deploymentYaml('x', { namespace: 'a' }) });
    const r = await publish('no-target');
    expect(r.status).toBe(422);
    expect(r.body.Message).toMatch(
      /space 'no-target' has no release target; set one with cub space update no-target --release-target/,
    );
  });

  it('publishes every unit at its head: release number, tag, digest, unit count, author, released revisions', async () => {
    const dry = await publish('rel', { DryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({
      DryRun: true,
      UnitCount: 2,
      Units: [
        expect.objectContaining({ Slug: 'api', RevisionNum: 1 }),
        expect.objectContaining({ Slug: 'web', RevisionNum: 1 }),
      ],
    });
    expect((await env.api.get('/space/rel/release')).body).toEqual([]);
    const r = await publish('rel');
    expect(r.status).toBe(201);
    const rel = r.body.Release;
    expect(rel).toMatchObject({
      ReleaseNum: 1,
      UnitCount: 2,
      Published: true,
      UserID: env.api.caller!.UserID,
      Digest: dry.body.Digest,
    });
    const data = await env.api.get(`/space/rel/release/${rel.ReleaseID}/data`);
    expect(sha(data.text)).toBe(rel.Digest);
    expect(data.text).toContain('name: api');
    expect(data.text).toContain('name: web');
    expect(sha((await env.api.get('/space/rel/release/1/data')).text)).toBe(rel.Digest);
    const tag = (await env.api.get('/space/rel/tag/release-1')).body;
    expect(tag.TagID).toBe(rel.TagID);
    expect(tag.Marks.map((m: any) => m.RevisionNum)).toEqual([1, 1]);
    expect((await env.api.get('/space/rel/unit/api')).body.LastReleasedRevisionNum).toBe(1);
    expect(env.bus.log.filter((e) => e.detailType === 'Release Published').map((e) => e.detail.ReleaseNum)).toEqual([
      1,
    ]);
  });

  it('answers with a message and makes no release when nothing changed', async () => {
    const r = await publish('rel');
    expect(r.status).toBe(200);
    expect(r.body.Message).toBe("nothing changed since release 1 of space 'rel'; no new release");
    expect((await env.api.get('/space/rel/release')).body).toHaveLength(1);
  });

  it('takes the revision selectors: number, LastReleasedRevisionNum, Tag, Before:Tag, ChangeSet, Before:ChangeSet', async () => {
    await fn('rel', 'api', 'set-replicas', ['2']); // api rev 2
    await env.api.post('/space/rel/unit/api/tag', { Tag: 'two', Revision: 2 });
    await env.api.post('/space/rel/unit/web/tag', { Tag: 'two', Revision: 1 });
    const cs = (await env.api.post('/space/rel/change_set', { Slug: 'cs' })).body;
    await env.api.post('/space/rel/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['3'],
      UnitIDs: ['api', 'web'],
      ChangeSetID: 'cs',
    });
    await env.api.patch('/space/rel/change_set/cs', { Version: cs.Version, State: 'Closed' });
    const revs = async (body: Record<string, unknown>) =>
      (await publish('rel', { ...body, DryRun: true })).body.Units.map((u: any) => [u.Slug, u.RevisionNum]);
    expect(await revs({ Revision: 1 })).toEqual([
      ['api', 1],
      ['web', 1],
    ]);
    expect(await revs({ Revision: 'LastReleasedRevisionNum' })).toEqual([
      ['api', 1],
      ['web', 1],
    ]);
    expect(await revs({ Revision: 'Tag:two' })).toEqual([
      ['api', 2],
      ['web', 1],
    ]);
    // web's tagged revision is its first: there is nothing before it to release.
    const before = await publish('rel', { Revision: 'Before:Tag:two', DryRun: true });
    expect(before.status).toBe(404);
    expect(before.body.Message).toBe("unit 'web' has no revision before tag 'two'");
    expect(await revs({ Revision: 'ChangeSet:cs' })).toEqual([
      ['api', 3],
      ['web', 2],
    ]);
    expect(await revs({ Revision: 'Before:ChangeSet:cs' })).toEqual([
      ['api', 2],
      ['web', 1],
    ]);
    expect((await publish('rel', { Revision: 'Tag:nope', DryRun: true })).status).toBe(404);
    const r2 = await publish('rel', { Revision: 'ChangeSet:cs' });
    expect(r2.body.Release).toMatchObject({ ReleaseNum: 2 });
    expect((await env.api.get('/space/rel/unit/web')).body.LastReleasedRevisionNum).toBe(2);
  });

  it('numbers releases per target, across the spaces that share it', async () => {
    await env.api.post('/space', { Slug: 'rel-b', ReleaseTargetID: 'infra/cluster-a' });
    await env.api.post('/space/rel-b/unit', { Slug: 'x', Data: deploymentYaml('x', { namespace: 'b' }) });
    expect((await publish('rel-b')).body.Release.ReleaseNum).toBe(3);
    await fn('rel', 'api', 'set-replicas', ['5']);
    expect((await publish('rel')).body.Release.ReleaseNum).toBe(4);
  });

  it('blocks a publish on validation errors, naming the unit, and writes nothing', async () => {
    await env.api.post('/space', { Slug: 'val', ReleaseTargetID: 'infra/cluster-a' });
    await env.api.post('/space/val/unit', { Slug: 'ok', Data: deploymentYaml('ok', { namespace: 'x' }) });
    await env.api.post('/space/val/unit', { Slug: 'raw', Data: deploymentYaml('raw') });
    expect((await env.api.get('/space/val/unit/raw')).body.ValidationErrors).toEqual({
      placeholders: 'placeholders left at Deployment/raw metadata.namespace',
    });
    const r = await publish('val');
    expect(r.status).toBe(422);
    expect(r.body.Message).toMatch(
      /unit 'raw' revision 1 has validation errors \(placeholders left at Deployment\/raw metadata\.namespace\)/,
    );
    expect((await env.api.get('/space/val/release')).body).toEqual([]);
    await fn('val', 'raw', 'set-namespace', ['x']);
    expect((await env.api.get('/space/val/unit/raw')).body.ValidationErrors).toEqual({});
    expect((await publish('val')).status).toBe(201);
  });

  it('withdraws a release', async () => {
    const w = await env.api.post('/space/val/release/5/withdraw');
    expect(w.body).toMatchObject({ ReleaseNum: 5, Published: false });
    expect((await env.api.post('/space/val/release/5/withdraw')).status).toBe(400);
    expect((await env.api.get('/release')).body.map((r: any) => r.ReleaseNum).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('live status', () => {
  it('is merge-patched onto one release, rejects bad values, and is announced on the bus', async () => {
    const r = await env.api.patch('/space/rel/release/4', {
      LiveStatus: { Sync: 'Synced', Health: 'Progressing', Reporter: 'test' },
    });
    expect(r.status).toBe(200);
    const r2 = await env.api.patch('/space/rel/release/4', {
      LiveStatus: { Health: 'Healthy', Operation: 'Succeeded' },
    });
    expect(r2.body.LiveStatus).toEqual({ Sync: 'Synced', Health: 'Healthy', Operation: 'Succeeded', Reporter: 'test' });
    expect((await env.api.get('/space/rel/release/2')).body.LiveStatus).toEqual({});
    const bad = await env.api.patch('/space/rel/release/4', { LiveStatus: { Health: 'Great' } });
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toMatch(/LiveStatus\.Health/);
    const stale = await env.api.patch('/space/rel/release/4', { Version: 1, LiveStatus: { Health: 'Degraded' } });
    expect(stale.status).toBe(409);
    const changes = env.bus.log.filter(
      (e) => e.detailType === 'Release Live Status Changed' && e.detail.ReleaseNum === 4,
    );
    expect(changes.map((e) => (e.detail.LiveStatus as any).Health)).toEqual(['Progressing', 'Healthy']);
  });
});

const argoApp = (
  space: string,
  release: number,
  status: { sync?: string; health?: string; phase?: string; message?: string; finishedAt?: string },
) => ({
  app: {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: `${space}-app`,
      namespace: 'argocd',
      annotations: {
        'baton.io/space': space,
        'baton.io/release': String(release),
        'notifications.argoproj.io/subscribe.on-sync-succeeded.baton': '',
      },
    },
    spec: { destination: { namespace: 'prod', server: 'https://kubernetes.default.svc' }, project: 'default' },
    status: {
      sync: { status: status.sync ?? 'Synced', revision: '8f3c1e2a9b7d' },
      health: { status: status.health ?? 'Healthy' },
      ...(status.phase
        ? {
            operationState: {
              phase: status.phase,
              message: status.message ?? '',
              startedAt: '2026-12-02T09:00:00Z',
              finishedAt: status.finishedAt ?? '2026-12-02T09:01:00Z',
              syncResult: { revision: '8f3c1e2a9b7d' },
            },
          }
        : {}),
      reconciledAt: '2026-12-02T09:01:00Z',
    },
  },
});

const fluxEvent = (
  kind: string,
  severity: string,
  reason: string,
  metadata: Record<string, string>,
  timestamp = '2026-12-02T09:05:00Z',
) => ({
  involvedObject: {
    apiVersion: kind === 'HelmRelease' ? 'helm.toolkit.fluxcd.io/v2' : 'kustomize.toolkit.fluxcd.io/v1',
    kind,
    name: 'acme',
    namespace: 'flux-system',
    uid: '7d0c9a6e-0d55-4a0b-9a44-3b0a6f2f0b1e',
  },
  severity,
  timestamp,
  message: `${reason} for ${kind}/acme`,
  reason,
  metadata,
  reportingController: kind === 'HelmRelease' ? 'helm-controller' : 'kustomize-controller',
  reportingInstance: 'kustomize-controller-5f8b7c9d-abcde',
});

describe('deploy tools through the webhook routes and the bus', () => {
  const live = async (n: number) => (await env.api.get(`/space/rel/release/${n}`)).body.LiveStatus;

  it.each([
    [
      'healthy',
      { health: 'Healthy', phase: 'Succeeded' },
      { Sync: 'Synced', Health: 'Healthy', Operation: 'Succeeded' },
    ],
    [
      'degraded',
      { health: 'Degraded', phase: 'Succeeded', finishedAt: '2026-12-02T09:02:00Z' },
      { Sync: 'Synced', Health: 'Degraded', Operation: 'Succeeded' },
    ],
    [
      'progressing',
      { health: 'Progressing', phase: 'Running', finishedAt: '2026-12-02T09:03:00Z' },
      { Sync: 'Synced', Health: 'Progressing', Operation: 'Running' },
    ],
    [
      'failed operation',
      {
        sync: 'OutOfSync',
        health: 'Missing',
        phase: 'Error',
        message: 'one or more objects failed to apply',
        finishedAt: '2026-12-02T09:04:00Z',
      },
      { Sync: 'OutOfSync', Health: 'Missing', Operation: 'Failed', Message: 'one or more objects failed to apply' },
    ],
    [
      'out of sync',
      { sync: 'OutOfSync', health: 'Healthy', phase: 'Terminating', finishedAt: '2026-12-02T09:05:00Z' },
      { Sync: 'OutOfSync', Health: 'Healthy', Operation: 'Running' },
    ],
  ])('Argo CD %s', async (_name, status, want) => {
    const r = await env.api.post('/hooks/argocd', argoApp('rel', 2, status));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ Applied: true, SpaceSlug: 'rel', ReleaseNum: 2, LiveStatus: want });
    expect(await live(2)).toMatchObject({ ...want, Reporter: 'argocd', DataSource: 'argocd:argocd/rel-app' });
  });

  it.each([
    [
      'Kustomization ready',
      fluxEvent(
        'Kustomization',
        'info',
        'ReconciliationSucceeded',
        { space: 'rel-b', release: '3', revision: 'main@sha1:1a2b3c' },
        '2026-12-02T10:00:00Z',
      ),
      { Sync: 'Synced', Health: 'Healthy', Operation: 'Succeeded' },
    ],
    [
      'Kustomization health check failed',
      fluxEvent(
        'Kustomization',
        'error',
        'HealthCheckFailed',
        { space: 'rel-b', release: '3' },
        '2026-12-02T10:01:00Z',
      ),
      { Health: 'Degraded', Operation: 'Failed' },
    ],
    [
      'HelmRelease progressing',
      fluxEvent('HelmRelease', 'info', 'Progressing', { space: 'rel-b', release: '3' }, '2026-12-02T10:02:00Z'),
      { Health: 'Progressing', Operation: 'Running' },
    ],
    [
      'HelmRelease upgrade failed',
      fluxEvent('HelmRelease', 'error', 'UpgradeFailed', { space: 'rel-b', release: '3' }, '2026-12-02T10:03:00Z'),
      { Health: 'Degraded', Operation: 'Failed' },
    ],
  ])('Flux %s', async (_name, event, want) => {
    expect((await env.api.post('/hooks/flux', event)).status).toBe(200);
    // Release 3 is rel-b's: release numbers count per target, and rel-b shares rel's.
    expect((await env.api.get('/space/rel-b/release/3')).body.LiveStatus).toMatchObject(want);
  });

  it('matches a Flux OCI revision to the release with that digest', async () => {
    const rel1 = (await env.api.get('/space/rel/release/1')).body;
    await env.api.post(
      '/hooks/flux',
      fluxEvent('Kustomization', 'info', 'ReconciliationSucceeded', {
        space: 'rel',
        revision: `latest@sha256:${rel1.Digest}`,
      }),
    );
    expect(await live(1)).toMatchObject({ Health: 'Healthy', Sync: 'Synced' });
  });

  it('a report about an older release leaves the newer one alone, and an older report changes nothing', async () => {
    const before4 = await live(4);
    await env.api.post(
      '/hooks/argocd',
      argoApp('rel', 2, { health: 'Degraded', phase: 'Failed', finishedAt: '2026-12-02T11:00:00Z' }),
    );
    expect(await live(2)).toMatchObject({ Health: 'Degraded', Operation: 'Failed' });
    expect(await live(4)).toEqual(before4);
    await env.api.post(
      '/hooks/argocd',
      argoApp('rel', 2, { health: 'Healthy', phase: 'Succeeded', finishedAt: '2026-12-02T08:00:00Z' }),
    );
    expect(await live(2)).toMatchObject({ Health: 'Degraded' });
  });

  it("an Argo CD retry of the same body changes nothing the second time; health reported for an older bundle's digest stays with that Release", async () => {
    const [r1, r4] = [
      (await env.api.get('/space/rel/release/1')).body,
      (await env.api.get('/space/rel/release/4')).body,
    ];
    // The body Argo CD sends for a synced, healthy app whose revision is release 1's bundle (an OCI source: tag@sha256:digest).
    const app = argoApp('rel', 0, { health: 'Healthy', phase: 'Succeeded', finishedAt: '2026-12-02T12:00:00Z' });
    delete (app.app.metadata.annotations as Record<string, string>)['baton.io/release'];
    app.app.status.sync.revision = `v1@sha256:${r1.Digest}`;
    const events = () => env.bus.log.filter((e) => e.detailType === 'Release Live Status Changed').length;
    const first = await env.api.post('/hooks/argocd', app);
    expect(first.body).toMatchObject({
      Applied: true,
      Changed: true,
      ReleaseNum: 1,
      LiveStatus: { Sync: 'Synced', Health: 'Healthy', Operation: 'Succeeded', ObservedAt: '2026-12-02T12:00:00Z' },
    });
    const [n, version] = [events(), (await env.api.get('/space/rel/release/1')).body.Version];
    const again = await env.api.post('/hooks/argocd', app);
    expect([again.status, again.body.Changed, again.body.Reason]).toEqual([
      200,
      false,
      'release 1 already has this status',
    ]);
    expect([events(), (await env.api.get('/space/rel/release/1')).body.Version]).toEqual([n, version]);
    // Release 4 (the newest) is untouched by a Healthy report about release 1's bundle.
    expect((await env.api.get('/space/rel/release/4')).body.LiveStatus).toEqual(r4.LiveStatus);
  });

  it('refuses what it cannot apply with a 4xx naming why, writing nothing (never 202 and dropped)', async () => {
    const before = await live(2);
    const rel1 = (await env.api.get('/space/rel/release/1')).body;
    for (const [path, body, status, message] of [
      ['/hooks/argocd', { hello: 'world' }, 400, /^not an Argo CD application: metadata/],
      [
        '/hooks/argocd',
        argoApp('nowhere', 2, {}),
        404,
        /^no space 'nowhere' \(named by the baton.io\/space of argocd:argocd\/nowhere-app\)$/,
      ],
      ['/hooks/argocd', argoApp('rel', 99, {}), 404, /^space 'rel' has no release 99$/],
      [
        '/hooks/flux',
        {
          involvedObject: { kind: 'GitRepository', name: 'x' },
          severity: 'info',
          timestamp: 'now',
          message: 'm',
          reason: 'r',
        },
        400,
        /^Flux GitRepository events carry no release status/,
      ],
      ['/hooks/flux', { severity: 'loud' }, 400, /^not a Flux event/],
      [
        '/hooks/flux',
        fluxEvent('Kustomization', 'info', 'ReconciliationSucceeded', {
          space: 'rel',
          revision: 'main@sha1:731f7eaddfb6af01cb2173e18f0f75b0ba780ef1',
        }),
        422,
        /^the Flux event \(flux:Kustomization\/flux-system\/acme\) names no Release: its revision 'main@sha1:731f7eaddfb6af01cb2173e18f0f75b0ba780ef1' carries no sha256 digest/,
      ],
      [
        '/hooks/flux',
        fluxEvent('Kustomization', 'info', 'ReconciliationSucceeded', {
          space: 'rel',
          revision: `latest@sha256:${'0'.repeat(64)}`,
        }),
        404,
        /^space 'rel' has no release with digest sha256:0{64} .*Baton never published that bundle there/,
      ],
    ] as const) {
      const r = await env.api.post(path, body);
      expect([path, r.status, r.body.Message]).toEqual([path, status, expect.stringMatching(message)]);
    }
    expect((await env.api.get('/space/rel/release/1')).body.LiveStatus).toEqual(rel1.LiveStatus);
    expect(await live(2)).toEqual(before);
    expect((await env.api.post('/hooks/flux', undefined)).status).toBe(400);
    expect((await env.anonymous.post('/hooks/argocd', argoApp('rel', 2, {}))).status).toBe(401);
  });
});

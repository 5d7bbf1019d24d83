import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';
import { consumeDeployToolEvent } from '../../lib/releases/deploy-events.ts';
import { DetailType, HOOK_SOURCE } from '../../lib/events/contracts.ts';
import { DEPLOY_TOOL_SETUP, EXAMPLE_DIGEST, EXAMPLE_UNIT } from '../../lib/events/deploy-tool-examples.ts';
import { EVENT_EXAMPLES } from '../../lib/events/examples.ts';

// The bodies as Argo CD ({{toJson .app}}) and Flux's generic(-hmac) provider send them; only the revision (what the tool deployed) is filled in.
const fixture = (name: string, revision: string) =>
  readFileSync(new URL(`../fixtures/deploy-tools/${name}`, import.meta.url), 'utf8').replaceAll('REVISION', revision);

let env: Env;
let cub: ReturnType<typeof cubAt>;
const digests: Record<string, string> = {};
beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  await env.api.post('/space', { Slug: 'clusters' });
  for (const [target, object] of [
    ['argo-prod', '--argocd-application=argocd/acme-prod'],
    ['flux-prod', '--flux-object=Kustomization/flux-system/acme-prod'],
  ]) {
    const r = await cub(['target', 'create', '--space', 'clusters', target!, object!]);
    expect([r.code, r.stderr]).toEqual([0, '']);
  }
  for (const [space, target] of [
    ['acme-argo', 'argo-prod'],
    ['acme-flux', 'flux-prod'],
  ]) {
    await env.api.post('/space', { Slug: space, ReleaseTargetID: `clusters/${target}` });
    await env.api.post(`/space/${space}/unit`, { Slug: 'api', Data: deploymentYaml('api', { namespace: 'acme' }) });
    digests[space!] = (await env.api.post(`/space/${space}/release`, {})).body.Release.Digest;
  }
});
afterAll(async () => env.close());

const post = (path: string, token: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${env.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

describe('a Target names the deploy tool object that deploys it', () => {
  it('is set and shown with cub target create|get|update, one Target per object, a bad name refused', async () => {
    const got = await cub(['target', 'get', '--space', 'clusters', 'argo-prod', '-o', 'json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ Slug: 'argo-prod', DeployObject: 'argocd:argocd/acme-prod' });
    expect(JSON.parse(got.stdout)).not.toHaveProperty('DeployKey');
    const twice = await cub([
      'target',
      'create',
      '--space',
      'clusters',
      'again',
      '--argocd-application',
      'argocd/acme-prod',
    ]);
    expect([twice.code, twice.stderr]).toEqual([
      1,
      expect.stringContaining("argocd:argocd/acme-prod already deploys target 'clusters/argo-prod'"),
    ]);
    const bad = await cub([
      'target',
      'create',
      '--space',
      'clusters',
      'bad',
      '--flux-object',
      'GitRepository/flux-system/x',
    ]);
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('a deploy object is argocd:[NAMESPACE/]NAME')]);
    expect((await env.api.get('/space/clusters/target')).body.map((t: { Slug: string }) => t.Slug).sort()).toEqual([
      'argo-prod',
      'flux-prod',
    ]);
    await env.api.post('/space/clusters/target', { Slug: 'spare' });
    const moved = await cub([
      'target',
      'update',
      '--space',
      'clusters',
      'spare',
      '--argocd-application',
      'argocd/spare-app',
      '-o',
      'json',
    ]);
    expect([moved.code, moved.stderr]).toEqual([0, '']);
    expect(JSON.parse(moved.stdout).DeployObject).toBe('argocd:argocd/spare-app');
    const off = await cub(['target', 'update', '--space', 'clusters', 'spare', '--remove-deploy-object', '-o', 'json']);
    expect(JSON.parse(off.stdout).DeployObject).toBeUndefined();
  });
});

describe('Argo CD, as it really sends', () => {
  it("applies the Application's own JSON to the Release its revision's digest names, and a retry of the same body changes nothing", async () => {
    const token = (await env.api.post('/token', { Service: 'argocd', Scope: 'ReportStatus' })).body.Token;
    const body = fixture('argocd-application.json', `v1@sha256:${digests['acme-argo']}`);
    const r = await post('/hooks/argocd', token, body);
    expect(r).toEqual({
      status: 200,
      body: expect.objectContaining({ Applied: true, Changed: true, SpaceSlug: 'acme-argo', ReleaseNum: 1 }),
    });
    expect(r.body.LiveStatus).toEqual({
      Sync: 'Synced',
      Health: 'Healthy',
      Operation: 'Succeeded',
      Reporter: 'argocd',
      DataSource: 'argocd:argocd/acme-prod',
      Message: 'successfully synced (all tasks run)',
      ObservedAt: '2026-12-02T12:00:40Z',
    });
    const version = (await env.api.get('/space/acme-argo/release/1')).body.Version;
    const retry = await post('/hooks/argocd', token, body);
    expect([retry.status, retry.body.Changed]).toEqual([200, false]);
    expect((await env.api.get('/space/acme-argo/release/1')).body.Version).toBe(version);
  });

  it('refuses, with why, an application no Target names and a revision Baton never published', async () => {
    const token = (await env.api.post('/token', { Service: 'argocd2', Scope: 'ReportStatus' })).body.Token;
    const other = fixture('argocd-application.json', `v1@sha256:${digests['acme-argo']}`).replace(
      '"name": "acme-prod"',
      '"name": "unmapped"',
    );
    const r = await post('/hooks/argocd', token, other);
    expect([r.status, r.body.Message]).toEqual([
      404,
      "no target deploys argocd:argocd/unmapped and no space is named 'unmapped': map it with cub target update <target> --argocd-application argocd/unmapped (or the baton.io/space annotation)",
    ]);
    const git = await post(
      '/hooks/argocd',
      token,
      fixture('argocd-application.json', '8f3c1e2a9b7d4c6e5f0a1b2c3d4e5f6a7b8c9d0e'),
    );
    expect([git.status, git.body.Message]).toEqual([
      422,
      expect.stringContaining("its revision '8f3c1e2a9b7d4c6e5f0a1b2c3d4e5f6a7b8c9d0e' carries no sha256 digest"),
    ]);
  });
});

describe('Flux, as it really sends', () => {
  it("applies notification-controller's Event, signed by generic-hmac, to the Release its OCI revision names; a missing or wrong signature is 401", async () => {
    const token = (await env.api.post('/token', { Service: 'flux', Scope: 'ReportStatus', RequireSignature: true }))
      .body.Token as string;
    const body = fixture('flux-event.json', `latest@sha256:${digests['acme-flux']}`);
    const sign = (key: string) => ({
      'x-signature': `sha256=${createHmac('sha256', key).update(body).digest('hex')}`,
      'gotk-component': 'kustomize-controller',
    });
    expect((await post('/hooks/flux', token, body)).status).toBe(401);
    expect((await post('/hooks/flux', token, body, sign('wrong'))).status).toBe(401);
    expect((await env.api.get('/space/acme-flux/release/1')).body.LiveStatus ?? {}).toEqual({});
    const r = await post('/hooks/flux', token, body, sign(token));
    expect(r).toEqual({
      status: 200,
      body: expect.objectContaining({ Applied: true, Changed: true, SpaceSlug: 'acme-flux', ReleaseNum: 1 }),
    });
    expect(r.body.LiveStatus).toMatchObject({
      Sync: 'Synced',
      Health: 'Healthy',
      Operation: 'Succeeded',
      Reporter: 'kustomize-controller',
      DataSource: 'flux:Kustomization/flux-system/acme-prod',
      ObservedAt: '2026-12-02T12:00:40Z',
    });
  });
});

describe('a deploy-tool event that arrives on the bus', () => {
  it('is applied by the same rules as the hook, and one that cannot be is returned dropped with why and counted, never only logged', async () => {
    const counted: [string, number, Record<string, string> | undefined][] = [];
    const deps = {
      ...env.deps,
      telemetry: {
        count: (name: string, value = 1, dims?: Record<string, string>) => void counted.push([name, value, dims]),
        error: () => {},
      },
    } as typeof env.deps;
    const org = env.api.caller!.OrganizationID;
    const event = (payload: unknown) => ({
      source: HOOK_SOURCE,
      detailType: DetailType.ArgoCd,
      detail: { OrganizationID: org, ReceivedAt: '2026-12-02T12:01:00Z', Payload: JSON.parse(JSON.stringify(payload)) },
    });
    const app = JSON.parse(
      fixture('argocd-application.json', `v1@sha256:${digests['acme-argo']}`).replace('"Healthy"', '"Degraded"'),
    );
    app.status.reconciledAt = '2026-12-02T12:05:00Z';
    expect(await consumeDeployToolEvent(deps, event({ app }))).toEqual({
      applied: true,
      ReleaseID: expect.any(String),
    });
    expect((await env.api.get('/space/acme-argo/release/1')).body.LiveStatus.Health).toBe('Degraded');
    const lost = await consumeDeployToolEvent(
      deps,
      event({ app: { ...app, metadata: { ...app.metadata, name: 'nobody' } } }),
    );
    expect(lost).toEqual({ applied: false, reason: expect.stringContaining('no target deploys argocd:argocd/nobody') });
    expect(counted.filter(([n]) => n === 'DroppedEvents')).toEqual([
      ['DroppedEvents', 1, { DetailType: 'Argo CD Notification' }],
    ]);
  });
});

describe("docs/reference/events.md's Argo CD and Flux examples", () => {
  it('are posted as written, into the organization its cub commands make, and leave the LiveStatus it says; a repeat changes nothing', async () => {
    // The other organization of the env: nothing of the tests above is in it.
    const dir = mkdtempSync(join(tmpdir(), 'baton-events-'));
    writeFileSync(join(dir, 'api.yaml'), EXAMPLE_UNIT);
    const run = cubAt(env.url, env.other.token!, dir);
    let printed = '';
    for (const line of DEPLOY_TOOL_SETUP) {
      const r = await run(line.split(' ').slice(1));
      expect([r.code, r.stderr], line).toEqual([0, '']);
      printed = r.stdout;
    }
    const token = /\n {2}(\S+)\n/.exec(printed)?.[1];
    expect(token, printed).toBeDefined();
    const got = await run(['release', 'get', '--space', 'acme-prod-use1', 'latest', '-o', 'json']);
    expect(JSON.parse(got.stdout)).toMatchObject({ ReleaseNum: 1, Digest: EXAMPLE_DIGEST });
    const examples = EVENT_EXAMPLES.filter((e) => e.produces);
    expect(examples.map((e) => e.event.detailType)).toEqual([DetailType.ArgoCd, DetailType.Flux]);
    for (const { event, produces } of examples) {
      const body = JSON.stringify((event.detail as { Payload: unknown }).Payload);
      const r = await post(produces!.Hook, token!, body);
      expect(r, produces!.Hook).toEqual({
        status: 200,
        body: {
          Applied: true,
          Changed: true,
          SpaceID: expect.any(String),
          SpaceSlug: produces!.SpaceSlug,
          ReleaseID: expect.any(String),
          ReleaseNum: produces!.ReleaseNum,
          LiveStatus: produces!.LiveStatus,
        },
      });
      expect(
        (await env.other.get(`/space/${produces!.SpaceSlug}/release/${produces!.ReleaseNum}`)).body.LiveStatus,
      ).toEqual(produces!.LiveStatus);
      const again = await post(produces!.Hook, token!, body);
      expect([again.status, again.body.Changed, again.body.LiveStatus]).toEqual([200, false, produces!.LiveStatus]);
      // The same event on the bus (in this organization, as the sender's token): applied to the same Release.
      const onBus = { ...event, detail: { ...event.detail, OrganizationID: env.other.caller!.OrganizationID } };
      expect(await consumeDeployToolEvent(env.deps, onBus)).toEqual({ applied: true, ReleaseID: r.body.ReleaseID });
    }
  });
});

// docs/integrations/argocd.md and flux.md, followed as an operator would: their cub commands run as
// written, and what their Argo CD ConfigMap and Flux Provider/Secret tell the tool to send is sent.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

const doc = (name: string) => readFileSync(new URL(`../../docs/integrations/${name}`, import.meta.url), 'utf8');
const blocks = (text: string, lang: string) =>
  [...text.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
const commands = (text: string) => blocks(text, 'sh').flatMap((b) => b.split('\n').filter((l) => l.startsWith('cub ')));
const fixture = (name: string, revision: string) =>
  readFileSync(new URL(`../fixtures/deploy-tools/${name}`, import.meta.url), 'utf8').replaceAll('REVISION', revision);

let env: Env;
let cub: ReturnType<typeof cubAt>;
let digest: string;
beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  // What the guides take as there already: a Target, and the Space releasing to it with a Release.
  await env.api.post('/space', { Slug: 'clusters' });
  await env.api.post('/space/clusters/target', { Slug: 'prod-euw1' });
  await env.api.post('/space', { Slug: 'acme-prod' });
  await env.api.post('/space/acme-prod/unit', { Slug: 'api', Data: deploymentYaml('api', { namespace: 'acme' }) });
});
afterAll(async () => env.close());

/** Runs a guide's cub commands as written; returns the token the last `cub token create` printed. */
async function follow(text: string): Promise<string> {
  let token: string | undefined;
  for (const line of commands(text)) {
    const r = await cub(line.split(' ').slice(1));
    expect([r.code, r.stderr], line).toEqual([0, '']);
    if (line.startsWith('cub token create')) token = /\n {2}(\S+)\n/.exec(r.stdout)?.[1];
  }
  expect(token).toBeDefined();
  return token!;
}

describe('docs/integrations/argocd.md', () => {
  it('its commands map the Application and make the token; the ConfigMap sends what Baton applies', async () => {
    const token = await follow(doc('argocd.md'));
    // The guide's commands set the Target's object and the Space's Target; the Release comes after.
    digest = (await env.api.post('/space/acme-prod/release', {})).body.Release.Digest;
    const cm = parse(blocks(doc('argocd.md'), 'yaml').find((b) => b.includes('argocd-notifications-cm'))!);
    expect(cm).toMatchObject({ kind: 'ConfigMap', metadata: { name: 'argocd-notifications-cm', namespace: 'argocd' } });
    const data = cm.data as Record<string, string>;
    // The subscription's recipient is the webhook service; each trigger it names exists and sends the template.
    const subs = parse(data.subscriptions!) as { recipients: string[]; triggers: string[] }[];
    expect(subs.flatMap((s) => s.recipients)).toEqual(['baton']);
    const triggers = subs.flatMap((s) => s.triggers);
    expect(triggers).toEqual(['on-deployed', 'on-health-changed']);
    for (const t of triggers)
      for (const c of parse(data[`trigger.${t}`]!) as { send: string[]; when: string }[])
        expect([c.send, typeof c.when], t).toEqual([['baton-status'], 'string']);
    const service = parse(data['service.webhook.baton']!) as {
      url: string;
      headers: { name: string; value: string }[];
    };
    const template = parse(data['template.baton-status']!) as {
      webhook: Record<string, { method: string; body: string }>;
    };
    expect(Object.keys(template.webhook)).toEqual(['baton']);
    expect([template.webhook.baton!.method, template.webhook.baton!.body.trim()]).toEqual(['POST', '{{toJson .app}}']);
    // What Argo CD sends: the webhook's URL and headers (the secret's $baton-token filled in), the body rendered.
    const app = fixture('argocd-application.json', `1.0.0@sha256:${digest}`);
    const headers = Object.fromEntries(service.headers.map((h) => [h.name, h.value.replace('$baton-token', token)]));
    expect(headers).toEqual({ 'Content-Type': 'application/json', Authorization: `Bearer ${token}` });
    const send = () =>
      fetch(service.url.replace('https://<your Baton API>', env.url), {
        method: 'POST',
        headers,
        body: template.webhook.baton!.body.replace('{{toJson .app}}', app),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    const r = await send();
    expect(r).toEqual({
      status: 200,
      body: expect.objectContaining({ Applied: true, Changed: true, SpaceSlug: 'acme-prod', ReleaseNum: 1 }),
    });
    expect(r.body.LiveStatus).toMatchObject({
      Sync: 'Synced',
      Health: 'Healthy',
      Operation: 'Succeeded',
      DataSource: 'argocd:argocd/acme-prod',
    });
    // Argo CD's retry of the send.
    expect((await send()).body).toMatchObject({ Applied: true, Changed: false });
  });
});

describe('docs/integrations/flux.md', () => {
  it('its commands map the Kustomization and make a signing token; the Provider and Secret send what Baton applies', async () => {
    const token = await follow(doc('flux.md'));
    const [secret, provider, alert] = parseAllDocuments(blocks(doc('flux.md'), 'yaml')[0]!).map((d) => d.toJS());
    expect([secret.kind, provider.kind, alert.kind]).toEqual(['Secret', 'Provider', 'Alert']);
    expect(provider.spec).toMatchObject({ type: 'generic-hmac', secretRef: { name: secret.metadata.name } });
    expect(alert.spec.providerRef.name).toBe(provider.metadata.name);
    expect(alert.spec.eventSources.map((s: { kind: string }) => s.kind)).toEqual(['Kustomization', 'HelmRelease']);
    // generic-hmac: the Secret's token is the HMAC key, its headers are sent as they are.
    const key = String(secret.stringData.token).replace('<the token>', token);
    const extra = Object.fromEntries(
      Object.entries(parse(secret.stringData.headers) as Record<string, string>).map(([k, v]) => [
        k,
        v.replace('<the token>', token),
      ]),
    );
    const body = fixture('flux-event.json', `latest@sha256:${digest}`);
    const post = (signature: string) =>
      fetch(provider.spec.address.replace('https://<your Baton API>', env.url), {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'Gotk-Component': 'kustomize-controller',
          'X-Signature': signature,
          ...extra,
        },
        body,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
    expect((await post(`sha256=${createHmac('sha256', 'not-the-key').update(body).digest('hex')}`)).status).toBe(401);
    const r = await post(`sha256=${createHmac('sha256', key).update(body).digest('hex')}`);
    expect(r).toEqual({
      status: 200,
      body: expect.objectContaining({ Applied: true, Changed: true, SpaceSlug: 'acme-prod', ReleaseNum: 1 }),
    });
    expect(r.body.LiveStatus).toMatchObject({
      Reporter: 'kustomize-controller',
      DataSource: 'flux:Kustomization/flux-system/acme-prod',
      ObservedAt: '2026-12-02T12:00:40Z',
    });
  });
});

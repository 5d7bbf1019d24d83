import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';
import { sweepBlocked } from '../../lib/changes/blocked.ts';
import { startSweeps } from '../../lib/local/sweeps.ts';

let env: Env;
let cub: ReturnType<typeof cubAt>;
let receiver: Server;
let url = '';
/** What the receiver got, and how it answers each path (a list of statuses, the last repeated). */
const got: { path: string; headers: IncomingHttpHeaders; body: string }[] = [];
const answers = new Map<string, number[]>();
/** The waits between retries, as asked for (none really waited). */
const waited: number[] = [];
/** How far the server's clock is ahead of the machine's (the Blocked test moves it on). */
let ahead = 0;

beforeAll(async () => {
  env = await startEnv({ now: () => new Date(Date.now() + ahead), sleep: async (ms) => void waited.push(ms) });
  cub = cubAt(env.url, env.api.token!);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body });
      const list = answers.get(req.url ?? '') ?? [200];
      res.writeHead(list.length > 1 ? list.shift()! : list[0]!).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  receiver?.close();
  await env.close();
});

/** Until the notification has `n` deliveries (they go out in the background). */
async function deliveriesOf(slug: string, n: number): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 200; i++) {
    const r = await env.api.get(`/notification/${slug}/delivery`);
    if (r.body.length >= n) return r.body;
    await new Promise((res) => setTimeout(res, 25));
  }
  throw new Error(`${slug}: fewer than ${n} deliveries`);
}

describe('notifications out', () => {
  it('posts a signed JSON body with Slack’s text when a change order advances and completes; cub lists the deliveries', async () => {
    const made = await cub([
      'notification',
      'create',
      'releases',
      '--url',
      `${url}/slack`,
      '--secret',
      'a-secret-of-16-chars',
      '--on',
      'StageAdvanced,Completed',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/releases +http:\/\/127\.0\.0\.1:\d+\/slack +StageAdvanced,Completed +yes/);
    const shown = (await env.api.get('/notification/releases')).body;
    expect(shown).toMatchObject({ Slug: 'releases', SecretSet: true, On: ['StageAdvanced', 'Completed'] });
    expect(shown).not.toHaveProperty('Secret');
    // A base, one variant, a one-Stage workflow: promoting it advances the Stage and completes the change order.
    expect(
      (
        await env.api.post('/variant/upload', {
          Component: 'nt',
          Variant: 'base',
          Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await env.api.post('/variant', {
          Name: 'prod',
          UpstreamSpaceID: 'nt-base',
          Stage: 'Production',
          Namespace: 'prod',
        })
      ).status,
    ).toBe(201);
    await env.api.post('/space/nt-base/change_workflow', {
      Slug: 'w',
      Stages: [{ Name: 'prod', WhereSpace: "Slug = 'nt-prod'" }],
    });
    await env.api.post('/space/nt-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['3'],
      UnitIDs: ['app'],
    });
    expect(
      (await env.api.post('/space/nt-base/change_order', { Slug: 'scale', ChangeWorkflowID: 'nt-base/w' })).status,
    ).toBe(201);
    expect((await env.api.post('/promote', { ChangeOrderID: 'nt-base/scale' })).status).toBe(200);
    const list = await deliveriesOf('releases', 2);
    expect(list.map((d) => [d.On, d.Status, d.Attempts, d.HTTPStatus, d.ChangeOrderSlug]).sort()).toEqual([
      ['Completed', 'Delivered', 1, 200, 'scale'],
      ['StageAdvanced', 'Delivered', 1, 200, 'scale'],
    ]);
    const posts = got.filter((g) => g.path === '/slack');
    expect(posts).toHaveLength(2);
    for (const p of posts) {
      // The signature is the HMAC-SHA256 of the body as sent, with the secret.
      expect(p.headers['x-baton-signature']).toBe(
        `sha256=${createHmac('sha256', 'a-secret-of-16-chars').update(p.body).digest('hex')}`,
      );
      expect(p.headers['content-type']).toBe('application/json');
    }
    const bodies = posts.map((p) => JSON.parse(p.body) as { text: string; on: string; changeOrder: { Slug: string } });
    expect(bodies.map((b) => b.text).sort()).toEqual([
      'Baton: change order nt-base/scale completed',
      'Baton: change order nt-base/scale reached every stage',
    ]);
    expect(bodies.every((b) => b.changeOrder.Slug === 'scale')).toBe(true);
    const table = await cub(['notification', 'deliveries', 'releases']);
    expect(table.stdout.split('\n')[0]).toMatch(/^AT +ON +CHANGE ORDER +STATUS +ATTEMPTS +HTTP +ERROR$/);
    expect(table.stdout).toMatch(/StageAdvanced +scale +Delivered +1 +200/);
  });

  it('retries a 5xx with backoff, gives up after three attempts and records why; a 4xx is not retried', async () => {
    for (const [slug, path] of [
      ['flaky', '/flaky'],
      ['down', '/down'],
      ['gone', '/gone'],
    ])
      expect(
        (await env.api.post('/notification', { Slug: slug, URL: `${url}${path}`, On: ['StageAdvanced'] })).status,
      ).toBe(201);
    answers.set('/flaky', [503, 502, 200]);
    answers.set('/down', [500]);
    answers.set('/gone', [410]);
    waited.length = 0;
    expect(
      (
        await env.api.post('/variant', {
          Name: 'prod2',
          UpstreamSpaceID: 'nt-base',
          Stage: 'Production',
          Namespace: 'prod',
        })
      ).status,
    ).toBe(201);
    await env.api.post('/space/nt-base/change_workflow', {
      Slug: 'w2',
      Stages: [{ Name: 'prod2', WhereSpace: "Slug = 'nt-prod2'" }],
    });
    await env.api.post('/space/nt-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['4'],
      UnitIDs: ['app'],
    });
    expect(
      (await env.api.post('/space/nt-base/change_order', { Slug: 'again', ChangeWorkflowID: 'nt-base/w2' })).status,
    ).toBe(201);
    expect((await env.api.post('/promote', { ChangeOrderID: 'nt-base/again' })).status).toBe(200);
    expect((await deliveriesOf('flaky', 1))[0]).toMatchObject({ Status: 'Delivered', Attempts: 3, HTTPStatus: 200 });
    expect((await deliveriesOf('down', 1))[0]).toMatchObject({
      Status: 'Failed',
      Attempts: 3,
      HTTPStatus: 500,
      Error: 'answered 500',
    });
    expect((await deliveriesOf('gone', 1))[0]).toMatchObject({
      Status: 'Failed',
      Attempts: 1,
      HTTPStatus: 410,
      Error: 'answered 410',
    });
    expect(got.filter((g) => g.path === '/flaky')).toHaveLength(3);
    expect(got.filter((g) => g.path === '/gone')).toHaveLength(1);
    // Backoff: 1 s, then 4 s, for each of the two notifications retried.
    expect(waited.sort((a, b) => a - b)).toEqual([1000, 1000, 4000, 4000]);
  });

  it('tells a notification on Blocked once a change order’s next Stage has been shut longer than --blocked-for, once per wait', async () => {
    expect(
      (
        await env.api.post('/variant/upload', {
          Component: 'nb',
          Variant: 'base',
          Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
        })
      ).status,
    ).toBe(201);
    for (const name of ['bdev', 'blive'])
      expect(
        (
          await env.api.post('/variant', {
            Name: name,
            UpstreamSpaceID: 'nb-base',
            Stage: 'Production',
            Namespace: name,
          })
        ).status,
      ).toBe(201);
    const wf = await env.api.post('/space/nb-base/change_workflow', {
      Slug: 'wb',
      Stages: [
        { Name: 'dev', WhereSpace: "Slug = 'nb-bdev'" },
        { Name: 'live', WhereSpace: "Slug = 'nb-blive'", Prerequisites: ['sign-off'] },
      ],
      AttestationPrerequisites: [{ Name: 'sign-off', Count: 1, AllowAuthors: true }],
    });
    expect(wf.status, wf.text).toBe(201);
    await env.api.post('/space/nb-base/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['5'],
      UnitIDs: ['app'],
    });
    const co = await env.api.post('/space/nb-base/change_order', { Slug: 'slow', ChangeWorkflowID: 'nb-base/wb' });
    expect(co.status, co.text).toBe(201);
    expect((await env.api.post('/promote', { ChangeOrderID: 'nb-base/slow' })).status).toBe(200);
    const made = await cub([
      'notification',
      'create',
      'stuck',
      '--url',
      `${url}/stuck`,
      '--secret',
      'another-secret-16ch',
      '--on',
      'Blocked,Completed',
      '--blocked-for',
      '2h',
    ]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/stuck +http:\/\/127\.0\.0\.1:\d+\/stuck +Blocked\(2h\),Completed +yes/);
    expect((await env.api.get('/notification/stuck')).body).toMatchObject({
      On: ['Blocked', 'Completed'],
      BlockedFor: '2h',
    });
    // An hour on, the Stage live is shut (no sign-off) but not for 2h yet: nobody is told.
    ahead = 3_600_000;
    expect(await sweepBlocked(env.deps)).toMatchObject({ Organizations: 1, Blocked: 1, Delivered: 0, Errors: [] });
    expect(got.filter((g) => g.path === '/stuck')).toHaveLength(0);
    // Past 2h it is, once: the next sweep finds the same wait and tells nobody again.
    ahead = 2 * 3_600_000 + 60_000;
    expect(await sweepBlocked(env.deps)).toMatchObject({ Blocked: 1, Delivered: 1, Errors: [] });
    expect(await sweepBlocked(env.deps)).toMatchObject({ Blocked: 1, Delivered: 0 });
    const posts = got.filter((g) => g.path === '/stuck');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.headers['x-baton-event']).toBe('Blocked');
    expect(posts[0]!.headers['x-baton-signature']).toBe(
      `sha256=${createHmac('sha256', 'another-secret-16ch').update(posts[0]!.body).digest('hex')}`,
    );
    const body = JSON.parse(posts[0]!.body) as {
      text: string;
      on: string;
      event: string;
      changeOrder: Record<string, unknown>;
      detail: {
        BlockedSeconds: number;
        BlockedSince: string;
        BlockedFor: string;
        Gates: { Prerequisite: string; SpaceSlug: string }[];
      };
    };
    expect(body.text).toMatch(
      /^Baton: change order nb-base\/slow has waited 2h\d+m to go into stage live: sign-off \(nb-bdev\) not met\. Why: cub changeorder explain --space nb-base slow$/,
    );
    expect(body).toMatchObject({
      on: 'Blocked',
      event: 'ChangeOrder Blocked',
      changeOrder: { Slug: 'slow', Space: 'nb-base', Stage: 'live' },
    });
    expect(body.detail).toMatchObject({
      BlockedFor: '2h',
      Gates: [{ Prerequisite: 'sign-off', SpaceSlug: 'nb-bdev' }],
    });
    expect(body.detail.BlockedSeconds).toBeGreaterThanOrEqual(2 * 3600 + 60);
    const progress = (await env.api.get('/space/nb-base/change_order/slow')).body as { CreatedAt: string };
    expect(Date.parse(body.detail.BlockedSince)).toBeGreaterThanOrEqual(Date.parse(progress.CreatedAt));
    const [delivery] = await deliveriesOf('stuck', 1);
    expect(delivery).toMatchObject({
      On: 'Blocked',
      ChangeOrderSlug: 'slow',
      Stage: 'live',
      Status: 'Delivered',
      BlockedSince: body.detail.BlockedSince,
    });
    // The command the notice prints runs, and names the gate.
    const why = await cub(body.text.split('Why: cub ')[1]!.split(' '));
    expect(why.code, why.stderr).toBe(0);
    expect(why.stdout).toContain('sign-off');
    // `npm start`'s clock runs the same sweep: a second notification on Blocked is told by it.
    expect(
      (
        await env.api.post('/notification', {
          Slug: 'stuck-too',
          URL: `${url}/stuck-too`,
          On: ['Blocked'],
          BlockedFor: '5m',
        })
      ).status,
    ).toBe(201);
    const stop = startSweeps(env.deps, 20);
    try {
      expect((await deliveriesOf('stuck-too', 1))[0]).toMatchObject({
        On: 'Blocked',
        ChangeOrderSlug: 'slow',
        Stage: 'live',
      });
    } finally {
      stop();
    }
    // Signed off and promoted, it is no longer blocked.
    expect((await env.api.post('/attest', { ChangeOrderID: 'nb-base/slow', Stage: 'dev' })).status).toBe(201);
    expect((await env.api.post('/promote', { ChangeOrderID: 'nb-base/slow' })).status).toBe(200);
    expect(await sweepBlocked(env.deps)).toMatchObject({ Blocked: 0, Delivered: 0 });
    // Its completion is told to the same notification (it is on Completed too): the second and last post there.
    expect((await deliveriesOf('stuck', 2)).map((d) => d.On)).toEqual(['Completed', 'Blocked']);
    expect(got.filter((g) => g.path === '/stuck')).toHaveLength(2);
  });

  it('is an Admin’s; a URL that is not http(s), or events it cannot be told of, are a 400 with nothing written', async () => {
    const mia = (await env.api.post('/user', { Slug: 'mia', Role: 'Member' })).body.Token as string;
    const member = await fetch(`${env.url}/notification`, { headers: { authorization: `Bearer ${mia}` } });
    expect(member.status).toBe(403);
    const before = (await env.api.get('/notification')).body.length;
    for (const [body, message] of [
      [{ URL: 'ftp://example.com/x', On: ['Completed'] }, "URL 'ftp://example.com/x' must be http(s), not ftp"],
      [{ URL: 'not a url', On: ['Completed'] }, "URL 'not a url' is not an address"],
      [{ URL: 'https://user:pw@example.com/', On: ['Completed'] }, 'URL must not carry a user or password'],
      [{ URL: 'https://example.com/', On: ['Paused'] }, 'On.0'],
      [
        { URL: 'https://example.com/', On: ['Completed'], BlockedFor: '2h' },
        "BlockedFor '2h' is for a notification on Blocked",
      ],
      [
        { URL: 'https://example.com/', On: ['Blocked'], BlockedFor: '2 hours' },
        "BlockedFor '2 hours' is not a duration",
      ],
      [{ URL: 'https://example.com/', On: ['Blocked'], BlockedFor: '1m' }, "BlockedFor '1m' must be from 5m"],
      [{ URL: 'https://example.com/', On: ['Blocked'], BlockedFor: '31d' }, "BlockedFor '31d' must be from 5m"],
      [{ URL: 'https://example.com/', On: ['Completed'], Secret: 'short' }, 'Secret'],
    ] as const) {
      const r = await env.api.post('/notification', { Slug: 'bad', ...body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.Message).toContain(message);
    }
    expect((await env.api.get('/notification')).body.length).toBe(before);
    const deleted = await cub(['notification', 'delete', 'gone']);
    expect([deleted.code, deleted.stdout]).toEqual([0, 'Deleted notification gone\n']);
    expect((await env.api.get('/notification/gone')).status).toBe(404);
  });
});

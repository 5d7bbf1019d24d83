import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { PUBLIC_ROUTES, ROUTES } from '../../lib/api/routes/index.ts';
import { openApiDocument } from '../../lib/api/openapi.ts';
import { CONTRACTS, DetailType } from '../../lib/events/contracts.ts';
import { eventsMarkdown } from '../../lib/events/docs.ts';
import { EVENT_EXAMPLES } from '../../lib/events/examples.ts';
import { Api, startEnv, type Env } from '../support/harness.ts';
import { smoke } from '../localstack/smoke.ts';
import { consumeStageEvent } from '../../lib/changes/stage-events.ts';
import { CreateTableCommand, DeleteTableCommand, DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env.close());

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const withKey = (api: Api, key: string) => async (method: string, path: string, body?: unknown) => {
  const res = await fetch(api.url + path, {
    method,
    headers: { authorization: `Bearer ${api.token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    replayed: res.headers.get('idempotent-replayed'),
  };
};

describe('Idempotency-Key', () => {
  it('answers a retried POST with the first answer and writes nothing twice', async () => {
    const post = withKey(env.api, 'create-idem-space-1');
    const first = await post('POST', '/space', { Slug: 'idem-space' });
    expect(first.status).toBe(201);
    expect(first.replayed).toBeNull();
    const again = await post('POST', '/space', { Slug: 'idem-space' });
    expect(again).toEqual({ status: 201, body: first.body, replayed: 'true' });
    expect((await env.api.get('/space')).body.filter((s: { Slug: string }) => s.Slug === 'idem-space')).toHaveLength(1);
    // The same key for another request is refused; another user's same key is theirs alone.
    expect(await post('POST', '/space', { Slug: 'idem-other' })).toMatchObject({
      status: 422,
      body: {
        Message:
          "Idempotency-Key 'create-idem-space-1' was used for a different request; use a new key for a new request",
      },
    });
    expect((await withKey(env.other, 'create-idem-space-1')('POST', '/space', { Slug: 'idem-space' })).status).toBe(
      201,
    );
  });

  it('creates one change order however often a release pipeline retries it', async () => {
    await env.api.post('/space', { Slug: 'idem-base' });
    await env.api.post('/space/idem-base/unit', { Slug: 'app', Data: 'kind: ConfigMap\nmetadata:\n  name: app\n' });
    const post = withKey(env.api, 'pipeline-run-1234');
    const first = await post('POST', '/space/idem-base/change_order', { Slug: 'release-1', InScopeSpaceIDs: [] });
    expect(first.status).toBe(201);
    expect(await post('POST', '/space/idem-base/change_order', { Slug: 'release-1', InScopeSpaceIDs: [] })).toEqual({
      status: 201,
      body: first.body,
      replayed: 'true',
    });
    // Without the key, the retry is the conflict it always was.
    expect(
      (await env.api.post('/space/idem-base/change_order', { Slug: 'release-1', InScopeSpaceIDs: [] })).status,
    ).toBe(409);
    expect((await env.api.get('/space/idem-base/change_order')).body).toHaveLength(1);
  });

  it('gives the key back when the request failed, and refuses a malformed key', async () => {
    const post = withKey(env.api, 'unit-on-missing-space');
    const unit = { Slug: 'u', Data: 'kind: ConfigMap\nmetadata:\n  name: u\n' };
    expect((await post('POST', '/space/nowhere/unit', unit)).status).toBe(404);
    await env.api.post('/space', { Slug: 'nowhere' });
    expect((await post('POST', '/space/nowhere/unit', unit)).status).toBe(201);
    expect((await withKey(env.api, 'bad key with spaces')('POST', '/space', { Slug: 'x' })).body.Message).toBe(
      'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say)',
    );
  });
});

describe('the OpenAPI contract', () => {
  it('is served without a token, names every route with its method, and matches docs/reference/openapi.json', async () => {
    const res = await env.anonymous.get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const r of [...ROUTES, ...PUBLIC_ROUTES])
      expect(res.body.paths[r.path]?.[r.method.toLowerCase()], `${r.method} ${r.path}`).toBeDefined();
    expect(res.body.paths['/space'].post.requestBody.content['application/json'].schema.properties.Slug).toMatchObject({
      type: 'string',
      maxLength: 128,
    });
    expect(JSON.parse(readFileSync(root('docs/reference/openapi.json'), 'utf8'))).toEqual(
      JSON.parse(JSON.stringify(openApiDocument(ROUTES, PUBLIC_ROUTES))),
    );
    // Every other route still wants a token.
    expect((await env.anonymous.get('/space')).status).toBe(401);
  });
});

describe('events', () => {
  it('have a contract each, an example each that meets it, and docs/reference/events.md up to date', () => {
    for (const d of Object.values(DetailType)) {
      const ex = EVENT_EXAMPLES.find((e) => e.event.detailType === d);
      expect(ex, d).toBeDefined();
      expect(CONTRACTS[d].safeParse(ex!.event.detail).success, d).toBe(true);
    }
    expect(readFileSync(root('docs/reference/events.md'), 'utf8')).toBe(eventsMarkdown());
  });

  it('leave nothing in the outbox once published, each with its EventID; a redelivered one is dropped', async () => {
    await env.api.post('/space', { Slug: 'ev-space' });
    await env.api.post('/space/ev-space/unit', { Slug: 'app', Data: 'kind: ConfigMap\nmetadata:\n  name: app\n' });
    const before = env.bus.log.length;
    const made = await env.api.post('/space/ev-space/attestation', { Type: 'Approval', All: true });
    expect(made.status).toBeLessThan(300);
    const recorded = env.bus.log.slice(before).find((e) => e.detailType === DetailType.AttestationRecorded)!;
    expect(recorded.detail.EventID).toMatch(/^[0-9a-f-]{36}$/);
    expect(await env.deps.store.pendingEvents(10)).toEqual([]);
    expect(await env.deps.store.eventProcessed(String(recorded.detail.EventID), 'ChangeOrderStageReevaluation')).toBe(
      true,
    );
    expect(await consumeStageEvent(env.deps, recorded)).toMatchObject({ applied: false, reason: 'duplicate event' });
  });
});

describe('npm run admin -- create-organization', () => {
  const admin = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', root('lib/local/admin.ts'), ...args],
        {
          env: {
            ...process.env,
            AWS_ENDPOINT_URL: inject('dynamoEndpoint'),
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
        },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  it('gives a table its first organization and an admin token that works, once per name', async () => {
    const made = await admin(['create-organization', 'first-org', '--table', env.table, '-o', 'json']);
    expect(made.code).toBe(0);
    const out = JSON.parse(made.stdout) as { Token: string; Organization: string; User: string };
    expect(out).toMatchObject({ Organization: 'first-org', User: 'admin' });
    const api = new Api(env.url, out.Token);
    expect((await api.post('/space', { Slug: 'first' })).status).toBe(201);
    expect((await api.get('/user')).body.map((u: { Slug: string; Role: string }) => [u.Slug, u.Role])).toEqual([
      ['admin', 'Admin'],
    ]);
    const again = await admin(['create-organization', 'first-org', '--table', env.table]);
    expect(again).toMatchObject({ code: 1, stderr: "Failed: an organization with slug 'first-org' already exists\n" });
    expect((await admin(['create-organization', 'Not A Slug', '--table', env.table])).stderr).toMatch(
      /^Failed: 'Not A Slug' is not a slug/,
    );
  });
});

describe('the API Lambda, observed', () => {
  it('logs JSON lines with the request IDs and the caller’s organization, never the token, and counts 4xx', async () => {
    // Set for this test only (vitest puts them back after it: unstubEnvs), as test files share a process.
    vi.stubEnv('TABLE_NAME', env.table);
    vi.stubEnv('BUS_NAME', 'baton-test');
    vi.stubEnv('AWS_ENDPOINT_URL', inject('dynamoEndpoint'));
    vi.stubEnv('POWERTOOLS_METRICS_NAMESPACE', 'Baton');
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'false');
    const { handler } = await import('../../functions/api.ts');
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const token = env.api.token!;
    try {
      const event = {
        version: '2.0',
        routeKey: 'GET /space/{space_id}',
        rawPath: '/space/no-such-space',
        headers: { authorization: `Bearer ${token}` },
        pathParameters: { space_id: 'no-such-space' },
        isBase64Encoded: false,
        requestContext: {
          requestId: 'api-req-42',
          authorizer: { lambda: { caller: JSON.stringify(env.api.caller) } },
          http: { method: 'GET', path: '/space/no-such-space' },
        },
      };
      const res = await handler(
        event as never,
        {
          awsRequestId: 'lambda-req-7',
          functionName: 'baton-test-Api',
          functionVersion: '1',
          invokedFunctionArn: 'arn',
          memoryLimitInMB: '1024',
          getRemainingTimeInMillis: () => 1000,
        } as never,
      );
      expect(res.statusCode).toBe(404);
    } finally {
      spy.mockRestore();
    }
    const text = lines.join('');
    expect(text).not.toContain(token);
    const logs = text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const answered = logs.find((l) => l.message === 'answered')!;
    expect(answered).toMatchObject({
      level: 'INFO',
      status: 404,
      apiRequestId: 'api-req-42',
      function_request_id: 'lambda-req-7',
      organizationId: env.api.caller!.OrganizationID,
    });
    const emf = logs.find((l) => l._aws && 'Http4xx' in l)!;
    expect(emf).toMatchObject({ Http4xx: 1 });
  });
});

describe('the deployed-stack smoke test (npm run test:localstack)', () => {
  it('passes through the local API: a Release reported Healthy completes its change order', async () => {
    const lines: string[] = [];
    await smoke(env.url, env.api.token!, (l) => lines.push(l), { waitMs: 0 });
    expect(lines.at(-1)).toMatch(/^change order smoke-\w+-base\/v2 Completed after the Healthy report$/);
  });
});

describe('a table an older build made', () => {
  it('is refused by name, with what to do, and left as it was; a new one is made with every index, once', async () => {
    const client = dynamoClient(inject('dynamoEndpoint'));
    const old = `old-${Date.now().toString(36)}`;
    const key = (n: string) => [
      { AttributeName: `${n}pk`, KeyType: 'HASH' as const },
      { AttributeName: `${n}sk`, KeyType: 'RANGE' as const },
    ];
    await client.send(
      new CreateTableCommand({
        TableName: old,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk'].map((a) => ({ AttributeName: a, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: [{ IndexName: 'gsi1', KeySchema: key('gsi1'), Projection: { ProjectionType: 'ALL' } }],
      }),
    );
    await expect(ensureTable(client, old)).rejects.toThrow(
      `table '${old}' was made by an older build of Baton (its indexes: gsi1; this build needs gsi1, gsi2, gsi3): there is no migration before 1.0, so delete .data/ (or the table) and start again`,
    );
    const after = await client.send(new DescribeTableCommand({ TableName: old }));
    expect(after.Table!.GlobalSecondaryIndexes!.map((i) => i.IndexName)).toEqual(['gsi1']);

    const fresh = `fresh-${Date.now().toString(36)}`;
    await ensureTable(client, fresh);
    await ensureTable(client, fresh);
    const made = await client.send(new DescribeTableCommand({ TableName: fresh }));
    expect(made.Table!.GlobalSecondaryIndexes!.map((i) => i.IndexName).sort()).toEqual(['gsi1', 'gsi2', 'gsi3']);
    for (const t of [old, fresh]) await client.send(new DeleteTableCommand({ TableName: t }));
    client.destroy();
  });
});

import { randomUUID } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GZIP_FROM_BYTES } from '../../lib/api/encoding.ts';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';

let server: LocalServer;
let token: string;
let ok: (args: string[], input?: string) => Promise<string>;
const client = dynamoClient(inject('dynamoEndpoint'));

beforeAll(async () => {
  const table = `large-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps } = localDeps(dynamoStore(client, table));
  server = await startServer(deps, { checkAnswers: true });
  ({ token } = await createOrganization(deps, `large-${table}`));
  const cub: (args: string[], input?: string) => Promise<CubResult> = cubAt(server.url, token);
  ok = cubOk(cub);
});
afterAll(async () => server.close());

/** One GET as sent, with the Accept-Encoding given: status, headers and the bytes as they came. */
function get(path: string, acceptEncoding?: string) {
  return new Promise<{ status: number; encoding?: string; bytes: Buffer }>((resolve, reject) => {
    const req = request(
      `${server.url}${path}`,
      {
        headers: { authorization: `Bearer ${token}`, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            encoding: res.headers['content-encoding'],
            bytes: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('large answers', () => {
  it('come gzipped to a client that accepts gzip (cub does), as they are to one that does not', async () => {
    // A ConfigMap of some 200 KB: its data answer is far past the size from which answers are gzipped.
    const lines = Array.from({ length: 4000 }, (_, i) => `  key-${i}: "${randomUUID()}${randomUUID().slice(0, 8)}"`);
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n${lines.join('\n')}\n`;
    expect(yaml.length).toBeGreaterThan(4 * GZIP_FROM_BYTES);
    await ok(['space', 'create', 'big']);
    await ok(['unit', 'create', '--space', 'big', 'big', '-'], yaml);
    expect(await ok(['unit', 'data', '--space', 'big', 'big'])).toBe(yaml);

    const plain = await get('/space/big/unit/big/data');
    expect(plain).toMatchObject({ status: 200, encoding: undefined });
    expect(plain.bytes.toString('utf8')).toBe(yaml);
    const refused = await get('/space/big/unit/big/data', 'gzip;q=0, identity');
    expect(refused.encoding).toBeUndefined();
    const gzipped = await get('/space/big/unit/big/data', 'br, gzip');
    expect(gzipped).toMatchObject({ status: 200, encoding: 'gzip' });
    expect(gzipped.bytes.length).toBeLessThan(yaml.length / 1.5);
    expect(gunzipSync(gzipped.bytes).toString('utf8')).toBe(yaml);
    // A small answer is sent as it is, accepted or not.
    expect((await get('/space/big', 'gzip')).encoding).toBeUndefined();
  });

  it('cub asks for gzip and reads a gzipped answer', async () => {
    // A server in between that records what cub asks for and answers gzipped.
    const asked: (string | undefined)[] = [];
    const proxy = createServer(async (req, res) => {
      asked.push(req.headers['accept-encoding']);
      const upstream = await get(req.url!, 'gzip');
      res.writeHead(upstream.status, {
        'content-type': 'text/plain',
        ...(upstream.encoding ? { 'content-encoding': upstream.encoding } : {}),
      });
      res.end(upstream.bytes);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const data = await cubOk(cubAt(url, token))(['unit', 'data', '--space', 'big', 'big']);
      expect(data).toMatch(/^apiVersion: v1\nkind: ConfigMap\n/);
      expect(data.split('\n')).toHaveLength(4000 + 6);
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.every((a) => a === 'gzip')).toBe(true);
    } finally {
      proxy.close();
    }
  });
});

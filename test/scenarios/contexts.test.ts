import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));
let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env.close());

/** cub with a context file of its own and no server or token in the environment: only contexts say where to go. */
function cubWith(contextFile: string) {
  return (args: string[]): Promise<CubResult> =>
    new Promise((resolve) => {
      const { CUB_SERVER: _s, CUB_TOKEN: _t, ...rest } = process.env;
      execFile(
        process.execPath,
        [BIN, ...args],
        { env: { ...rest, CUB_CONTEXT: contextFile } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
}

describe('cub contexts: one person, several servers or users', () => {
  it('sets, uses, lists and names contexts; --context picks one for a single command; tokens are never printed', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cub-ctx-')), 'context.json');
    const cub = cubWith(file);
    expect((await cub(['context', 'set', 'local', '--server', env.url, '--token', env.api.token!])).stdout).toBe(
      "Context 'local' saved (in use)\n",
    );
    expect(
      (await cub(['context', 'set', 'elsewhere', '--server', 'http://127.0.0.1:1', '--token', 'not-a-token'])).stdout,
    ).toBe("Context 'elsewhere' saved\n");
    expect((await cub(['context', 'current'])).stdout).toBe('local\n');
    expect((await cub(['space', 'create', 'ctx-a'])).code).toBe(0);
    expect((await cub(['context', 'use', 'elsewhere'])).stdout).toBe("Using context 'elsewhere'\n");
    const away = await cub(['space', 'list']);
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(/^Failed: cannot reach http:\/\/127\.0\.0\.1:1 /);
    expect((await cub(['space', 'get', 'ctx-a', '--context', 'local', '-o', 'json'])).stdout).toMatch(
      /"Slug": "ctx-a"/,
    );
    const listed = await cub(['context', 'list']);
    expect(listed.stdout.split('\n').map((l) => l.trim().split(/\s+/))).toEqual([
      ['NAME', 'CURRENT', 'SERVER', 'TOKEN'],
      ['elsewhere', '*', 'http://127.0.0.1:1', 'set'],
      ['local', env.url, 'set'],
      [''],
    ]);
    expect(listed.stdout).not.toContain(env.api.token!);
    const unknown = await cub(['context', 'use', 'nope']);
    expect([unknown.code, unknown.stderr]).toEqual([2, "Usage: no context 'nope'; one of elsewhere, local\n"]);
    expect((await cub(['space', 'list', '--context', 'nope'])).stderr).toBe(
      "Usage: no context 'nope'; one of elsewhere, local\n",
    );
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      current: 'elsewhere',
      contexts: {
        local: { server: env.url, token: env.api.token },
        elsewhere: { server: 'http://127.0.0.1:1', token: 'not-a-token' },
      },
    });
  });

  it('reads a context file of the first format, {server, token}, as the default context', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cub-ctx-')), 'context.json');
    writeFileSync(file, JSON.stringify({ server: env.url, token: env.api.token }));
    const cub = cubWith(file);
    expect((await cub(['context', 'current'])).stdout).toBe('default\n');
    expect((await cub(['space', 'create', 'ctx-b'])).code).toBe(0);
  });
});

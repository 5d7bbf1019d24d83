// The README's ten lines, run as written: the seeded fleet's change from base to prod.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEnv, type Env } from '../support/harness.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'cli/bin.js');

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env?.close());

it('the ten-line walkthrough takes release-v452 from the seeded fleet to prod', async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = /## Ten lines[^\n]*\n+```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  const lines = block.split('\n').filter((l) => l.trim());
  expect(lines).toHaveLength(10);
  const dir = mkdtempSync(join(tmpdir(), 'readme-'));
  writeFileSync(join(dir, 'cub'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(dir, 'cub'), 0o755);
  const shellEnv = {
    ...process.env,
    PATH: `${dir}:${process.env.PATH}`,
    CUB_SERVER: env.url,
    CUB_TOKEN: env.api.token!,
    CUB_CONTEXT: join(dir, 'context.json'),
  };
  for (const line of lines) {
    const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
      execFile('bash', ['-o', 'pipefail', '-c', line], { cwd: ROOT, env: shellEnv }, (err, _out, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      ),
    );
    expect({ line, ...r }).toEqual({ line, code: 0, stderr: expect.not.stringMatching(/Failed|Error/) });
  }
  // It got there: every Stage has the change.
  const co = (await env.api.get('/space/acme-base/change_order/release-v452')).body;
  expect(co.Stage).toBe('prod');
});

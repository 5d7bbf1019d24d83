// The README's ten lines, run as written: the seeded fleet's change from base to prod.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEnv, type Env } from '../support/harness.ts';
import { bashLine } from '../support/cli.ts';

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
    const { code, stderr } = await bashLine(line, { cwd: ROOT, env: shellEnv });
    expect({ line, code, stderr }).toEqual({ line, code: 0, stderr: expect.not.stringMatching(/Failed|Error/) });
  }
  // It got there: every Stage has the change.
  const co = (await env.api.get('/space/acme-base/change_order/release-v452')).body;
  expect(co.Stage).toBe('prod');
});

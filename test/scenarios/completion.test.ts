import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));
let env: Env;
let ok: ReturnType<typeof cubOk>;
/** A folder holding a `cub` command, as a user's PATH would. */
const binDir = mkdtempSync(join(tmpdir(), 'cub-bin-'));
writeFileSync(join(binDir, 'cub'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
chmodSync(join(binDir, 'cub'), 0o755);

beforeAll(async () => {
  env = await startEnv();
  ok = cubOk(cubAt(env.url, env.api.token!));
});
afterAll(async () => env.close());

/** What bash's completion of `cub <words…>` offers for the last word, with the script `cub completion bash` prints. */
function bashComplete(words: string[]): Promise<string[]> {
  const script = `source <(cub completion bash); COMP_WORDS=(cub ${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length}; _cub; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return new Promise((resolve, reject) =>
    execFile(
      'bash',
      ['-c', script],
      {
        env: {
          ...process.env,
          PATH: `${binDir}:${process.env.PATH}`,
          CUB_SERVER: env.url,
          CUB_TOKEN: env.api.token!,
          CUB_CONTEXT: '/nonexistent',
        },
      },
      (err, stdout) => (err ? reject(err) : resolve(stdout.split('\n').filter(Boolean))),
    ),
  );
}

describe('cub completion', () => {
  it('completes entities, verbs, flags, and the Space slugs the server knows, in bash', async () => {
    await ok(['space', 'create', 'acme-base']);
    await ok(['space', 'create', 'acme-dev']);
    await ok(['space', 'create', 'other']);
    expect(await bashComplete(['sp'])).toEqual(['space']);
    expect(await bashComplete(['changeorder', 'c'])).toEqual(['create']);
    // The flags of that verb, not of every verb.
    expect(await bashComplete(['unit', 'list', '--wh'])).toEqual(['--where']);
    expect(await bashComplete(['changeworkflow', 'update', '--stage-'])).toEqual([
      '--stage-prerequisites',
      '--stage-release-prerequisites',
      '--stage-where-space',
    ]);
    expect(await bashComplete(['variant', 'promote', '--cl'])).toEqual([]);
    expect(await bashComplete(['unit', 'list', '--space', 'acme'])).toEqual(['acme-base', 'acme-dev']);
  });

  it('prints a script for zsh and fish too, and refuses another shell', async () => {
    expect(await ok(['completion', 'zsh'])).toMatch(/^#compdef cub\n[\s\S]*compdef _cub cub\n$/);
    expect(await ok(['completion', 'fish'])).toMatch(/complete -c cub -f -a '\(__cub_complete\)'\n$/);
    const r = await cubAt(env.url, env.api.token!)(['completion', 'tcsh']);
    expect([r.code, r.stderr]).toEqual([2, 'Usage: cub completion <bash|zsh|fish>\n']);
  });
});

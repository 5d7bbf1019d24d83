// Every `--help` example runs, as printed, on the spec's fleet (issue 38, item 12).
//
// The acme fleet is seeded as `npm run seed` seeds it; then every verb's example is pasted into a
// shell, in an order a person could have typed them in, with `cub` on PATH (a shim that runs cub's main in
// this process: the shell parses, substitutes and pipes each line; the built binary itself is run by
// readme.test.ts and cli-edges.test.ts). A step marked `setup`
// is not an example: it moves the fleet to where the next example makes sense (a second user to add
// to a group, the change released in staging before it is promoted to prod). Every verb is placed
// exactly once, so a verb added without a runnable example fails here.
import { chmodSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS } from '../../cli/program.ts';
import { acmeFleet, ACME_DEV_DONE } from '../../lib/local/seed.ts';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { bashLine, cubIn } from '../support/cli.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/acme', import.meta.url));

/** A verb's example (`'unit create'`), or a setup line typed between examples. */
type Step = string | { setup: string };

/** The order the examples are typed in. */
const ORDER: Step[] = [
  'space create',
  'space get',
  'space list',
  'component list',
  'component create',
  'component get',
  'unit create',
  'unit get',
  'unit list',
  'unit data',
  'unit diff',
  'revision list',
  'revision get',
  'mutation list',
  'unit update',
  'function list',
  'function get',
  'tag create',
  'tag get',
  'tag list',
  'unit tag',
  'changeset create',
  'changeset get',
  'changeset list',
  'changeset close',
  'changeset delete',
  'link create',
  'link list',
  'link get',
  'link delete',
  'unit delete',
  'variant upload',
  'variant create',
  'filter create',
  'filter get',
  'filter list',
  'filter delete',
  'target create',
  'target update',
  'target get',
  'target list',
  'target delete',
  'invocation create',
  'invocation get',
  'invocation list',
  'invocation delete',
  'changeworkflow create',
  'changeworkflow update',
  'changeworkflow get',
  'changeworkflow list',
  'changeworkflow delete',
  'user create',
  'user get',
  'user list',
  { setup: 'cub user create bob --role Member -q' },
  { setup: 'cub user create carol --role Member -q' },
  'group create',
  'group get',
  'group list',
  'group add-member',
  'group remove-member',
  'space update',
  'variant promote',
  'release publish',
  'release list',
  'release get',
  'release data',
  'release report',
  { setup: 'cub release publish acme-staging-use1 --revision ChangeOrder:acme-base/release-v452' },
  { setup: 'cub release report --space acme-staging-use1 --sync Synced --health Healthy' },
  'variant approve',
  'job get',
  'attestation list',
  'attestation get',
  'attestation revoke',
  { setup: 'cub variant approve --change-order acme-base/release-v452 --stage staging' },
  'changeorder explain',
  'hold create',
  'hold get',
  'hold list',
  'hold lift',
  { setup: 'cub variant promote --change-order acme-base/release-v452 --target-stage prod' },
  'attestation create',
  'changeorder get',
  'changeorder list',
  'changeorder rollout',
  'changeorder timeline',
  // A window over prod made after the change reached it: whether it is open depends on the hour the test runs.
  'window create',
  'window get',
  'window list',
  'changeorder approve-override',
  'window delete',
  // Taking the change back out begins with stopping it.
  'changeorder update',
  'variant demote',
  'changeorder demote',
  'report delivery',
  'notification create',
  'notification get',
  'notification list',
  'notification deliveries',
  'notification delete',
  'function set',
  'changeorder create',
  // A protected change in dev that the base's next change then touches: a conflict to look at.
  {
    setup:
      'cub function set --space acme-dev --unit deployment --protect -- set-image-reference-by-uri ghcr.io/acme/acme :v452-hotfix',
  },
  { setup: 'cub unit update --space acme-dev deployment --upgrade' },
  'unit conflicts',
  'tag delete',
  'release withdraw',
  'token create',
  'token list',
  'token revoke',
  'user update',
  'user delete',
  'group delete',
  'space delete',
  'context set',
  'context use',
  'context list',
  'context current',
];

let env: Env;
let dir: string;
let server: Server;

/**
 * The `cub` on PATH, in bash (a node start per line was half of this test's time): it sends its
 * directory, its arguments and, when they name `-`, its standard input, each ended by a NUL, to this test's
 * runner, and gets back its exit status, standard error (its length first) and standard output.
 */
const shim = (port: number) => `#!/bin/bash
export LC_ALL=C
stdin=
for a in "$@"; do [ "$a" = - ] && { IFS= read -r -d '' stdin; break; }; done
exec 3<>/dev/tcp/127.0.0.1/${port}
printf '%s\\0' "$PWD" "$#" "$@" "$stdin" >&3
IFS= read -r code <&3
IFS= read -r n <&3
if [ "$n" -gt 0 ]; then IFS= read -r -N "$n" err <&3; printf '%s' "$err" >&2; fi
cat <&3
exit "$code"
`;
let sh: (line: string) => Promise<{ code: number; stdout: string; stderr: string }>;

beforeAll(async () => {
  env = await startEnv();
  // Where the examples are pasted: `cub` on PATH, the files the examples name beside them.
  dir = mkdtempSync(join(tmpdir(), 'cub-examples-'));
  // `cub` on PATH hands its command line to cub's main in this process (a bash script, not the bundle's
  // node start): the shell still parses, substitutes and pipes every line as pasted.
  const runnerEnv = {
    ...process.env,
    CUB_SERVER: env.url,
    CUB_TOKEN: env.api.token!,
    CUB_CONTEXT: join(dir, 'contexts.json'),
    CUB_POLL_MS: '20',
  };
  // One connection per line typed: NUL-ended fields (directory, argument count, arguments, standard input).
  server = createNetServer((socket) => {
    let buf = Buffer.alloc(0);
    let taken = false;
    socket.on('error', () => {}); // a line the shell gave up on (its pipe closed): nothing to answer
    socket.on('data', async (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const fields = buf.toString('utf8').split('\0');
      const argc = Number(fields[1]);
      if (taken || fields.length < argc + 4) return;
      taken = true;
      const [cwd, , ...rest] = fields;
      const r = await cubIn(runnerEnv, cwd)(rest.slice(0, argc), rest[argc]);
      socket.end(`${r.code}\n${Buffer.byteLength(r.stderr)}\n${r.stderr}${r.stdout}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  writeFileSync(join(dir, 'cub'), shim((server.address() as AddressInfo).port));
  chmodSync(join(dir, 'cub'), 0o755);
  writeFileSync(join(dir, 'worker.yaml'), deploymentYaml('worker'));
  cpSync(FIXTURES, join(dir, 'k8s'), { recursive: true });
  const shellEnv = {
    ...process.env,
    PATH: `${dir}:${process.env.PATH}`,
    CUB_SERVER: env.url,
    CUB_TOKEN: env.api.token!,
    CUB_CONTEXT: join(dir, 'contexts.json'),
    CUB_POLL_MS: '20',
  };
  sh = (line) => bashLine(line, { cwd: dir, env: shellEnv });
  for (const step of [...acmeFleet(FIXTURES), ...ACME_DEV_DONE]) {
    const r = await sh(
      ['cub', ...step.args.map((a) => `'${a.replace(/'/g, `'\\''`)}'`)].join(' ') +
        (step.input ? ` <<'EOF'\n${step.input}EOF` : ''),
    );
    expect(r.stderr, step.args.join(' ')).toBe('');
  }
});
afterAll(async () => {
  server?.close();
  await env?.close();
});

describe('--help examples', () => {
  it('place every verb once', () => {
    const placed = ORDER.filter((s): s is string => typeof s === 'string');
    const verbs = Object.entries(VERBS).flatMap(([entity, verbs]) => Object.keys(verbs).map((v) => `${entity} ${v}`));
    expect([...placed].sort()).toEqual([...verbs].sort());
  });

  it('each run as printed, in turn, on the seeded fleet', async () => {
    for (const step of ORDER) {
      const line = typeof step === 'string' ? VERBS[step.split(' ')[0]!]![step.split(' ')[1]!]!.example : step.setup;
      const r = await sh(line);
      // Ran, said nothing on standard error, and printed something: a list that matches nothing is not an example.
      expect({ line, code: r.code, stderr: r.stderr }).toEqual({ line, code: 0, stderr: '' });
      expect(r.stdout.trim(), line).not.toBe('');
    }
  });
  it("the guide's deploy-window commands run as written, after the examples", async () => {
    // The fenced block under "Deploy windows and freezes" in docs/guide.md, line by line.
    const guide = readFileSync(fileURLToPath(new URL('../../docs/guide.md', import.meta.url)), 'utf8');
    const section = guide.slice(guide.indexOf('## Deploy windows and freezes'));
    const block = /```\n([\s\S]*?)```/.exec(section)![1]!;
    const lines = block.trim().split('\n');
    expect(lines.length).toBe(7);
    for (const line of lines) {
      const r = await sh(line);
      expect({ line, code: r.code, stderr: r.stderr }).toEqual({ line, code: 0, stderr: '' });
    }
    const windows = JSON.parse((await sh('cub window list -o json')).stdout) as { Slug: string }[];
    expect(windows.map((w) => w.Slug)).toEqual(['prod-weekdays', 'weekend-freeze']);
  });
});

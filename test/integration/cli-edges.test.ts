// cub as a command line people trust: global flags anywhere, quiet pipes, -q everywhere (issue 38).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { bashLine, cubAt, cubOk } from '../support/cli.ts';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));

let env: Env;
let cub: ReturnType<typeof cubAt>;
let ok: ReturnType<typeof cubOk>;
beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  ok = cubOk(cub);
  await env.api.post('/space', { Slug: 'clusters' });
  await env.api.post('/space/clusters/target', { Slug: 'prod' });
});
afterAll(async () => env.close());

/** A shell line, with cub as `$CUB` and the server but no token in the environment. */
const sh = (line: string) =>
  bashLine(line, {
    env: {
      ...process.env,
      CUB: `${process.execPath} ${BIN}`,
      CUB_SERVER: env.url,
      CUB_CONTEXT: '/nonexistent',
      CUB_TOKEN: '',
    },
  });

describe('global flags', () => {
  it('are taken before the entity as well as after the verb', async () => {
    const token = env.api.token!;
    const before = await sh(`$CUB --token ${token} -o json space list`);
    expect([before.code, before.stderr]).toEqual([0, '']);
    expect(JSON.parse(before.stdout).map((s: { Slug: string }) => s.Slug)).toContain('clusters');
    const after = await sh(`$CUB space list --token ${token} -o json`);
    expect(JSON.parse(after.stdout)).toEqual(JSON.parse(before.stdout));
    expect((await sh(`$CUB --token=${token} -q --server ${env.url} space list`)).stdout.split('\n')).toContain(
      'clusters',
    );
    // Without the token, wherever it goes, the server refuses.
    expect((await sh('$CUB -o json space list')).code).toBe(1);
  });
});

describe('a pipe closed early', () => {
  it('ends cub quietly: no EPIPE trace, exit 0', async () => {
    // `true` reads nothing and exits at once: every write cub makes meets a closed pipe.
    const r = await sh(`$CUB --token ${env.api.token!} space list | true`);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const help = await sh('$CUB unit create --help | head -1');
    expect([help.code, help.stdout, help.stderr]).toEqual([0, 'Usage: cub unit create [options] <unit> <file>\n', '']);
  });
});

describe('-q', () => {
  it('prints only the names or ids, one a line, on the verbs that create and list', async () => {
    expect(await ok(['space', 'create', 'qa', '--release-target', 'clusters/prod', '-q'])).toBe('qa\n');
    expect(
      await ok(['unit', 'create', '--space', 'qa', 'api', '-', '-q'], deploymentYaml('api', { namespace: 'qa' })),
    ).toBe('api\n');
    expect(await ok(['unit', 'list', '--space', 'qa', '-q'])).toBe('api\n');
    expect(await ok(['release', 'publish', 'qa', '-q'])).toBe('1\n');
    expect(await ok(['release', 'list', '--space', 'qa', '-q'])).toBe('1\n');
    expect(await ok(['variant', 'create', 'qa-eu', 'qa', '-q'])).toMatch(/^qa-eu\n$/);
    const secret = (await ok(['token', 'create', '--service', 'argocd', '--scope', 'ReportStatus', '-q'])).trim();
    expect(secret).toMatch(/^\S+$/);
    expect((await sh(`$CUB --token ${secret} -q release report --space qa --sync Synced --health Healthy`)).code).toBe(
      0,
    );
    expect((await ok(['token', 'list', '-q'])).trim().split('\n').length).toBeGreaterThanOrEqual(2);
    const user = (await ok(['user', 'create', 'bob', '-q'])).trim();
    expect(user).toMatch(/^\S+$/);
    expect(await ok(['user', 'list', '-q'])).toContain('bob\n');
  });
});

describe("the README's way to put cub on PATH", () => {
  it('npm install -g . gives a cub that runs from anywhere', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'cub-prefix-'));
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const install = await sh(
      `cd ${root} && npm install -g . --prefix ${prefix} --offline --no-audit --no-fund --loglevel=error`,
    );
    expect(install.code, install.stderr).toBe(0);
    const r = await sh(`cd / && ${prefix}/bin/cub --token ${env.api.token!} space list -q`);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.split('\n')).toContain('clusters');
  });
});

describe('wording', () => {
  it('an attestation of a type says what it recorded, in English', async () => {
    const dry = await ok([
      'attestation',
      'create',
      '--space',
      'qa',
      '--type',
      'ChangeRecord',
      '--claim',
      'ticket=CHG-1',
      '--dry-run',
    ]);
    expect(dry.split('\n')[0]).toBe('Would record ChangeRecord for revisions in 1 space(s)');
    const did = await ok([
      'attestation',
      'create',
      '--space',
      'qa',
      '--type',
      'ChangeRecord',
      '--claim',
      'ticket=CHG-1',
    ]);
    expect(did.split('\n')[0]).toBe('Recorded ChangeRecord for revisions in 1 space(s)');
    const no = await ok([
      'attestation',
      'create',
      '--space',
      'qa',
      '--type',
      'ChangeRecord',
      '--reject',
      '--note',
      'not yet',
    ]);
    expect(no.split('\n')[0]).toBe('Rejected revisions in 1 space(s)');
  });
});

describe('tables show names, not IDs', () => {
  it('a Link by its Units, an attestation by who made it, a ChangeOrder by its Component and a deleted Space as deleted', async () => {
    await ok(['component', 'create', 'shop']);
    await ok(['space', 'create', 'shop-base', '--component', 'shop']);
    await ok(['unit', 'create', '--space', 'shop-base', 'api', '-'], deploymentYaml('api', { namespace: 'shop' }));
    for (const s of ['shop-dev', 'shop-tmp'])
      expect(await ok(['variant', 'create', 'x', 'shop-base', '--space-slug', s, '-q'])).toBe(`${s}\n`);
    expect(await ok(['link', 'list', '--space', 'shop-dev'])).toMatch(/\s+UpgradeUnit\s+api\s+shop-base\/api\s/);
    await ok(['attestation', 'create', '--space', 'shop-dev', '--type', 'ChangeRecord', '--claim', 'ticket=CHG-2']);
    const who = env.api.caller!.UserID;
    const atts = await ok(['attestation', 'list', '--space', 'shop-dev']);
    expect(atts).not.toContain(who);
    expect(atts).toMatch(/ChangeRecord\s+Pass\s+admin\s/);
    await ok(['changeorder', 'create', '--space', 'shop-base', 'bump', '--component', 'shop']);
    // A Link made by hand, shown the same way.
    await ok(['unit', 'create', '--space', 'shop-dev', 'worker', '-'], deploymentYaml('worker', { namespace: 'shop' }));
    expect(
      await ok([
        'link',
        'create',
        '--space',
        'shop-dev',
        'worker-base',
        'worker',
        'api',
        'shop-base',
        '--update-type',
        'MergeUnits',
      ]),
    ).toMatch(/worker-base\s+MergeUnits\s+worker\s+shop-base\/api\s/);
    await ok(['space', 'delete', 'shop-tmp', '--recursive']);
    const got = await ok(['changeorder', 'get', '--space', 'shop-base', 'bump']);
    expect(got).toMatch(/^Component\s+shop$/m);
    expect(got).toMatch(/^Where Space\s+-$/m);
    expect(got).toMatch(/^In-Scope Spaces\s+\(deleted space [0-9a-f]{8}\), shop-dev$/m);
    expect(got).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });
});

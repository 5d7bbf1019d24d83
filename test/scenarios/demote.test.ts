import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const acmeDir = fileURLToPath(new URL('../fixtures/acme', import.meta.url));
const ok = (args: string[], input?: string) => cubOk(cub)(args, input);
const SPACES = [
  'acme-base',
  'acme-dev',
  'acme-staging-euw1',
  'acme-staging-use1',
  'acme-prod-euw1',
  'acme-prod-use1',
  'acme-prod-apse1',
];
const CO = 'acme-base/release-v452';

/** What every Unit of the fleet holds: the deployment's image and replicas, the config's data, by Space (read over HTTP; the steps go through cub). */
async function fleet(): Promise<Record<string, string>> {
  const data = async (space: string, unit: string) =>
    parseAllDocuments((await env.api.get(`/space/${space}/unit/${unit}/data`)).text)[0]!.toJS();
  const rows = await Promise.all(
    SPACES.map(async (space) => {
      const [d, c] = await Promise.all([data(space, 'deployment'), data(space, 'config')]);
      return [
        space,
        `${d.spec.template.spec.containers[0].image} x${d.spec.replicas} ${JSON.stringify(c.data)}`,
      ] as const;
    }),
  );
  return Object.fromEntries(rows);
}
const v451 = 'ghcr.io/acme/acme:v451 x1 {"LOG_LEVEL":"info"}';
const v452 = 'ghcr.io/acme/acme:v452 x1 {"LOG_LEVEL":"info"}';

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

describe("undoing a rollout, as the spec's abort → dry run → demote → rerun → publish the restore", () => {
  it('carries release-v452 everywhere, releases it in two Spaces, and one prod Space moves on', async () => {
    await ok(['variant', 'upload', '--component', 'acme', '--variant', 'base', acmeDir]);
    await ok(['space', 'create', 'infra']);
    for (const [name, stage] of [
      ['dev', 'Development'],
      ['staging-euw1', 'Staging'],
      ['staging-use1', 'Staging'],
      ['prod-euw1', 'Production'],
      ['prod-use1', 'Production'],
      ['prod-apse1', 'Production'],
    ] as const) {
      await ok(['target', 'create', '--space', 'infra', `t-${name}`]);
      await ok([
        'variant',
        'create',
        name,
        'acme-base',
        '--stage',
        stage,
        '--namespace',
        'acme',
        '--target',
        `infra/t-${name}`,
      ]);
    }
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'acme-base',
      'main-line',
      '--stage',
      'Development',
      '--stage',
      'Staging',
      '--stage',
      'Production',
    ]);
    expect(await fleet()).toEqual(Object.fromEntries(SPACES.map((s) => [s, v451])));
    await ok([
      'function',
      'set',
      '--space',
      'acme-base',
      '--unit',
      'deployment',
      '--change-desc',
      'Release v452',
      '--',
      'set-image-reference-by-uri',
      'ghcr.io/acme/acme',
      ':v452',
    ]);
    await ok([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'release-v452',
      '--change-workflow',
      'acme-base/main-line',
    ]);
    for (const stage of ['Development', 'Staging', 'Production'])
      await ok(['variant', 'promote', '--change-order', CO, '--target-stage', stage]);
    for (const s of ['acme-staging-euw1', 'acme-prod-use1'])
      await ok(['release', 'publish', '--revision', `ChangeOrder:${CO}`, s]);
    await ok([
      'function',
      'set',
      '--space',
      'acme-prod-use1',
      '--unit',
      'deployment',
      '--change-desc',
      'scale for the sale',
      'set-replicas',
      '4',
    ]);
    expect(await fleet()).toEqual({
      ...Object.fromEntries(SPACES.map((s) => [s, v452])),
      'acme-prod-use1': 'ghcr.io/acme/acme:v452 x4 {"LOG_LEVEL":"info"}',
    });
  });

  it('refuses to demote before the abort; the abort is recorded with who and when', async () => {
    const early = await cub(['variant', 'demote', 'acme-prod-use1', '--change-order', CO]);
    expect([early.code, early.stderr]).toEqual([
      1,
      "Failed: HTTP 409: change order 'release-v452' is not aborted: abort it first (cub changeorder update --aborted-reason R), so no one is still promoting what you take back out\n",
    ]);
    const aborted = await ok([
      'changeorder',
      'update',
      '--space',
      'acme-base',
      'release-v452',
      '--aborted-reason',
      'superseded by v453',
    ]);
    expect(aborted).toMatch(/State\s+Aborted\n/);
    expect(aborted).toMatch(/Aborted Reason\s+superseded by v453 \(\d{4}-\d\d-\d\dT[\d:.]+Z by admin\)\n/);
    expect(aborted).toMatch(/Restored Spaces\s+-\n/);
    expect((await cub(['variant', 'promote', '--change-order', CO])).stderr).toMatch(
      /HTTP 409: change order 'release-v452' was aborted \(superseded by v453\)/,
    );
  });

  it('previews, demotes one Space in one revision per Unit, and a rerun changes nothing', async () => {
    const before = await fleet();
    const plan = await ok(['variant', 'demote', 'acme-prod-use1', '--change-order', CO, '--dry-run']);
    expect(plan).toMatch(
      /^Would restore 2 unit\(s\) of acme-prod-use1 to what change order acme-base\/release-v452 started from\n/,
    );
    expect(plan).toMatch(/config\s+Mark\s+NoChange\s+2\s+2\s*\n/);
    expect(plan).toMatch(/deployment\s+Restore\s+2\s+5\s+4 by admin \(scale for the sale\)\n/);
    expect(await fleet()).toEqual(before);

    const done = await ok([
      'variant',
      'demote',
      'acme-prod-use1',
      '--change-order',
      CO,
      '--change-desc',
      'back out v452',
    ]);
    expect(done).toMatch(
      /^Restored 2 unit\(s\) of acme-prod-use1; change order acme-base\/release-v452 is taken back out of it\n/,
    );
    expect(await fleet()).toEqual({ ...before, 'acme-prod-use1': v451 });
    expect(await ok(['revision', 'list', '--space', 'acme-prod-use1', 'deployment'])).toMatch(
      /5\s+Restore\s+back out v452/,
    );

    const again = await ok(['variant', 'demote', 'acme-prod-use1', '--change-order', CO]);
    expect(again).toMatch(
      /^Nothing left to restore in acme-prod-use1; change order acme-base\/release-v452 is taken back out of it\n/,
    );
    expect(again).toMatch(/deployment\s+Unchanged\s+AlreadyRestored\s+2\s+5/);
    expect(await fleet()).toEqual({ ...before, 'acme-prod-use1': v451 });
    const got = await ok(['changeorder', 'get', '--space', 'acme-base', 'release-v452']);
    expect(got).toMatch(/State\s+Aborted\n/);
    expect(got).toMatch(/Restored Spaces\s+acme-prod-use1\n/);
  });

  it('Restored once every Space that took it is demoted; RestoreReleased once those that released it release the restore', async () => {
    for (const s of ['acme-dev', 'acme-staging-euw1', 'acme-staging-use1', 'acme-prod-euw1', 'acme-prod-apse1'])
      await ok(['variant', 'demote', s, '--change-order', CO]);
    // The sources are left alone: the base keeps v452; nothing was promoted or published.
    expect(await fleet()).toEqual({ ...Object.fromEntries(SPACES.map((s) => [s, v451])), 'acme-base': v452 });
    expect(await ok(['changeorder', 'list', '--where', "State = 'Restored'", '-q'])).toBe('release-v452\n');
    expect(await ok(['release', 'list', '--space', 'acme-prod-use1', '-q'])).toBe('1\n');
    const pub = await ok(['release', 'publish', '--revision', `Before:ChangeOrder:${CO}`, 'acme-prod-use1']);
    expect(pub).toMatch(/^Published release 2 of acme-prod-use1/);
    expect(pub).toMatch(/deployment\s+5\n/);
    expect(await ok(['changeorder', 'list', '--where', "State = 'Restored'", '-q'])).toBe('release-v452\n');
    await ok(['release', 'publish', '--revision', `Before:ChangeOrder:${CO}`, 'acme-staging-euw1']);
    const got = await ok(['changeorder', 'get', '--space', 'acme-base', 'release-v452']);
    expect(got).toMatch(/State\s+RestoreReleased\n/);
    expect(got).toMatch(
      /Restored Spaces\s+acme-dev, acme-prod-apse1, acme-prod-euw1, acme-prod-use1, acme-staging-euw1, acme-staging-use1\n/,
    );
    expect(got).toMatch(/Restore-released Spaces\s+acme-prod-use1, acme-staging-euw1\n/);
    expect(await ok(['changeorder', 'list', '--where', "State = 'RestoreReleased'", '-q'])).toBe('release-v452\n');
    // The ChangeOrder's own Tags never moved: prod-use1 still took the change at revision 3.
    const endTag = JSON.parse(
      await ok(['tag', 'get', '--space', 'acme-base', 'release-v452-co-end', '-o', 'json']),
    ).TagID;
    const restoreTag = JSON.parse(
      await ok(['tag', 'get', '--space', 'acme-base', 'release-v452-co-restore', '-o', 'json']),
    ).TagID;
    const marked = (tag: string) =>
      ok([
        'revision',
        'list',
        '--space',
        'acme-prod-use1',
        'deployment',
        '--where',
        `Tags ? '${tag}'`,
        '-o',
        'json',
      ]).then((t) => JSON.parse(t).map((r: { RevisionNum: number }) => r.RevisionNum));
    expect(await marked(endTag)).toEqual([3]);
    expect(await marked(restoreTag)).toEqual([5]);
    // Once anything is restored, the abort reason stays.
    expect(
      (await cub(['changeorder', 'update', '--space', 'acme-base', 'release-v452', '--aborted-reason', 'never mind']))
        .stderr,
    ).toBe(
      "Failed: HTTP 409: change order 'release-v452' has been restored in some spaces, so its abort reason ('superseded by v453') can no longer change\n",
    );
  });
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const ok = (args: string[], input?: string) => cubOk(cub)(args, input);
const acmeDir = fileURLToPath(new URL('../fixtures/acme', import.meta.url));
const registry = (tag: string) =>
  `configHub:\n  configSchema: registrybot.confighub.com/v1alpha4\n  configName: acme\nrepository: ghcr.io/acme/acme\nstreams:\n  stable:\n    tag: ${tag}\n`;
const link = readFileSync(fileURLToPath(new URL('../fixtures/registrybot/link.yaml', import.meta.url)), 'utf8');
const SPACES = ['acme-dev', 'acme-staging', 'acme-prod'];
const images = async () =>
  Object.fromEntries(
    await Promise.all(
      SPACES.map(
        async (s) =>
          [s, (await env.api.get(`/space/${s}/unit/deployment/data`)).text.match(/image: (\S+)/)![1]] as const,
      ),
    ),
  );

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

describe("rollouts from a source outside the component: the spec's registrybot flow through cub", () => {
  it('follows registrybot with a TransformPaths Link per variant', async () => {
    await ok(['variant', 'upload', '--component', 'acme', '--variant', 'base', acmeDir]);
    for (const [name, stage] of [
      ['dev', 'Development'],
      ['staging', 'Staging'],
      ['prod', 'Production'],
    ] as const)
      await ok(['variant', 'create', name, 'acme-base', '--stage', stage, '--namespace', 'acme']);
    await ok(['space', 'create', 'acme-workflows']);
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'acme-workflows',
      'acme-main-line',
      '--stage',
      'Development',
      '--stage',
      'Staging',
      '--stage',
      'Production',
    ]);
    await ok(['space', 'create', 'registry-facts']);
    await ok(
      ['unit', 'create', '--space', 'registry-facts', 'acme', '-', '--toolchain', 'ConfigHub/YAML'],
      registry('v453'),
    );
    for (const s of SPACES) {
      await ok(
        [
          'link',
          'create',
          '--space',
          s,
          '-',
          'deployment',
          'acme',
          'registry-facts',
          '--update-type',
          'TransformPaths',
          '--from-stdin',
        ],
        link,
      );
      await ok(['unit', 'update', '--patch', '--resolve', 'Link:*', '--space', s, 'deployment']);
    }
    expect(await images()).toEqual({
      'acme-dev': 'ghcr.io/acme/acme:v453',
      'acme-staging': 'ghcr.io/acme/acme:v453',
      'acme-prod': 'ghcr.io/acme/acme:v453',
    });
  });

  it('names a new tag with a ChangeOrder of the Links’ type, and rolls it out stage by stage; a tag recorded mid-rollout reaches no later stage', async () => {
    await ok(['unit', 'update', '--space', 'registry-facts', 'acme', '-'], registry('v454'));
    const base = [
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'acme-stable-v454',
      '--description',
      'acme stable is v454',
      '--update-type',
      'TransformPaths',
    ];
    expect((await cub([...base, '--change-workflow', 'acme-workflows/acme-main-line'])).stderr).toMatch(
      /^Failed: HTTP 400: a TransformPaths change order needs the Spaces in scope \(--component/,
    );
    expect((await cub([...base, '--component', 'acme', '--prior-revisions', 'All'])).stderr).toBe(
      'Failed: HTTP 400: --prior-revisions does not apply to a TransformPaths change order: its change was made in the sources its Links follow\n',
    );
    const made = await ok([...base, '--component', 'acme', '--change-workflow', 'acme-workflows/acme-main-line']);
    expect(made).toMatch(/In-Scope Spaces\s+acme-dev, acme-prod, acme-staging\n/);
    const co = 'acme-base/acme-stable-v454';
    expect(await ok(['variant', 'promote', '--change-order', co])).toMatch(
      /acme-dev\s+Promote\s+deployment\s+Resolve\s+\d+/,
    );
    expect(await images()).toEqual({
      'acme-dev': 'ghcr.io/acme/acme:v454',
      'acme-staging': 'ghcr.io/acme/acme:v453',
      'acme-prod': 'ghcr.io/acme/acme:v453',
    });
    // registrybot records v455 while the rollout is under way: that is a change for another ChangeOrder.
    await ok(['unit', 'update', '--space', 'registry-facts', 'acme', '-'], registry('v455'));
    await ok(['variant', 'promote', '--change-order', co, '--target-stage', 'Staging']);
    await ok(['variant', 'promote', '--change-order', co, '--target-stage', 'Production']);
    expect(await images()).toEqual({
      'acme-dev': 'ghcr.io/acme/acme:v454',
      'acme-staging': 'ghcr.io/acme/acme:v454',
      'acme-prod': 'ghcr.io/acme/acme:v454',
    });
    expect(await ok(['changeorder', 'get', '--space', 'acme-base', 'acme-stable-v454'])).toMatch(/State\s+Resolved\n/);
    // Demoting restores the Spaces in scope and leaves the source alone.
    await ok([
      'changeorder',
      'update',
      '--space',
      'acme-base',
      'acme-stable-v454',
      '--aborted-reason',
      'v454 is broken',
    ]);
    await ok(['variant', 'demote', 'acme-prod', '--change-order', co]);
    expect((await images())['acme-prod']).toBe('ghcr.io/acme/acme:v453');
    expect((await env.api.get('/space/registry-facts/unit/acme/data')).text).toContain('tag: v455');
  });

  it('is refused when a Link in scope is AutoUpdate, or already past where the change would end', async () => {
    await ok(['space', 'create', 'auto-space']);
    await ok([
      'unit',
      'create',
      '--space',
      'auto-space',
      'deployment',
      fileURLToPath(new URL('../fixtures/acme/deployment.yaml', import.meta.url)),
    ]);
    await ok(
      [
        'link',
        'create',
        '--space',
        'auto-space',
        'auto-link',
        'deployment',
        'acme',
        'registry-facts',
        '--update-type',
        'TransformPaths',
        '--auto-update',
        'true',
        '--from-stdin',
      ],
      link,
    );
    expect(
      (
        await cub([
          'changeorder',
          'create',
          '--space',
          'acme-base',
          'auto',
          '--update-type',
          'TransformPaths',
          '--in-scope-space',
          'auto-space',
        ])
      ).stderr,
    ).toBe(
      "Failed: HTTP 409: link 'auto-link' is AutoUpdate: it takes a new source revision the moment it is written, ahead of any gate; turn AutoUpdate off first\n",
    );
    // acme-dev resolved v455 (revision 3); a change order ending at revision 2 would take it back.
    await ok(['unit', 'update', '--patch', '--resolve', 'Link:*', '--space', 'acme-dev', 'deployment']);
    await ok(['unit', 'tag', 'v454', '--space', 'registry-facts', '--unit', 'acme', '--revision', '2']);
    expect(
      (
        await cub([
          'changeorder',
          'create',
          '--space',
          'acme-base',
          'back',
          '--update-type',
          'TransformPaths',
          '--in-scope-space',
          'acme-dev',
          '--end-tag',
          'registry-facts/v454',
        ])
      ).stderr,
    ).toMatch(
      /^Failed: HTTP 409: link '[^']+' has already resolved revision 3 of 'acme', past the revision 2 this change order would end at/,
    );
  });
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const ok = (args: string[], input?: string) => cubOk(cub)(args, input);
const fixture = (p: string) => fileURLToPath(new URL(`../fixtures/${p}`, import.meta.url));
const insertLink = readFileSync(fixture('platform/insert-link.yaml'), 'utf8');
const upsertLink = readFileSync(fixture('platform/upsert-link.yaml'), 'utf8');
const settings = (level: string) =>
  `configHub:\n  configSchema: acme.example.com/v1\n  configName: settings\nlog:\n  level: ${level}\n`;
const shared = (region: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: acme-shared\ndata:\n  region: ${region}\n`;
const SPACES = ['acme-dev', 'acme-staging', 'acme-prod'];
const config = async (s: string) => (await env.api.get(`/space/${s}/unit/config/data`)).text;
const levels = async () =>
  Object.fromEntries(
    await Promise.all(SPACES.map(async (s) => [s, (await config(s)).match(/level: (\w+)/)?.[1]] as const)),
  );

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

describe('Insert and Upsert Links, and change orders of their type, through cub', () => {
  it('an Insert Link puts a source document in a ConfigMap key; an Upsert Link carries a whole resource in', async () => {
    await ok(['variant', 'upload', '--component', 'acme', '--variant', 'base', fixture('acme')]);
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
    await ok(['space', 'create', 'platform']);
    await ok(
      ['unit', 'create', '--space', 'platform', 'settings', '-', '--toolchain', 'ConfigHub/YAML'],
      settings('info'),
    );
    await ok(['unit', 'create', '--space', 'platform', 'shared', '-'], shared('eu'));
    // A setter that only reads, and an Upsert setter reading a value no Path gives, are refused when the Link is saved.
    const readOnly = insertLink.replace('set-string-path', 'get-placeholders');
    expect(
      (
        await cub(
          [
            'link',
            'create',
            '--space',
            'acme-dev',
            'bad',
            'config',
            'settings',
            'platform',
            '--update-type',
            'Insert',
            '--from-stdin',
          ],
          readOnly,
        )
      ).stderr,
    ).toBe("Failed: HTTP 400: DownstreamSetters function 'get-placeholders' only reads; a setter must write\n");
    expect(
      (
        await cub(
          [
            'link',
            'create',
            '--space',
            'acme-dev',
            'bad',
            'config',
            'settings',
            'platform',
            '--update-type',
            'TransformPaths',
            '--from-stdin',
          ],
          insertLink,
        )
      ).stderr,
    ).toBe("Failed: HTTP 400: UpstreamPaths 'settings' needs a Path: a TransformPaths link reads single values\n");
    for (const s of SPACES) {
      await ok(
        [
          'link',
          'create',
          '--space',
          s,
          'settings',
          'config',
          'settings',
          'platform',
          '--update-type',
          'Insert',
          '--from-stdin',
        ],
        insertLink,
      );
      await ok(
        [
          'link',
          'create',
          '--space',
          s,
          'shared',
          'config',
          'shared',
          'platform',
          '--update-type',
          'Upsert',
          '--from-stdin',
        ],
        upsertLink,
      );
      await ok(['unit', 'update', '--patch', '--resolve', 'Link:*', '--space', s, 'config']);
    }
    const dev = await config('acme-dev');
    expect(dev).toContain(
      '  LOG_LEVEL: info\n  settings.yaml: |\n    configHub:\n      configSchema: acme.example.com/v1\n      configName: settings\n    log:\n      level: info\n',
    );
    expect(dev).toContain(
      '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: acme-shared\ndata:\n  region: eu\n',
    );
    expect(await levels()).toEqual({ 'acme-dev': 'info', 'acme-staging': 'info', 'acme-prod': 'info' });
  });

  it('an Insert change order rolls a new source document out stage by stage; the base counts once its own Link took it', async () => {
    await ok(['unit', 'update', '--space', 'platform', 'settings', '-'], settings('debug'));
    // The base follows the source too, and has already taken the new document.
    await ok(
      [
        'link',
        'create',
        '--space',
        'acme-base',
        'settings',
        'config',
        'settings',
        'platform',
        '--update-type',
        'Insert',
        '--from-stdin',
      ],
      insertLink,
    );
    await ok(['unit', 'update', '--patch', '--resolve', 'Link:settings', '--space', 'acme-base', 'config']);
    const made = await ok([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'debug-logs',
      '--update-type',
      'Insert',
      '--component',
      'acme',
      '--change-workflow',
      'acme-workflows/acme-main-line',
    ]);
    expect(made).toMatch(/In-Scope Spaces\s+acme-base, acme-dev, acme-prod, acme-staging\n/);
    expect(made).toMatch(/State\s+InProgress\n/);
    const co = 'acme-base/debug-logs';
    expect(
      (await cub(['unit', 'update', '--upgrade', '--change-order', co, '--space', 'acme-dev', 'config'])).stderr,
    ).toBe(
      "Failed: HTTP 400: change order 'debug-logs' is an Insert change order: its Units take it by resolving their Links at the sources' end, not by a merge; promote it into the Space (cub variant promote acme-dev --change-order acme-base/debug-logs)\n",
    );
    // The printed command runs; its dry run shows the values the resolve would change, per Unit.
    const printed = ['variant', 'promote', 'acme-dev', '--change-order', 'acme-base/debug-logs'];
    const dry = await ok([...printed, '--dry-run', '-o', 'mutations']);
    expect(dry).toMatch(/^acme-dev\/config:\n {2}\S/m);
    expect(await ok(['variant', 'promote', '--change-order', co])).toMatch(
      /acme-dev\s+Promote\s+config\s+Resolve\s+\d+/,
    );
    // Only the Insert Link resolved: the Upsert Link's source is not this change order's.
    expect(await levels()).toEqual({ 'acme-dev': 'debug', 'acme-staging': 'info', 'acme-prod': 'info' });
    await ok(['variant', 'promote', '--change-order', co]);
    await ok(['variant', 'promote', '--change-order', co]);
    expect(await levels()).toEqual({ 'acme-dev': 'debug', 'acme-staging': 'debug', 'acme-prod': 'debug' });
    expect(await ok(['changeorder', 'get', '--space', 'acme-base', 'debug-logs'])).toMatch(/State\s+Resolved\n/);
  });

  it('a base in scope whose Link has not taken the change is a target like any other', async () => {
    await ok(['unit', 'update', '--space', 'platform', 'settings', '-'], settings('warn'));
    await ok([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'warn-logs',
      '--update-type',
      'Insert',
      '--component',
      'acme',
      '--change-workflow',
      'acme-workflows/acme-main-line',
    ]);
    for (let i = 0; i < 3; i++) await ok(['variant', 'promote', '--change-order', 'acme-base/warn-logs']);
    expect(await ok(['changeorder', 'get', '--space', 'acme-base', 'warn-logs'])).toMatch(/State\s+InProgress\n/);
    expect((await config('acme-base')).match(/level: (\w+)/)?.[1]).toBe('debug');
    await ok(['variant', 'promote', '--change-order', 'acme-base/warn-logs', 'acme-base']);
    expect((await config('acme-base')).match(/level: (\w+)/)?.[1]).toBe('warn');
    expect(await ok(['changeorder', 'get', '--space', 'acme-base', 'warn-logs'])).toMatch(/State\s+Resolved\n/);
  });

  it('an Upsert change order carries the source resource as it was when created; a later source revision waits for another', async () => {
    await ok(['unit', 'update', '--space', 'platform', 'shared', '-'], shared('us'));
    await ok([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'shared-us',
      '--update-type',
      'Upsert',
      '--component',
      'acme',
      '--change-workflow',
      'acme-workflows/acme-main-line',
    ]);
    await ok(['variant', 'promote', '--change-order', 'acme-base/shared-us']);
    await ok(['unit', 'update', '--space', 'platform', 'shared', '-'], shared('ap'));
    await ok(['variant', 'promote', '--change-order', 'acme-base/shared-us']);
    const regions = Object.fromEntries(
      await Promise.all(SPACES.map(async (s) => [s, (await config(s)).match(/region: (\w+)/)?.[1]] as const)),
    );
    expect(regions).toEqual({ 'acme-dev': 'us', 'acme-staging': 'us', 'acme-prod': 'eu' });
    // The Upsert Link protects what it carries: the resource is the Link's, revision after revision.
    expect((await env.api.get('/space/acme-dev/unit/config')).body.ProtectedPaths).toContainEqual({
      Resource: 'ConfigMap/acme-shared',
      Path: '',
    });
  });
});

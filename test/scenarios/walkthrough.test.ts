import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const componentDir = fileURLToPath(new URL('../fixtures/cubbychat', import.meta.url));

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

const ok = (...args: string[]) => cubOk(cub)(args);
async function backend(space: string): Promise<any> {
  return parseAllDocuments(await ok('unit', 'data', '--space', space, 'backend'))[0]!.toJS();
}
const title = (d: any) => d.spec.template.spec.containers[0].env.find((e: any) => e.name === 'CHAT_TITLE').value;

describe('the get-started walkthrough through cub', () => {
  it('1. installs a component from a folder of YAML', async () => {
    expect(
      await ok(
        'variant',
        'upload',
        '--component',
        'cubbychat',
        '--variant',
        'base',
        '--granularity',
        'per-file',
        componentDir,
      ),
    ).toBe('Created space cubbychat-base with 3 unit(s): backend, frontend, namespace\n');
    expect(await ok('component', 'list')).toMatch(/cubbychat/);
    expect(await ok('space', 'list', '--where', "Labels.Component = 'cubbychat'")).toMatch(
      /cubbychat-base\s+Component=cubbychat,Variant=base/,
    );
    expect((await ok('unit', 'list', '--space', 'cubbychat-base')).trim().split('\n')).toHaveLength(4);
    expect((await backend('cubbychat-base')).metadata.namespace).toBe('confighubplaceholder');
  });

  it('2. goes live in dev: clones linked to their source, the target attached, the namespace filled', async () => {
    await ok('space', 'create', 'dev');
    await ok('target', 'create', '--space', 'dev', 'target');
    await ok('variant', 'create', 'dev', 'cubbychat-base', '--target', 'dev/target', '--namespace', 'cubbychat');
    const unit = JSON.parse(await ok('unit', 'get', '--space', 'cubbychat-dev', 'backend', '-o', 'json'));
    const base = JSON.parse(await ok('unit', 'get', '--space', 'cubbychat-base', 'backend', '-o', 'json'));
    expect(unit).toMatchObject({ UpstreamUnitID: base.UnitID, UpstreamRevisionNum: 1 });
    expect(unit.TargetID).toBeTruthy();
    expect((await backend('cubbychat-dev')).metadata.namespace).toBe('cubbychat');
    expect(await ok('release', 'publish', 'cubbychat-dev')).toMatch(
      /^Published release 1 of cubbychat-dev: 3 unit\(s\), digest [0-9a-f]{64}\n/,
    );
    expect(await ok('release', 'list', '--space', 'cubbychat-dev')).toMatch(
      /^NUM\s+SPACE\s+PUBLISHED.*\n1\s+cubbychat-dev\s+true\s+3/,
    );
    expect(await ok('release', 'publish', 'cubbychat-dev')).toBe(
      "nothing changed since release 1 of space 'cubbychat-dev'; no new release\n",
    );
    const noTarget = await cub(['release', 'publish', 'cubbychat-base']);
    expect(noTarget.stderr).toMatch(/HTTP 422: space 'cubbychat-base' has no release target/);
  });

  it('3. makes a change in the base, sees dev behind, previews and promotes it', async () => {
    await ok('function', 'set', '--space', 'cubbychat-base', '--unit', 'backend', 'set-replicas', '2');
    expect(await ok('unit', 'list', '--space', 'cubbychat-dev')).toMatch(/backend\s+cubbychat-dev\s+2\s+1\s+yes/);
    const preview = await ok('variant', 'promote', 'cubbychat-dev', '--dry-run', '-o', 'mutations');
    expect(preview).toMatch(/backend:\n.*\n\s+Deployment\/backend\s+spec\.replicas\s+Update\s+2/);
    expect((await backend('cubbychat-dev')).spec.replicas).toBe(1);
    expect(await ok('variant', 'promote', 'cubbychat-dev')).toMatch(/backend\s+Upgrade\s+3/);
    expect((await backend('cubbychat-dev')).spec.replicas).toBe(2);
    expect(await ok('unit', 'list', '--space', 'cubbychat-dev')).toMatch(/backend\s+cubbychat-dev\s+3\s+2\s+no/);
    expect(await ok('release', 'publish', 'cubbychat-dev', '--dry-run')).toMatch(
      /^Would publish 3 unit\(s\)[^]*backend\s+3/,
    );
    expect(await ok('release', 'publish', 'cubbychat-dev')).toMatch(/^Published release 2 of cubbychat-dev/);
    const bundle = await ok('release', 'data', '--space', 'cubbychat-dev', '2');
    expect(bundle).toMatch(/replicas: 2/);
    expect(
      await ok(
        'release',
        'report',
        '--space',
        'cubbychat-dev',
        '--sync',
        'Synced',
        '--health',
        'Healthy',
        '--operation',
        'Succeeded',
      ),
    ).toMatch(/2\s+cubbychat-dev\s+true\s+3\s+Synced\s+Healthy\s+Succeeded/);
    const bad = await cub(['release', 'report', '--space', 'cubbychat-dev', '--health', 'Great']);
    expect(bad.stderr).toMatch(/HTTP 400: invalid request body: LiveStatus\.Health/);
    expect(await ok('release', 'withdraw', '--space', 'cubbychat-dev', '1')).toBe(
      'Withdrew release 1 of cubbychat-dev\n',
    );
    expect(JSON.parse(await ok('release', 'get', '--space', 'cubbychat-dev', '1', '-o', 'json')).Published).toBe(false);
  });

  it('4. a second deployment starts from the base as it stands, with no placeholders left', async () => {
    await ok('space', 'create', 'prod');
    await ok('target', 'create', '--space', 'prod', 'target');
    await ok(
      'variant',
      'create',
      'prod',
      'cubbychat-base',
      '--target',
      'prod/target',
      '--namespace',
      'cubbychat',
      '--environment',
      'Prod',
      '--unit-delete-gate',
      'critical',
    );
    expect((await backend('cubbychat-prod')).spec.replicas).toBe(2);
    expect(await ok('function', 'get', '--space', 'cubbychat-prod', 'get-placeholders')).toBe('No placeholders left\n');
    expect(JSON.parse(await ok('space', 'get', 'cubbychat-prod', '-o', 'json')).Labels).toMatchObject({
      Environment: 'Prod',
      Variant: 'prod',
      Component: 'cubbychat',
    });
  });

  it('5. flows a change with protection and conflicts', async () => {
    await ok(
      'function',
      'set',
      '--space',
      'cubbychat-dev',
      '--unit',
      'backend',
      '--protect',
      'set-env-var',
      'backend',
      'CHAT_TITLE',
      'Cubby Chat (dev)',
    );
    await ok(
      'function',
      'set',
      '--space',
      'cubbychat-base',
      '--unit',
      'backend',
      'set-env-var',
      'backend',
      'CHAT_TITLE',
      'Cubby Chat 2.0',
    );
    await ok('function', 'set', '--space', 'cubbychat-base', '--unit', 'backend', 'set-replicas', '3');
    await ok('variant', 'promote', 'cubbychat-dev');
    const dev = await backend('cubbychat-dev');
    expect([dev.spec.replicas, title(dev)]).toEqual([3, 'Cubby Chat (dev)']);
    expect(await ok('unit', 'conflicts', '--space', 'cubbychat-dev', 'backend')).toMatch(
      /Deployment\/backend\s+spec\.template\.spec\.containers\.\?name=backend\.env\.\?name=CHAT_TITLE\.value\s+"Cubby Chat 2\.0"\s+"Cubby Chat \(dev\)"/,
    );
    expect(
      await ok('unit', 'conflicts', '--space', 'cubbychat-dev', 'backend', '--apply', '--dry-run', '-o', 'mutations'),
    ).toMatch(/CHAT_TITLE\.value\s+Update\s+"Cubby Chat 2\.0"/);
    const headBefore = JSON.parse(
      await ok('unit', 'get', '--space', 'cubbychat-dev', 'backend', '-o', 'json'),
    ).HeadRevisionNum;
    await ok('unit', 'conflicts', '--space', 'cubbychat-dev', 'backend', '--dismiss');
    const after = JSON.parse(await ok('unit', 'get', '--space', 'cubbychat-dev', 'backend', '-o', 'json'));
    expect(after).toMatchObject({ HeadRevisionNum: headBefore, Conflicts: [] });
    expect(after.ProtectedPaths).toHaveLength(1);
    expect(title(await backend('cubbychat-dev'))).toBe('Cubby Chat (dev)');
    await ok('variant', 'promote', 'cubbychat-prod');
    const prod = await backend('cubbychat-prod');
    expect([prod.spec.replicas, title(prod)]).toEqual([3, 'Cubby Chat 2.0']);
  });

  it('6. cleans up past delete gates', async () => {
    const refused = await cub(['space', 'delete', 'cubbychat-prod']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/delete gates: backend \(critical\), frontend \(critical\), namespace \(critical\)/);
    expect(await ok('space', 'delete', 'cubbychat-prod', '--recursive-force')).toMatch(
      /^Deleted space cubbychat-prod with 3 unit\(s\)/,
    );
    expect(await ok('space', 'delete', 'cubbychat-base', '--recursive')).toMatch(/Removed link backend-upstream/);
    expect((await cub(['space', 'get', 'cubbychat-base'])).code).toBe(1);
  });
});

describe('links through cub', () => {
  it('creates, lists, gets and deletes links, TransformPaths from standard input as the spec writes it', async () => {
    await ok('space', 'create', 'acme-dev');
    await ok('space', 'create', 'registry-facts');
    await cub(
      ['unit', 'create', '--space', 'acme-dev', 'deployment', '-'],
      'kind: Deployment\nmetadata:\n  name: acme\nspec:\n  replicas: 1\n',
    );
    await cub(
      ['unit', 'create', '--space', 'registry-facts', 'acme', '--toolchain', 'ConfigHub/YAML', '-'],
      'repository: ghcr.io/acme/acme\nstreams:\n  stable:\n    tag: v453\n',
    );
    const spec = readFileSync(fileURLToPath(new URL('../fixtures/registrybot/link.yaml', import.meta.url)), 'utf8');
    const created = await cub(
      [
        'link',
        'create',
        '--space',
        'acme-dev',
        '-',
        'deployment',
        'acme',
        'registry-facts',
        '--update-type',
        'TransformPaths',
        '--from-stdin',
        '-o',
        'json',
      ],
      spec,
    );
    expect(created.stderr).toBe('');
    const link = JSON.parse(created.stdout);
    expect(link).toMatchObject({
      Slug: 'deployment-to-registry-facts-acme',
      UpdateType: 'TransformPaths',
      Protect: true,
      UpstreamPaths: [{ Name: 'tag', Path: 'streams.stable.tag' }],
    });
    expect(await ok('link', 'list', '--space', 'acme-dev')).toMatch(
      /deployment-to-registry-facts-acme\s+TransformPaths/,
    );
    expect(await ok('link', 'get', '--space', 'acme-dev', 'deployment-to-registry-facts-acme')).toMatch(
      /DownstreamSetters:/,
    );
    const bad = await cub([
      'link',
      'create',
      '--space',
      'acme-dev',
      'bad',
      'deployment',
      'acme',
      'registry-facts',
      '--update-type',
      'Sideways',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/HTTP 400: invalid request body: UpdateType/);
    expect(await ok('link', 'delete', '--space', 'acme-dev', 'deployment-to-registry-facts-acme')).toBe(
      'Deleted link deployment-to-registry-facts-acme\n',
    );
    expect((await ok('link', 'list', '--space', 'acme-dev')).trim().split('\n')).toHaveLength(1);
  });
});

describe('unit update forms through cub', () => {
  it('--upgrade, --merge-source with a range, --restore and --revert', async () => {
    await ok('space', 'create', 'up');
    await cub(
      ['unit', 'create', '--space', 'up', 'app', '-'],
      'kind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 1\n',
    );
    await ok('variant', 'create', 'down', 'up', '--space-slug', 'down');
    await ok('function', 'set', '--space', 'up', '--unit', 'app', 'set-replicas', '2');
    await ok('function', 'set', '--space', 'up', '--unit', 'app', 'set-replicas', '3');
    expect(
      await ok(
        'unit',
        'update',
        '--space',
        'down',
        '--unit',
        'app',
        '--merge-source',
        'up/app',
        '--merge-base',
        '1',
        '--merge-end',
        '2',
      ),
    ).toMatch(/app\s+Upgrade\s+2/);
    const replicas = async () =>
      parseAllDocuments(await ok('unit', 'data', '--space', 'down', 'app'))[0]!.toJS().spec.replicas;
    expect(await replicas()).toBe(2);
    expect(await ok('unit', 'update', '--upgrade', '--space', 'down', '--unit', 'app')).toMatch(/app\s+Upgrade\s+3/);
    expect(await replicas()).toBe(3);
    await ok('unit', 'update', '--space', 'down', 'app', '--restore', '1');
    expect(await replicas()).toBe(1);
    await ok('unit', 'update', '--space', 'down', 'app', '--revert', '4');
    expect(await replicas()).toBe(3);
    const revs = await ok('revision', 'list', '--space', 'down', 'app');
    expect(revs.split('\n')[1]).toMatch(/^5\s+Revert/);
    expect(revs.split('\n')[2]).toMatch(/^4\s+Restore/);
  });
});

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, cubOnTerminal, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const backendFile = fileURLToPath(new URL('../fixtures/cubbychat/backend.yaml', import.meta.url));

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

const ok = (args: string[], input?: string) => cubOk(cub)(args, input);

describe('the foundation through cub', () => {
  it('creates, labels, annotates and finds spaces', async () => {
    expect(await ok(['space', 'create', 'acme-base', '--label', 'Stage=Base'])).toMatch(/acme-base\s+Stage=Base\s+1/);
    await ok(['space', 'create', 'acme-dev', '--label', 'Stage=Development', '--annotation', 'owner=dev-team']);
    const listed = await ok(['space', 'list', '--where', "Labels.Stage = 'Development'"]);
    expect(listed.split('\n')[0]).toMatch(/^NAME\s+LABELS\s+VERSION\s+ID$/);
    expect(listed).toContain('acme-dev');
    expect(listed).not.toContain('acme-base');
    const json = JSON.parse(await ok(['space', 'get', 'acme-dev', '-o', 'json']));
    expect(json).toMatchObject({ Slug: 'acme-dev', Annotations: { owner: 'dev-team' } });
    const updated = parse(await ok(['space', 'update', 'acme-dev', '--annotation', 'code-freeze=true', '-o', 'yaml']));
    expect(updated).toMatchObject({ Version: 2, Annotations: { owner: 'dev-team', 'code-freeze': 'true' } });
  });

  it('--help asks, and never acts: the space it names is still there', async () => {
    await ok(['space', 'create', 'helptest']);
    for (const args of [
      ['space', 'delete', 'helptest', '--help'],
      ['space', 'delete', '-h', 'helptest'],
      ['space', '--help'],
    ]) {
      const r = await cub(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: cub space (delete \[options\] \[space\]|<verb> \[args\] \[flags\])\n/);
      expect(r.stdout).toMatch(
        args.length > 2
          ? /--recursive-force +delete its Units and Links too, past delete gates\n[\s\S]*Example:\n {2}cub space delete /
          : /Commands:\n {2}create \[options\] <slug> +Create a Space\n/,
      );
    }
    expect(JSON.parse(await ok(['space', 'get', 'helptest', '-o', 'json'])).Slug).toBe('helptest');
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(await ok(['--version'])).toBe(`cub ${version}\n`);
    // --quiet prints only names, one a line, for a pipeline.
    expect(await ok(['space', 'list', '--where', "Slug = 'helptest'", '-q'])).toBe('helptest\n');
  });

  it('creates a unit from a file and from standard input, and reads its data', async () => {
    expect(await ok(['unit', 'create', '--space', 'acme-base', 'backend', backendFile])).toMatch(
      /backend\s+acme-base\s+1/,
    );
    await ok(
      ['unit', 'create', '--space', 'acme-base', 'frontend', '-'],
      'kind: Deployment\nmetadata:\n  name: frontend\nspec:\n  replicas: 1\n',
    );
    const data = await ok(['unit', 'data', '--space', 'acme-base', 'backend']);
    expect(data).toContain('# The chat backend.');
    expect(
      (await ok(['unit', 'list', '--space', 'acme-base', '--where', "Slug LIKE 'front%'"])).trim().split('\n'),
    ).toHaveLength(2);
  });

  it('runs functions with and without --, and makes no revision for a no-op', async () => {
    await ok([
      'function',
      'set',
      '--space',
      'acme-base',
      '--unit',
      'backend',
      '--change-desc',
      'Release v452: bump the image tag',
      '--',
      'set-image-reference-by-uri',
      'ghcr.io/cubbychat/backend',
      ':v452',
    ]);
    const out = await ok(['function', 'set', '--space', 'acme-base', '--unit', 'backend', 'set-replicas', '2']);
    expect(out).toMatch(/backend\s+true\s+3/);
    expect(await ok(['function', 'set', '--space', 'acme-base', '--unit', 'backend', 'set-replicas', '2'])).toMatch(
      /backend\s+false\s+3/,
    );
    const doc = parse((await ok(['unit', 'data', '--space', 'acme-base', 'backend'])).split('---')[0]!);
    expect(doc.spec.replicas).toBe(2);
    expect(doc.spec.template.spec.containers[0].image).toBe('ghcr.io/cubbychat/backend:v452');
    const v1 = parse(
      (await ok(['unit', 'data', '--space', 'acme-base', 'backend', '--revision', '1'])).split('---')[0]!,
    );
    expect(v1.spec.replicas).toBe(1);
    const revs = await ok(['revision', 'list', '--space', 'acme-base', 'backend']);
    expect(revs).toMatch(/2\s+FunctionInvocation\s+Release v452: bump the image tag/);
    const placeholders = await ok(['function', 'get', '--space', 'acme-base', '--unit', 'backend', 'get-placeholders']);
    expect(placeholders).toMatch(/backend\s+Deployment\/backend\s+metadata\.namespace/);
  });

  it('on a terminal: progress while it works, a bold header, red failures; plain with NO_COLOR and in a pipe', async () => {
    const term = cubOnTerminal(env.url, env.api.token!);
    const shown = await term(['function', 'get', '--space', 'acme-base', '--unit', 'backend', 'get-placeholders']);
    expect(shown.code).toBe(0);
    // The progress line is drawn, then cleared before the answer is printed.
    const ESC = '\x1b';
    expect(shown.stdout.startsWith('\r⠋ get-placeholders on backend ')).toBe(true);
    const answer = shown.stdout.slice(shown.stdout.lastIndexOf(`\r${ESC}[K`) + 4);
    expect(answer).toMatch(new RegExp(`^${ESC}\\[1mUNIT +RESOURCE +PATH${ESC}\\[0m\nbackend `));
    const refused = await term(['space', 'get', 'nowhere']);
    expect([refused.code, refused.stdout]).toEqual([1, "\x1b[31mFailed:\x1b[0m HTTP 404: space 'nowhere' not found\n"]);
    const plain = await term(['space', 'list', '--where', "Slug = 'acme-base'"], { NO_COLOR: '1' });
    expect(plain.stdout).toMatch(/^NAME +LABELS +VERSION +ID\nacme-base /);
    // In a pipe (how every other test here runs cub) there is neither progress nor colour.
    const piped = await cub(['function', 'get', '--space', 'acme-base', '--unit', 'backend', 'get-placeholders']);
    expect(piped.stderr).toBe('');
    expect(piped.stdout).toMatch(/^UNIT +RESOURCE +PATH\nbackend /);
  });

  it('-o json is one JSON document on stdout, whatever the verb said in words', async () => {
    await ok(['space', 'create', 'json-doc']);
    expect(JSON.parse(await ok(['space', 'delete', 'json-doc', '-o', 'json']))).toMatchObject({
      Deleted: 'Space',
      Slug: 'json-doc',
    });
    expect(JSON.parse(await ok(['function', 'list', '-o', 'json']))).toContain('set-replicas');
    expect(await ok(['function', 'list', '-q'])).toMatch(/^(\S+\n)+$/);
  });

  it('reports bad input on stderr with a non-zero exit, writing nothing', async () => {
    const r = await cub(['function', 'set', '--space', 'acme-base', '--unit', 'backend', 'set-replicas', 'many']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("Failed: HTTP 400: set-replicas: <replicas> must be a non-negative integer, got 'many'\n");
    expect(JSON.parse(await ok(['unit', 'get', '--space', 'acme-base', 'backend', '-o', 'json'])).HeadRevisionNum).toBe(
      3,
    );
    const missing = await cub(['space', 'get', 'nowhere']);
    expect(missing).toMatchObject({ code: 1, stderr: "Failed: HTTP 404: space 'nowhere' not found\n" });
    const typo = await cub(['changeorder', 'create', '--space', 'acme-base', 'x', '--change-workflo', 'w']);
    expect(typo).toMatchObject({
      code: 2,
      stderr: "Usage: unknown option '--change-workflo'; Did you mean --change-workflow?\n",
    });
    expect(await cub(['unit', 'create', 'x'])).toMatchObject({
      code: 2,
      stderr: "Usage: missing required argument 'file'\n",
    });
    const usage = await cub(['unit', 'create', 'x', '-']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--space is required/);
    const badToken = await cubAt(env.url, 'bt_wrong')(['space', 'list']);
    expect(badToken).toMatchObject({ code: 1, stderr: 'Failed: HTTP 401: the bearer token is not valid\n' });
  });

  it('tags revisions, and moves a tag only with --move', async () => {
    expect(await ok(['unit', 'tag', 'v1', '--space', 'acme-base', '--unit', 'backend', '--revision', '1'])).toBe(
      'Tag v1 marks revision 1 of backend\n',
    );
    const clash = await cub(['unit', 'tag', 'v1', '--space', 'acme-base', '--unit', 'backend', '--revision', '3']);
    expect(clash.code).toBe(1);
    expect(clash.stderr).toMatch(/use --move/);
    await ok(['unit', 'tag', 'v1', '--space', 'acme-base', '--unit', 'backend', '--revision', '3', '--move']);
    expect(await ok(['tag', 'list', '--space', 'acme-base'])).toMatch(/v1\s+acme-base/);
  });

  it('bounds a change with a changeset and names its revisions by its tags', async () => {
    await ok(['changeset', 'create', '--space', 'acme-base', 'release-v453', '--description', 'v453']);
    await ok([
      'function',
      'set',
      '--space',
      'acme-base',
      '--unit',
      'frontend',
      '--changeset',
      'release-v453',
      'set-replicas',
      '4',
    ]);
    const locked = await cub(['function', 'set', '--space', 'acme-base', '--unit', 'frontend', 'set-replicas', '5']);
    expect(locked.stderr).toMatch(/locked by open changeset 'release-v453'/);
    expect(await ok(['changeset', 'close', '--space', 'acme-base', 'release-v453'])).toMatch(/release-v453\s+Closed/);
    const before = parse(
      await ok(['unit', 'data', '--space', 'acme-base', 'frontend', '--revision', 'Before:ChangeSet:release-v453']),
    );
    expect(before.spec.replicas).toBe(1);
    expect(await ok(['tag', 'list', '--space', 'acme-base'])).toMatch(/release-v453-end/);
  });

  it('creates filters and targets, and names an entity in another space as space/slug', async () => {
    await ok(['space', 'create', 'platform']);
    await ok([
      'filter',
      'create',
      '--space',
      'platform',
      'acme-spaces',
      'Space',
      '--where-field',
      "Slug LIKE 'acme-%'",
    ]);
    const picked = JSON.parse(await ok(['space', 'list', '--filter', 'platform/acme-spaces', '-o', 'json']));
    expect(picked.map((s: any) => s.Slug)).toEqual(['acme-base', 'acme-dev']);
    const bad = await cub(['filter', 'create', '--space', 'platform', 'broken', 'Space', '--where-field', 'Stage = 1']);
    expect(bad.stderr).toMatch(/unknown attribute 'Stage' for Space/);
    await ok(['target', 'create', '--space', 'platform', 'dev-cluster', '--fact', 'cluster=kind-dev']);
    expect(await ok(['target', 'list', '--space', 'platform'])).toMatch(/dev-cluster\s+platform\s+cluster=kind-dev/);
    expect(parse(await ok(['unit', 'get', 'acme-base/backend'])).Slug).toBe('backend');
    const withTarget = JSON.parse(
      await ok(['space', 'update', 'acme-dev', '--release-target', 'platform/dev-cluster', '-o', 'json']),
    );
    expect(withTarget.ReleaseTargetID).toMatch(/^[0-9a-f-]{36}$/);
    expect(await ok(['component', 'list'])).toMatch(/^NAME\s+ID/);
  });

  it('deletes a space only when empty or with --recursive', async () => {
    const r = await cub(['space', 'delete', 'acme-base']);
    expect(r.stderr).toMatch(/not empty/);
    expect(await ok(['space', 'delete', 'acme-base', '--recursive'])).toBe('Deleted space acme-base with 2 unit(s)\n');
    expect((await cub(['space', 'get', 'acme-base'])).code).toBe(1);
  });
});

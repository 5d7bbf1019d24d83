import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const ok = (args: string[], input?: string) => cubOk(cub)(args, input);

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

describe('Invocations through cub, as the spec writes them', () => {
  it('saves the spec’s set-image Invocation verbatim, reads it back, and deletes it', async () => {
    await ok(['space', 'create', 'platform']);
    const made = await ok([
      'invocation',
      'create',
      '--space',
      'platform',
      'set-image',
      'Kubernetes/YAML',
      '--parameter',
      'tag:string:true',
      '--',
      'set-image-reference-by-uri',
      '--repository-uri=ghcr.io/acme/acme',
      '--image-reference=template:{{ .Params.tag }}',
    ]);
    expect(made).toMatch(
      /set-image\s+Kubernetes\/YAML\s+set-image-reference-by-uri --repository-uri=ghcr\.io\/acme\/acme --image-reference=template:\{\{ \.Params\.tag \}\}\s+tag:string:required\n/,
    );
    const got = JSON.parse(await ok(['invocation', 'get', '--space', 'platform', 'set-image', '-o', 'json']));
    expect(got).toMatchObject({
      Slug: 'set-image',
      ToolchainType: 'Kubernetes/YAML',
      FunctionInvocations: [
        {
          FunctionName: 'set-image-reference-by-uri',
          Arguments: [
            { ParameterName: 'repository-uri', Value: 'ghcr.io/acme/acme' },
            { ParameterName: 'image-reference', Value: '{{ .Params.tag }}', Evaluator: 'template' },
          ],
        },
      ],
      Parameters: [{ ParameterName: 'tag', DataType: 'string', Required: true }],
    });
    // Positional arguments are named in the function's order.
    await ok(['invocation', 'create', '--space', 'platform', 'scale', 'Kubernetes/YAML', '--', 'set-replicas', '3']);
    expect(
      JSON.parse(await ok(['invocation', 'get', 'platform/scale', '-o', 'json'])).FunctionInvocations[0].Arguments,
    ).toEqual([{ ParameterName: 'replicas', Value: '3' }]);
    expect(await ok(['invocation', 'list', '--space', 'platform', '-q'])).toBe('scale\nset-image\n');
    await ok(['invocation', 'delete', '--space', 'platform', 'scale']);
    expect(await ok(['invocation', 'list', '--space', 'platform', '-q'])).toBe('set-image\n');
  });

  it('refuses, when saved, what the toolchain cannot run, naming it, and saves nothing', async () => {
    const refused = async (words: string[]) =>
      (await cub(['invocation', 'create', '--space', 'platform', 'bad', ...words])).stderr;
    expect(await refused(['Kubernetes/YAML', '--', 'set-imagez', 'x'])).toMatch(
      /^Failed: HTTP 400: unknown function 'set-imagez'; known: /,
    );
    expect(await refused(['Kubernetes/YAML', '--', 'set-replicas', '--count=3'])).toBe(
      "Failed: HTTP 400: set-replicas has no parameter 'count'; it takes <replicas>\n",
    );
    expect(
      await refused([
        'Kubernetes/YAML',
        '--',
        'set-image-reference-by-uri',
        'ghcr.io/acme/acme',
        'template:{{ .Params.tag }}',
      ]),
    ).toBe(
      "Failed: HTTP 400: argument image-reference uses parameter 'tag', which the Invocation does not declare (--parameter tag:string:true)\n",
    );
    expect(await refused(['AppConfig/Text', '--', 'set-replicas', '3'])).toBe(
      'Failed: HTTP 400: toolchain AppConfig/Text has no functions; an Invocation runs on Kubernetes/YAML\n',
    );
    expect(await refused(['Kubernetes/YAML', '--parameter', 'tag:float', '--', 'set-replicas', '3'])).toMatch(
      /^Failed: HTTP 400: invalid request body: Parameters\.0\.DataType/,
    );
    expect(await ok(['invocation', 'list', '--space', 'platform', '-q'])).toBe('set-image\n');
  });

  it("rolls the spec's Invoke change order through dev → staging → prod on Spaces that are not variants of one another", async () => {
    const deployment = readFileSync(
      fileURLToPath(new URL('../fixtures/acme/deployment.yaml', import.meta.url)),
      'utf8',
    ).replace('confighubplaceholder', 'acme');
    await ok([
      'variant',
      'upload',
      '--component',
      'acme',
      '--variant',
      'base',
      fileURLToPath(new URL('../fixtures/acme', import.meta.url)),
    ]);
    await ok(['space', 'create', 'infra']);
    for (const [name, stage] of [
      ['web-dev', 'Development'],
      ['web-staging', 'Staging'],
      ['web-prod', 'Production'],
    ] as const) {
      await ok(['target', 'create', '--space', 'infra', `t-${name}`]);
      await ok([
        'space',
        'create',
        name,
        '--component',
        'acme',
        '--label',
        `Stage=${stage}`,
        '--release-target',
        `infra/t-${name}`,
      ]);
      await ok(['unit', 'create', '--space', name, 'deployment', '-', '--label', 'tier=frontend'], deployment);
      await ok(['unit', 'create', '--space', name, 'worker', '-', '--label', 'tier=backend'], deployment);
    }
    await ok(['space', 'create', 'acme-workflows']);
    await ok(
      ['changeworkflow', 'create', '--space', 'acme-workflows', 'acme-main-line', '--filename', '-'],
      'Stages:\n  - Name: dev\n    WhereSpace: "Labels.Stage = \'Development\'"\n  - Name: staging\n    WhereSpace: "Labels.Stage = \'Staging\'"\n    Prerequisites: [Released]\n  - Name: prod\n    WhereSpace: "Labels.Stage = \'Production\'"\n    Prerequisites: [Released]\n',
    );
    // Parameters are checked when the change order is made.
    const create = [
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'acme-v453',
      '--description',
      'acme v453',
      '--update-type',
      'Invoke',
      '--invocation',
      'platform/set-image',
    ];
    expect((await cub([...create, '--change-workflow', 'acme-workflows/acme-main-line'])).stderr).toBe(
      "Failed: HTTP 400: parameter 'tag' is required: --param tag=<string>\n",
    );
    expect((await cub([...create, '--param', 'tag=:v453', '--param', 'colour=blue'])).stderr).toBe(
      "Failed: HTTP 400: the Invocation has no parameter 'colour'; it declares tag\n",
    );
    const made = await ok([
      ...create,
      '--param',
      'tag=:v453',
      '--where-unit',
      "Labels.tier = 'frontend'",
      '--change-workflow',
      'acme-workflows/acme-main-line',
    ]);
    expect(made).toMatch(/State\s+New\n/);
    expect(made).toMatch(/In-Scope Spaces\s+web-dev, web-prod, web-staging\n/);
    const image = async (space: string, unit: string) =>
      (await env.api.get(`/space/${space}/unit/${unit}/data`)).text.match(/image: (\S+)/)![1];
    const images = async () =>
      Object.fromEntries(
        await Promise.all(
          ['web-dev', 'web-staging', 'web-prod'].flatMap((s) =>
            ['deployment', 'worker'].map(async (u) => [`${s}/${u}`, await image(s, u)] as const),
          ),
        ),
      );
    const co = 'acme-base/acme-v453';
    // A dry run shows the values the Invocation would change, per Unit, and writes nothing.
    const dry = await ok(['variant', 'promote', '--change-order', co, '--dry-run', '-o', 'mutations']);
    expect(dry, dry).toContain('web-dev/deployment:\n');
    expect(dry).toMatch(
      /Deployment\/acme\s+spec\.template\.spec\.containers\.\?name=acme\.image\s+Update\s+"ghcr\.io\/acme\/acme:v453"/,
    );
    expect(dry).not.toContain('web-dev/worker');
    expect(await ok(['variant', 'promote', '--change-order', co])).toMatch(
      /Promoted change order into stage 'dev': 1 of 1 space\(s\)\n[^]*web-dev\s+Promote\s+deployment\s+Invoke\s+2/,
    );
    expect(await images()).toEqual({
      'web-dev/deployment': 'ghcr.io/acme/acme:v453',
      'web-dev/worker': 'ghcr.io/acme/acme:v451',
      'web-staging/deployment': 'ghcr.io/acme/acme:v451',
      'web-staging/worker': 'ghcr.io/acme/acme:v451',
      'web-prod/deployment': 'ghcr.io/acme/acme:v451',
      'web-prod/worker': 'ghcr.io/acme/acme:v451',
    });
    expect((await cub(['variant', 'promote', '--change-order', co, '--target-stage', 'staging'])).stderr).toBe(
      "Failed: unable to promote to stage 'staging', Variant 'web-dev' has taken change order 'acme-v453' but has not released it\n",
    );
    expect(await ok(['release', 'publish', '--revision', `ChangeOrder:${co}`, 'web-dev'])).toMatch(
      /^Published release 1 of web-dev: 2 unit\(s\)/,
    );
    await ok(['variant', 'promote', '--change-order', co, '--target-stage', 'staging']);
    await ok(['release', 'publish', '--revision', `ChangeOrder:${co}`, 'web-staging']);
    await ok(['variant', 'promote', '--change-order', co, '--target-stage', 'prod', '--protect']);
    expect(await images()).toEqual({
      'web-dev/deployment': 'ghcr.io/acme/acme:v453',
      'web-dev/worker': 'ghcr.io/acme/acme:v451',
      'web-staging/deployment': 'ghcr.io/acme/acme:v453',
      'web-staging/worker': 'ghcr.io/acme/acme:v451',
      'web-prod/deployment': 'ghcr.io/acme/acme:v453',
      'web-prod/worker': 'ghcr.io/acme/acme:v451',
    });
    expect(
      JSON.parse(await ok(['unit', 'get', '--space', 'web-prod', 'deployment', '-o', 'json'])).ProtectedPaths,
    ).toEqual([expect.objectContaining({ Path: expect.stringContaining('image') })]);
    expect(await ok(['changeorder', 'get', '--space', 'acme-base', 'acme-v453'])).toMatch(
      /State\s+Resolved\nStage\s+Completed\n[^]*Resolved Spaces\s+web-dev, web-prod, web-staging\n/,
    );
    // The selection is asked again on every read: a frontend Unit added to dev since means dev has not taken it.
    await ok(['unit', 'create', '--space', 'web-dev', 'frontend-2', '-', '--label', 'tier=frontend'], deployment);
    expect(await ok(['changeorder', 'get', '--space', 'acme-base', 'acme-v453'])).toMatch(
      /State\s+InProgress\n[^]*Resolved Spaces\s+web-prod, web-staging\n/,
    );
    expect(await ok(['variant', 'promote', 'web-dev', '--change-order', co])).toMatch(
      /web-dev\s+Promote\s+deployment\s+Unchanged\s+AlreadyTaken[^]*frontend-2\s+Invoke/,
    );
    expect(await image('web-dev', 'frontend-2')).toBe('ghcr.io/acme/acme:v453');
    expect(await ok(['changeorder', 'get', '--space', 'acme-base', 'acme-v453'])).toMatch(/State\s+Resolved\n/);
    // There is no upstream revision to merge.
    expect(
      (await cub(['unit', 'update', '--upgrade', '--change-order', co, '--space', 'web-dev', '--unit', 'deployment']))
        .stderr,
    ).toMatch(
      /^Failed: HTTP 400: change order 'acme-v453' is an Invoke change order: there is no upstream revision to merge/,
    );
    // Taken back out like any other.
    await ok(['changeorder', 'update', '--space', 'acme-base', 'acme-v453', '--aborted-reason', 'wrong tag']);
    expect(await ok(['variant', 'demote', 'web-prod', '--change-order', co])).toMatch(
      /^Restored 2 unit\(s\) of web-prod/,
    );
    expect(await image('web-prod', 'deployment')).toBe('ghcr.io/acme/acme:v451');
  });

  it('follows registrybot with a TransformPaths Link per variant, resolved at the head or at --merge-end', async () => {
    const registry = (tag: string) =>
      `configHub:\n  configSchema: registrybot.confighub.com/v1alpha4\n  configName: acme\nrepository: ghcr.io/acme/acme\nstreams:\n  stable:\n    tag: ${tag}\n    digest: sha256:41aa0c3b5e9d7f2a8c6e1b4d0f3a9c7e5b2d8f6a4c1e9b7d3f0a6c8e2b5d9f1a\n`;
    await ok(['space', 'create', 'registry-facts']);
    await ok(
      ['unit', 'create', '--space', 'registry-facts', 'acme', '-', '--toolchain', 'ConfigHub/YAML'],
      registry('v460'),
    );
    const link = readFileSync(fileURLToPath(new URL('../fixtures/registrybot/link.yaml', import.meta.url)), 'utf8');
    // The spec's command, verbatim but for the Space (web-dev here).
    await ok(
      [
        'link',
        'create',
        '--space',
        'web-dev',
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
    const image = async () => (await env.api.get('/space/web-dev/unit/deployment/data')).text.match(/image: (\S+)/)![1];
    expect(await ok(['unit', 'update', '--patch', '--resolve', 'Link:*', '--space', 'web-dev', 'deployment'])).toMatch(
      /^Resolved deployment as revision \d+\n[^]*tag=v460/,
    );
    expect(await image()).toBe('ghcr.io/acme/acme:v460');
    expect(
      JSON.parse(await ok(['unit', 'get', '--space', 'web-dev', 'deployment', '-o', 'json'])).ProtectedPaths,
    ).toEqual(expect.arrayContaining([expect.objectContaining({ Path: expect.stringContaining('image') })]));
    // A newer tag; resolving against revision 1 keeps v460, the head brings v461.
    await ok(['unit', 'update', '--space', 'registry-facts', 'acme', '-'], registry('v461'));
    expect(
      await ok([
        'unit',
        'update',
        '--patch',
        '--resolve',
        'Link:*',
        '--merge-end',
        '1',
        '--space',
        'web-dev',
        'deployment',
      ]),
    ).toMatch(/already reflects its links/);
    expect(await image()).toBe('ghcr.io/acme/acme:v460');
    await ok(['unit', 'update', '--patch', '--resolve', 'Link:*', '--space', 'web-dev', 'deployment']);
    expect(await image()).toBe('ghcr.io/acme/acme:v461');
    expect(
      (
        await cub([
          'unit',
          'update',
          '--patch',
          '--resolve',
          'Link:*',
          '--merge-end',
          '9',
          '--space',
          'web-dev',
          'deployment',
        ])
      ).stderr,
    ).toMatch(/HTTP 404: link '[^']+': unit 'acme' has no revision 9 \(head is 2\)/);
  });
});

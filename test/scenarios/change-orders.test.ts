import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const acmeDir = fileURLToPath(new URL('../fixtures/acme', import.meta.url));

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
});
afterAll(async () => env.close());

const ok = (args: string[], input?: string) => cubOk(cub)(args, input);
const image = async (space: string) =>
  parseAllDocuments(await ok(['unit', 'data', '--space', space, 'deployment']))[0]!.toJS().spec.template.spec
    .containers[0].image;

const mainLine = `Stages:
  - Name: dev
    WhereSpace: "Labels.Stage = 'Development'"
  - Name: staging
    WhereSpace: "Labels.Stage = 'Staging'"
    Prerequisites: [Validated, Released]
  - Name: prod
    WhereSpace: "Labels.Stage = 'Production'"
    Prerequisites: [Released, Healthy, not-frozen]
Final:
  Prerequisites: [Released, Healthy]
CustomPrerequisites:
  - Name: not-frozen
    Expression: "cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true'"
    Description: the space is not under a code freeze
`;

describe('the change-orders spec through cub, verbatim where it can be', () => {
  it('declares workflows from a file, from flags, edits one stage, and clones one', async () => {
    await ok(['space', 'create', 'acme-workflows']);
    expect(
      await ok(
        ['changeworkflow', 'create', '--space', 'acme-workflows', 'acme-main-line', '--filename', '-'],
        mainLine,
      ),
    ).toMatch(/acme-main-line\s+dev → staging → prod\s+Released,Healthy/);
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'acme-workflows',
      'acme-simple',
      '--stage',
      'Development',
      '--stage',
      'Staging',
      '--stage',
      'Production',
      '--prerequisites',
      'Released,Healthy',
    ]);
    const simple = JSON.parse(
      await ok(['changeworkflow', 'get', '--space', 'acme-workflows', 'acme-simple', '-o', 'json']),
    );
    expect(simple.Stages).toEqual([
      { Name: 'Development', WhereSpace: "Labels.Stage = 'Development'" },
      { Name: 'Staging', WhereSpace: "Labels.Stage = 'Staging'", Prerequisites: ['Released', 'Healthy'] },
      { Name: 'Production', WhereSpace: "Labels.Stage = 'Production'", Prerequisites: ['Released', 'Healthy'] },
    ]);
    await ok([
      'changeworkflow',
      'update',
      '--space',
      'acme-workflows',
      'acme-simple',
      '--stage-where-space',
      "Production=Labels.Stage = 'Production' AND Labels.Region = 'us-east1'",
      '--stage-prerequisites',
      'Production=Released;Healthy;two-approvers',
      '--attestation-prerequisite',
      'two-approvers',
      '--attestation-prerequisite-count',
      'two-approvers=2',
    ]);
    const edited = JSON.parse(
      await ok(['changeworkflow', 'get', '--space', 'acme-workflows', 'acme-simple', '-o', 'json']),
    );
    expect(edited.Stages[2]).toEqual({
      Name: 'Production',
      WhereSpace: "Labels.Stage = 'Production' AND Labels.Region = 'us-east1'",
      Prerequisites: ['Released', 'Healthy', 'two-approvers'],
    });
    expect(edited.Stages[1]).toEqual(simple.Stages[1]);
    expect(edited.AttestationPrerequisites).toEqual([{ Name: 'two-approvers', Count: 2 }]);
    await ok([
      'changeworkflow',
      'update',
      '--space',
      'acme-workflows',
      'acme-simple',
      '--stage',
      'Staging',
      '--stage',
      'Production',
    ]);
    expect(
      JSON.parse(
        await ok(['changeworkflow', 'get', '--space', 'acme-workflows', 'acme-simple', '-o', 'json']),
      ).Stages.map((s: any) => s.Name),
    ).toEqual(['Staging', 'Production']);
    const broken = await cub(
      ['changeworkflow', 'create', '--space', 'acme-workflows', 'broken', '--filename', '-'],
      'Stages:\n  - Name: a\n    WhereSpace: "Slug = \'x\'"\n    Prerequisites: [oops]\nCustomPrerequisites:\n  - Name: oops\n    Expression: "cel:Space.Labels["\n',
    );
    expect(broken.stderr).toMatch(/HTTP 400: custom prerequisite 'oops': the expression does not compile/);
    const doc =
      'apiVersion: confighub.com/v1\nkind: ChangeWorkflow\nmetadata:\n  name: from-doc\nspec:\n  stages:\n    - name: only\n      whereSpace: "Labels.Stage = \'Only\'"\n';
    await ok(['changeworkflow', 'create', '--space', 'acme-workflows', '--filename', '-'], doc);
    await ok(['space', 'create', 'team-b']);
    await ok([
      'changeworkflow',
      'create',
      '--changeworkflow',
      'acme-workflows/acme-main-line',
      '--dest-space',
      'team-b',
    ]);
    expect(await ok(['changeworkflow', 'list', '--space', 'team-b'])).toMatch(/acme-main-line/);
  });

  it('names a change made in the base and promotes it stage by stage behind its gates', async () => {
    await ok(['variant', 'upload', '--component', 'acme', '--variant', 'base', acmeDir]);
    await ok(['space', 'create', 'infra']);
    for (const [name, stage] of [
      ['dev', 'Development'],
      ['staging-euw1', 'Staging'],
      ['staging-use1', 'Staging'],
      ['prod-use1', 'Production'],
    ] as const) {
      await ok(['target', 'create', '--space', 'infra', `t-${name}`]);
      await ok([
        'variant',
        'create',
        name,
        'acme-base',
        '--stage',
        stage!,
        '--namespace',
        'acme',
        '--target',
        `infra/t-${name!}`,
      ]);
    }
    await ok([
      'function',
      'set',
      '--space',
      'acme-base',
      '--unit',
      'deployment',
      '--change-desc',
      'Release v452: bump the image tag',
      '--',
      'set-image-reference-by-uri',
      'ghcr.io/acme/acme',
      ':v452',
    ]);
    expect((await cub(['changeorder', 'get', '--space', 'acme-base', 'release-v452'])).code).toBe(1);
    const created = await ok([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'release-v452',
      '--description',
      'Release v452: bump the image tag',
      '--change-workflow',
      'acme-workflows/acme-main-line',
    ]);
    expect(created).toMatch(/State\s+New/);
    expect(created).toMatch(/In-Scope Spaces\s+acme-dev, acme-prod-use1, acme-staging-euw1, acme-staging-use1/);
    expect(created).toMatch(/Skipped Units\s+config \(no change: the spaces that follow it have revision 1\)/);
    expect((await cub(['changeorder', 'get', '--space', 'acme-base', 'release-v452'])).code).toBe(0);

    expect(await ok(['variant', 'promote', '--change-order', 'acme-base/release-v452'])).toMatch(
      /Promoted change order into stage 'dev': 1 of 1 space\(s\)\n[^]*acme-dev\s+Promote\s+deployment\s+Upgrade\s+3/,
    );
    expect(await image('acme-dev')).toBe('ghcr.io/acme/acme:v452');

    const refused = await cub([
      'variant',
      'promote',
      '--change-order',
      'acme-base/release-v452',
      '--target-stage',
      'staging',
    ]);
    expect(refused).toMatchObject({
      code: 1,
      stderr:
        "Failed: unable to promote to stage 'staging', Variant 'dev' has taken change order 'release-v452' but has not released it\n",
    });

    expect(await ok(['release', 'publish', '--revision', 'ChangeOrder:acme-base/release-v452', 'acme-dev'])).toMatch(
      /^Published release 1 of acme-dev/,
    );
    const preview = await ok([
      'variant',
      'promote',
      '--change-order',
      'acme-base/release-v452',
      '--target-stage',
      'staging',
      '--dry-run',
      '-o',
      'mutations',
    ]);
    expect(preview).toMatch(
      /acme-staging-euw1\/deployment:\n.*\n\s+Deployment\/acme\s+spec\.template\.spec\.containers\.\?name=acme\.image\s+Update\s+"ghcr\.io\/acme\/acme:v452"/,
    );
    expect(
      await ok([
        'variant',
        'promote',
        '--change-order',
        'acme-base/release-v452',
        '--target-stage',
        'staging',
        '--prior-revisions',
        'Error',
        '--dry-run',
      ]),
    ).toMatch(/^Would promote change order into stage 'staging': 2 of 2/);
    expect(await image('acme-staging-euw1')).toBe('ghcr.io/acme/acme:v451');
    await ok(['variant', 'promote', '--change-order', 'acme-base/release-v452', '--target-stage', 'staging']);
    expect(await image('acme-staging-use1')).toBe('ghcr.io/acme/acme:v452');
    // One Space by name: it took the change already, so it is passed over.
    expect(await ok(['variant', 'promote', 'acme-staging-euw1', '--change-order', 'acme-base/release-v452'])).toMatch(
      /1 of 1 space\(s\)\n[^]*acme-staging-euw1\s+Unchanged/,
    );

    const got = await ok(['changeorder', 'get', '--space', 'acme-base', 'release-v452']);
    expect(got).toMatch(/State\s+InProgress/);
    expect(got).toMatch(/Stage\s+staging/);
    expect(got).toMatch(/Resolved Spaces\s+acme-base, acme-dev, acme-staging-euw1, acme-staging-use1/);
    expect(got).toMatch(/Released Spaces\s+acme-dev/);
    expect(await ok(['changeorder', 'list', '--where', "State = 'InProgress'"])).toMatch(
      /release-v452\s+acme-base\s+InProgress\s+staging/,
    );
    const devId = JSON.parse(await ok(['space', 'get', 'acme-dev', '-o', 'json'])).SpaceID;
    expect(
      await ok(['changeorder', 'list', '--space', 'acme-base', '--where', `ResolvedSpaceIDs ? '${devId}'`]),
    ).toMatch(/release-v452/);
    expect(await ok(['changeorder', 'list', '--space', 'acme-base', '--where', 'LEN(ResolvedSpaceIDs) > 1'])).toMatch(
      /release-v452/,
    );
    expect((await ok(['changeorder', 'list', '--where', "Stage = 'prod'"])).trim().split('\n')).toHaveLength(1);
  });

  it('forces past a gate with a reason, adopts a fix into the release tag, and repairs one unit', async () => {
    const tagged = await cub(['variant', 'promote', '--change-order', 'acme-base/release-v452', '--tag', 'x']);
    expect(tagged).toMatchObject({ code: 2, stderr: expect.stringMatching(/--tag is refused with --change-order/) });
    expect((await cub(['variant', 'promote', '--change-order', 'acme-base/release-v452', '--protect'])).stderr).toMatch(
      /--protect is refused here/,
    );
    const noReason = await cub([
      'variant',
      'promote',
      '--change-order',
      'acme-base/release-v452',
      '--target-stage',
      'prod',
      '--force',
    ]);
    expect(noReason.stderr).toMatch(/HTTP 400: --force needs --force-reason/);
    expect(
      await ok([
        'variant',
        'promote',
        '--change-order',
        'acme-base/release-v452',
        '--target-stage',
        'prod',
        '--force',
        '--force-reason',
        'incident 1234',
      ]),
    ).toMatch(/forced past failing gates/);
    const overrides = JSON.parse(
      await ok(['changeorder', 'get', '--space', 'acme-base', 'release-v452', '-o', 'json']),
    ).PromotionOverrides;
    expect(overrides).toEqual([expect.objectContaining({ Reason: 'incident 1234', Stage: 'prod' })]);
    await ok([
      'function',
      'set',
      '--space',
      'acme-staging-euw1',
      '--unit',
      'deployment',
      'set-env-var',
      'acme',
      'FIX',
      'yes',
    ]);
    expect(
      await ok([
        'unit',
        'tag',
        'ChangeOrder:acme-base/release-v452',
        '--move',
        '--revision',
        'HeadRevisionNum',
        '--space',
        'acme-staging-euw1',
        '--unit',
        'deployment',
      ]),
    ).toBe('Tag release-v452-co-publish marks revision 4 of deployment\n');
    // The release Tag moves only so: not as a plain Tag, and a change order's Tags are not deleted.
    expect(
      await cub([
        'unit',
        'tag',
        'release-v452-co-publish',
        '--move',
        '--revision',
        'HeadRevisionNum',
        '--space',
        'acme-base',
        '--unit',
        'deployment',
      ]),
    ).toMatchObject({
      code: 1,
      stderr:
        "Failed: HTTP 409: tag 'release-v452-co-publish' belongs to a change order; its marks are set by the change order (a fix is adopted into its release with ChangeOrder:<space>/<change-order>)\n",
    });
    expect(await cub(['tag', 'delete', '--space', 'acme-base', 'release-v452-co-end'])).toMatchObject({
      code: 1,
      stderr:
        "Failed: HTTP 409: tag 'release-v452-co-end' belongs to a change order; where the change has got to is read from its marks\n",
    });
    expect(
      JSON.parse(await ok(['tag', 'get', '--space', 'acme-base', 'release-v452-co-publish', '-o', 'json'])).Marks,
    ).toContainEqual(expect.objectContaining({ RevisionNum: 4 }));
    // A variant cloned after the change holds exactly its end: a repair marks its head with both Tags, as already having it.
    await ok(['variant', 'create', 'qa', 'acme-base', '--stage', 'QA', '--namespace', 'acme']);
    const repair = parse(
      await ok([
        'unit',
        'update',
        '--upgrade',
        '--change-order',
        'acme-base/release-v452',
        '--space',
        'acme-qa',
        '--unit',
        'deployment',
        '-o',
        'yaml',
      ]),
    );
    expect(repair[0]).toMatchObject({ Action: 'Mark', Reason: 'AlreadyHasChange' });
    const taken = parse(
      await ok([
        'unit',
        'update',
        '--upgrade',
        '--change-order',
        'acme-base/release-v452',
        '--space',
        'acme-dev',
        '--unit',
        'deployment',
        '-o',
        'yaml',
      ]),
    );
    expect(taken[0]).toMatchObject({ Action: 'Unchanged', Reason: 'AlreadyTaken' });
  });

  it('selects spaces with a saved filter and a where, and refreshes the selection', async () => {
    await ok(['space', 'create', 'platform']);
    await ok([
      'filter',
      'create',
      '--space',
      'platform',
      'acme-spaces',
      'Space',
      '--where-field',
      "Component.Slug = 'acme'",
    ]);
    const made = await ok([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'release-v452-staging',
      '--description',
      'Release v452, as far as staging',
      '--space-filter',
      'platform/acme-spaces',
      '--where-space-field',
      "Labels.Stage IN ('Development', 'Staging')",
    ]);
    expect(made).toMatch(/In-Scope Spaces\s+acme-dev, acme-staging-euw1, acme-staging-use1\n/);
    expect(made).toMatch(/Where Space\s+Labels\.Stage IN \('Development', 'Staging'\) AND Component\.Slug = 'acme'/);
    await ok(['variant', 'create', 'staging-apse1', 'acme-base', '--stage', 'Staging', '--namespace', 'acme']);
    expect(
      await ok(['changeorder', 'update', '--space', 'acme-base', 'release-v452-staging', '--refresh-spaces']),
    ).toMatch(/In-Scope Spaces\s+acme-dev, acme-staging-apse1, acme-staging-euw1, acme-staging-use1\n/);
  });
});

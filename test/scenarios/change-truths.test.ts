import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

// The change-order core's answers, each from a reproduction typed as a user would (issue: "never say a change arrived where it did not").
let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
/** $F: the acme Deployment and a Service, their namespace filled in so they can be released as they are. */
const F = mkdtempSync(join(tmpdir(), 'baton-f-'));
writeFileSync(
  join(F, 'deployment.yaml'),
  readFileSync(new URL('../fixtures/acme/deployment.yaml', import.meta.url), 'utf8').replace(
    'confighubplaceholder',
    'acme',
  ),
);
writeFileSync(
  join(F, 'service.yaml'),
  'apiVersion: v1\nkind: Service\nmetadata:\n  name: acme\n  namespace: acme\nspec:\n  ports:\n    - port: 80\n',
);

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  await ok(['space', 'create', 'infra']);
  await ok(['space', 'create', 'wf']);
});
afterAll(async () => env.close());

const ok = (args: string[], input?: string) => cubOk(cub)(args, input);
const json = async (args: string[]) => JSON.parse(await ok([...args, '-o', 'json']));
const doc = async (space: string, unit: string) =>
  parseAllDocuments(await ok(['unit', 'data', '--space', space, unit]))[0]!.toJS();
const image = async (space: string) => (await doc(space, 'deployment')).spec.template.spec.containers[0].image;
const bump = (space: string, tag: string) =>
  ok([
    'function',
    'set',
    '--space',
    space,
    '--unit',
    'deployment',
    '--',
    'set-image-reference-by-uri',
    'ghcr.io/acme/acme',
    tag,
  ]);
/** What a ChangeOrder's end Tag marks in one Space, by Unit slug. */
const endMarks = async (base: string, co: string, space: string) => {
  const units = new Map(((await json(['unit', 'list', '--space', space])) as any[]).map((u) => [u.UnitID, u.Slug]));
  const tag = await json(['tag', 'get', '--space', base, `${co}-co-end`]);
  return Object.fromEntries(
    (tag.Marks as any[]).filter((m) => units.has(m.UnitID)).map((m) => [units.get(m.UnitID), m.RevisionNum]),
  );
};

describe('the change-order core never says a change arrived where it did not', () => {
  it('records a Space as taken only when every Unit the change covers carries it, cloning a covered Unit that went missing', async () => {
    await ok(['variant', 'upload', '--component', 'lima', '--variant', 'base', F]);
    await ok(['variant', 'create', 'p', 'lima-base', '--namespace', 'lima', '--stage', 'Production']);
    await ok(['changeworkflow', 'create', '--space', 'wf', 'lima-wf', '--stage', 'Production']);
    await bump('lima-base', ':v452');
    await ok(['changeorder', 'create', '--space', 'lima-base', 'l-1', '--change-workflow', 'wf/lima-wf']);
    // The base moves on and the variant takes that by hand: it has the change and more, past its end.
    await bump('lima-base', ':v453');
    await ok(['unit', 'update', '--space', 'lima-p', 'deployment', '--upgrade']);
    const failed = await cub(['variant', 'promote', '--change-order', 'lima-base/l-1']);
    expect(failed.code).toBe(1);
    expect(failed.stdout + failed.stderr).toMatch(/0 of 1 space\(s\) took change order 'l-1'/);
    // The Space failed, so nothing of it is marked: not the unchanged service either.
    expect(await endMarks('lima-base', 'l-1', 'lima-p')).toEqual({});
    await ok(['unit', 'delete', '--space', 'lima-p', 'deployment']);
    const rerun = await json(['variant', 'promote', '--change-order', 'lima-base/l-1']);
    expect(rerun).toMatchObject({ Landed: 1, Total: 1 });
    expect(rerun.Spaces[0].Units.map((u: any) => [u.UnitSlug, u.Action]).sort()).toEqual([
      ['deployment', 'Clone'],
      ['deployment', 'Upgrade'],
      ['service', 'Mark'],
    ]);
    expect(await image('lima-p')).toBe('ghcr.io/acme/acme:v452');
    expect(Object.keys(await endMarks('lima-base', 'l-1', 'lima-p')).sort()).toEqual(['deployment', 'service']);
    expect(await json(['changeorder', 'get', '--space', 'lima-base', 'l-1'])).toMatchObject({ State: 'Resolved' });
  });

  it('reads Released from a Release of the change, never an older one', async () => {
    await ok(['target', 'create', '--space', 'infra', 't-mike-staging']);
    await ok(['variant', 'upload', '--component', 'mike', '--variant', 'base', F]);
    await ok(['variant', 'create', 'staging', 'mike-base', '--stage', 'Staging', '--target', 'infra/t-mike-staging']);
    await ok(['variant', 'create', 'prod', 'mike-base', '--stage', 'Production']);
    await ok(['release', 'publish', 'mike-staging']);
    await bump('mike-staging', ':v452');
    await bump('mike-base', ':v452');
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'wf',
      'mike-wf',
      '--stage',
      'Staging',
      '--stage',
      'Production',
      '--prerequisites',
      'Released',
    ]);
    await ok(['changeorder', 'create', '--space', 'mike-base', 'm-1', '--change-workflow', 'wf/mike-wf']);
    expect(await json(['variant', 'promote', '--change-order', 'mike-base/m-1'])).toMatchObject({
      Stage: 'Staging',
      Landed: 1,
    });
    // Staging runs release 1, made before the change: it does not carry it.
    expect(
      parseAllDocuments(await ok(['release', 'data', '--space', 'mike-staging', '1']))
        .find((d) => d.toJS().kind === 'Deployment')!
        .toJS().spec.template.spec.containers[0].image,
    ).toBe('ghcr.io/acme/acme:v451');
    const held = await cub(['variant', 'promote', '--change-order', 'mike-base/m-1', '--dry-run']);
    expect(held.code).toBe(1);
    expect(held.stderr).toBe(
      "Failed: unable to promote to stage 'Production', Variant 'staging' has taken change order 'm-1' but has not released it\n",
    );
    await ok(['release', 'publish', 'mike-staging', '--revision', 'ChangeOrder:mike-base/m-1']);
    expect(await json(['variant', 'promote', '--change-order', 'mike-base/m-1', '--dry-run'])).toMatchObject({
      Stage: 'Production',
      DryRun: true,
    });
  });

  it('takes the base as a first Stage: the next Stage is gated on the base having released the change', async () => {
    await ok(['target', 'create', '--space', 'infra', 't-nov-base']);
    await ok(['variant', 'upload', '--component', 'nov', '--variant', 'base', '--stage', 'Base', F]);
    await ok(['space', 'update', 'nov-base', '--release-target', 'infra/t-nov-base']);
    await ok(['variant', 'create', 'dev', 'nov-base', '--stage', 'Development']);
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'wf',
      'nov-wf',
      '--stage',
      'Base',
      '--stage',
      'Development',
      '--prerequisites',
      'Released',
    ]);
    await bump('nov-base', ':v452');
    await ok(['changeorder', 'create', '--space', 'nov-base', 'n-1', '--change-workflow', 'wf/nov-wf']);
    const held = await cub(['variant', 'promote', '--change-order', 'nov-base/n-1']);
    expect(held.stderr).toBe(
      "Failed: unable to promote to stage 'Development', Variant 'base' has taken change order 'n-1' but has not released it\n",
    );
    expect(await image('nov-dev')).toBe('ghcr.io/acme/acme:v451');
    await ok(['release', 'publish', 'nov-base', '--revision', 'ChangeOrder:nov-base/n-1']);
    expect(await json(['changeorder', 'get', '--space', 'nov-base', 'n-1'])).toMatchObject({ Stage: 'Base' });
    expect(await json(['variant', 'promote', '--change-order', 'nov-base/n-1'])).toMatchObject({
      Stage: 'Development',
      Landed: 1,
    });
    expect(await image('nov-dev')).toBe('ghcr.io/acme/acme:v452');
    expect(await json(['changeorder', 'get', '--space', 'nov-base', 'n-1'])).toMatchObject({
      Stage: 'Completed',
      Completed: true,
    });
  });

  it('never opens a gate over an empty Stage, and completes a change whose scope ends early', async () => {
    await ok(['target', 'create', '--space', 'infra', 't-osc-dev']);
    await ok(['variant', 'upload', '--component', 'osc', '--variant', 'base', F]);
    await ok(['variant', 'create', 'dev', 'osc-base', '--stage', 'Development', '--target', 'infra/t-osc-dev']);
    await ok(['variant', 'create', 'prod', 'osc-base', '--stage', 'Production']);
    // No Space is in Staging: Production's gates are evaluated over Development.
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'wf',
      'osc-wf',
      '--stage',
      'Development',
      '--stage',
      'Staging',
      '--stage',
      'Production',
      '--prerequisites',
      'Released',
    ]);
    await bump('osc-base', ':v452');
    await ok(['changeorder', 'create', '--space', 'osc-base', 'o-1', '--change-workflow', 'wf/osc-wf']);
    expect(await json(['variant', 'promote', '--change-order', 'osc-base/o-1'])).toMatchObject({
      Stage: 'Development',
      Landed: 1,
    });
    const held = await cub(['variant', 'promote', '--change-order', 'osc-base/o-1']);
    expect(held.stderr).toBe(
      "Failed: unable to promote to stage 'Production', Variant 'dev' has taken change order 'o-1' but has not released it\n",
    );
    expect(await image('osc-prod')).toBe('ghcr.io/acme/acme:v451');
    // A change scoped to dev alone ends there: released in dev, it is Completed.
    await ok([
      'changeorder',
      'create',
      '--space',
      'osc-base',
      'o-2',
      '--change-workflow',
      'wf/osc-wf',
      '--in-scope-space',
      'osc-dev',
    ]);
    await ok(['variant', 'promote', '--change-order', 'osc-base/o-2']);
    expect(await json(['changeorder', 'get', '--space', 'osc-base', 'o-2'])).toMatchObject({
      Stage: 'Development',
      Completed: false,
    });
    await ok(['release', 'publish', 'osc-dev', '--revision', 'ChangeOrder:osc-base/o-2']);
    expect(await json(['changeorder', 'get', '--space', 'osc-base', 'o-2'])).toMatchObject({
      State: 'Released',
      Stage: 'Completed',
      Completed: true,
    });
  });

  it('marks Units the change leaves unchanged where they rest, so a Space below takes none of a middle Space’s own edits', async () => {
    await ok(['target', 'create', '--space', 'infra', 't-pap-leaf']);
    await ok(['variant', 'upload', '--component', 'pap', '--variant', 'base', F]);
    await ok(['variant', 'create', 'mid', 'pap-base', '--stage', 'Mid']);
    await ok(['variant', 'create', 'leaf', 'pap-mid', '--stage', 'Leaf', '--target', 'infra/t-pap-leaf']);
    await ok(['release', 'publish', 'pap-leaf']);
    await ok(['function', 'set', '--space', 'pap-leaf', '--unit', 'service', '--', 'set-label', 'team', 'payments']);
    await ok(['function', 'set', '--space', 'pap-mid', '--unit', 'service', '--', 'set-label', 'tier', 'frontend']);
    await bump('pap-base', ':v452');
    await ok(['changeworkflow', 'create', '--space', 'wf', 'pap-wf', '--stage', 'Mid', '--stage', 'Leaf']);
    await ok([
      'changeorder',
      'create',
      '--space',
      'pap-base',
      'p-1',
      '--change-workflow',
      'wf/pap-wf',
      '--prior-revisions',
      'Error',
    ]);
    await ok(['variant', 'promote', '--change-order', 'pap-base/p-1']);
    // Error mode does not refuse on mid's own edit to a Unit the change never touched.
    expect(await json(['variant', 'promote', '--change-order', 'pap-base/p-1'])).toMatchObject({
      Stage: 'Leaf',
      Landed: 1,
    });
    expect(await image('pap-leaf')).toBe('ghcr.io/acme/acme:v452');
    expect((await doc('pap-leaf', 'service')).metadata.labels).toEqual({ team: 'payments' });
    const release = await json([
      'release',
      'publish',
      'pap-leaf',
      '--revision',
      'ChangeOrder:pap-base/p-1',
      '--dry-run',
    ]);
    expect(release.Units.map((u: any) => [u.Slug, u.RevisionNum])).toEqual([
      ['deployment', 2],
      ['service', 1],
    ]);
  });

  it('keeps what only the downstream added when both sides add the same map', async () => {
    await ok(['variant', 'upload', '--component', 'quin', '--variant', 'base', F]);
    await ok(['variant', 'create', 'dev', 'quin-base', '--stage', 'Development']);
    await ok(['function', 'set', '--space', 'quin-dev', '--unit', 'service', '--', 'set-label', 'team', 'payments']);
    await ok(['function', 'set', '--space', 'quin-base', '--unit', 'service', '--', 'set-label', 'tier', 'frontend']);
    await ok(['changeworkflow', 'create', '--space', 'wf', 'quin-wf', '--stage', 'Development']);
    await ok(['changeorder', 'create', '--space', 'quin-base', 'q-1', '--change-workflow', 'wf/quin-wf']);
    const mutations = await ok([
      'variant',
      'promote',
      '--change-order',
      'quin-base/q-1',
      '--dry-run',
      '-o',
      'mutations',
    ]);
    expect(mutations).toMatch(/metadata\.labels\.tier\s+Add\s+"frontend"/);
    expect(mutations).not.toMatch(/Delete/);
    await ok(['variant', 'promote', '--change-order', 'quin-base/q-1']);
    expect((await doc('quin-dev', 'service')).metadata.labels).toEqual({ team: 'payments', tier: 'frontend' });
  });

  it('copies the Links of the Space above with a promotion, onto Units it cloned too', async () => {
    await ok(['variant', 'upload', '--component', 'rom', '--variant', 'base', F]);
    await ok(['variant', 'create', 'dev', 'rom-base', '--stage', 'Development']);
    // After the variant was made, the base gains a Unit and Links the variant lacks.
    await ok(
      ['unit', 'create', '--space', 'rom-base', 'extra', '-'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: acme\ndata:\n  k: v\n',
    );
    await ok([
      'link',
      'create',
      '--space',
      'rom-base',
      'deploy-needs-service',
      'deployment',
      'service',
      '--update-type',
      'None',
    ]);
    await ok([
      'link',
      'create',
      '--space',
      'rom-base',
      'extra-needs-service',
      'extra',
      'service',
      '--update-type',
      'None',
    ]);
    await bump('rom-base', ':v452');
    await ok(['changeworkflow', 'create', '--space', 'wf', 'rom-wf', '--stage', 'Development']);
    await ok([
      'changeorder',
      'create',
      '--space',
      'rom-base',
      'r-1',
      '--change-workflow',
      'wf/rom-wf',
      '--prior-revisions',
      'All',
    ]);
    await ok(['variant', 'promote', '--change-order', 'rom-base/r-1']);
    const units = new Map(
      ((await json(['unit', 'list', '--space', 'rom-dev'])) as any[]).map((u) => [u.UnitID, u.Slug]),
    );
    const links = ((await json(['link', 'list', '--space', 'rom-dev'])) as any[]).filter(
      (l) => l.UpdateType === 'None',
    );
    expect(
      links.map((l) => [l.Slug, units.get(l.FromUnitID), units.get(l.ToUnitID), l.ToSpaceID === l.SpaceID]).sort(),
    ).toEqual([
      ['deploy-needs-service', 'deployment', 'service', true],
      ['extra-needs-service', 'extra', 'service', true],
    ]);
  });

  it('gives CEL the ChangeOrder as the API returns it, and refuses an undeclared name when the workflow is written', async () => {
    const typo = await cub(
      ['changeworkflow', 'create', '--space', 'wf', 'typo', '--filename', '-'],
      "Stages:\n  - Name: a\n    WhereSpace: \"Slug = 'x'\"\n    Prerequisites: [frozen]\nCustomPrerequisites:\n  - Name: frozen\n    Expression: \"cel:Spcae.Annotations['code-freeze'] != 'true'\"\n",
    );
    expect(typo.code).toBe(1);
    expect(typo.stderr).toMatch(
      /^Failed: HTTP 400: custom prerequisite 'frozen': the expression does not compile: Unknown variable: Spcae \(an expression may name Space, ChangeOrder, Release\)/,
    );
    await ok(['variant', 'upload', '--component', 'sie', '--variant', 'base', F]);
    await ok(['variant', 'create', 'dev', 'sie-base', '--stage', 'Development']);
    await ok(['variant', 'create', 'prod', 'sie-base', '--stage', 'Production']);
    const wf = `Stages:
  - Name: dev
    WhereSpace: "Labels.Stage = 'Development'"
  - Name: prod
    WhereSpace: "Labels.Stage = 'Production'"
    Prerequisites: [dev-done]
CustomPrerequisites:
  - Name: dev-done
    Expression: "cel:ChangeOrder.State == 'InProgress' && ChangeOrder.Stage == 'dev' && size(ChangeOrder.ResolvedSpaceIDs) == 2"
`;
    await ok(['changeworkflow', 'create', '--space', 'wf', 'sie-wf', '--filename', '-'], wf);
    await bump('sie-base', ':v452');
    await ok(['changeorder', 'create', '--space', 'sie-base', 's-1', '--change-workflow', 'wf/sie-wf']);
    await ok(['variant', 'promote', '--change-order', 'sie-base/s-1']);
    expect(await json(['variant', 'promote', '--change-order', 'sie-base/s-1'])).toMatchObject({
      Stage: 'prod',
      Landed: 1,
    });
  });

  it('answers the smaller questions as the spec does', async () => {
    await ok(['variant', 'upload', '--component', 'tango', '--variant', 'base', F]);
    await ok(['variant', 'create', 'mid', 'tango-base', '--stage', 'Mid']);
    await ok(['variant', 'create', 'leaf', 'tango-mid', '--stage', 'Leaf']);
    await ok([
      'function',
      'set',
      '--space',
      'tango-mid',
      '--unit',
      'deployment',
      '--change-desc',
      'mid replicas',
      '--',
      'set-replicas',
      '2',
    ]);
    await bump('tango-base', ':v452');
    await ok(['changeworkflow', 'create', '--space', 'wf', 'tango-wf', '--stage', 'Mid', '--stage', 'Leaf']);
    const co = await json([
      'changeorder',
      'create',
      '--space',
      'tango-base',
      't-1',
      '--change-workflow',
      'wf/tango-wf',
      '--prior-revisions',
      'Error',
    ]);
    const mid = await json(['variant', 'promote', '--change-order', 'tango-base/t-1']);
    // A Unit the change leaves as it is is reported as NoChange.
    expect(mid.Spaces[0].Units.map((u: any) => [u.UnitSlug, u.Action, u.Reason ?? '']).sort()).toEqual([
      ['deployment', 'Upgrade', ''],
      ['service', 'Mark', 'NoChange'],
    ]);
    // A failing dry run says why, and the Error-mode refusal names the upstream Unit with its Space.
    const dry = await cub(['variant', 'promote', '--change-order', 'tango-base/t-1', '--dry-run']);
    expect(dry.code).toBe(1);
    expect(dry.stderr).toBe(
      "Failed: 0 of 1 space(s) would take change order 't-1'; 'tango-leaf': deployment: unit 'deployment' has revisions before the change order's start not yet merged through link 'deployment-upstream': revision 2 of 'tango-mid/deployment' (mid replicas)\n",
    );
    // A revision shows the ChangeOrders it carries, and a Space's revisions are found by them.
    expect((await json(['revision', 'get', '--space', 'tango-mid', 'deployment', '3'])).ChangeOrders).toEqual({
      [co.ChangeOrderID]: '',
    });
    const carried = await json([
      'revision',
      'list',
      '--space',
      'tango-mid',
      '--where',
      `ChangeOrders ? '${co.ChangeOrderID}'`,
    ]);
    expect(carried.map((r: any) => [r.UnitSlug, r.RevisionNum])).toEqual([['deployment', 3]]);
    // An end Tag an open ChangeSet has not minted yet gets the open-ChangeSet reason.
    await ok(['changeset', 'create', '--space', 'tango-base', 'open-cs']);
    const early = await cub(['changeorder', 'create', '--space', 'tango-base', 't-2', '--end-tag', 'open-cs-end']);
    expect(early.stderr).toBe(
      "Failed: HTTP 409: the change ends at changeset 'open-cs', which is still open; close it first\n",
    );
    // The established product's promote flags Baton lacks are refused, saying so.
    for (const f of ['clearance', 'guard', 'subgroup']) {
      const r = await cub(['variant', 'promote', '--change-order', 'tango-base/t-1', `--${f}`, 'x']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^Usage: --${f} is not supported: `));
    }
  });
});

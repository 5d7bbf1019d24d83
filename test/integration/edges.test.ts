// The edges a user hits in the first day (issue 38): each replayed through the API and cub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
let ok: (args: string[], input?: string) => Promise<string>;

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  ok = cubOk(cub);
  await env.api.post('/space', { Slug: 'ed-infra' });
});
afterAll(async () => env.close());

/**
 * A fleet of its own for each test: `<p>-base` with Unit app, `<p>-stg` (released to a Target) and
 * `<p>-prd` downstream, and workflow `w` (staging, then prod gated on Released).
 */
async function fleet(p: string): Promise<void> {
  await env.api.post('/space/ed-infra/target', { Slug: `${p}-stg` });
  expect(
    (
      await env.api.post('/variant/upload', {
        Component: p,
        Variant: 'base',
        Units: [{ Slug: 'app', Data: deploymentYaml('app') }],
      })
    ).status,
  ).toBe(201);
  await env.api.post('/variant', {
    Name: 'stg',
    UpstreamSpaceID: `${p}-base`,
    Stage: 'Staging',
    Namespace: 'stg',
    ReleaseTargetID: `ed-infra/${p}-stg`,
  });
  await env.api.post('/variant', { Name: 'prd', UpstreamSpaceID: `${p}-base`, Stage: 'Production', Namespace: 'prd' });
  const wf = await env.api.post(`/space/${p}-base/change_workflow`, {
    Slug: 'w',
    Stages: [
      { Name: 'staging', WhereSpace: `Labels.Stage = 'Staging' AND Slug LIKE '${p}-%'` },
      { Name: 'prod', WhereSpace: `Labels.Stage = 'Production' AND Slug LIKE '${p}-%'`, Prerequisites: ['Released'] },
    ],
  });
  expect(wf.status, wf.text).toBe(201);
}

/** A change in the base and a ChangeOrder carrying it, on workflow w. */
async function changeOrder(p: string, slug: string, replicas: number): Promise<void> {
  expect(
    (
      await env.api.post(`/space/${p}-base/function/invoke`, {
        FunctionName: 'set-replicas',
        Arguments: [String(replicas)],
        UnitIDs: ['app'],
      })
    ).status,
  ).toBeLessThan(300);
  const r = await env.api.post(`/space/${p}-base/change_order`, { Slug: slug, ChangeWorkflowID: `${p}-base/w` });
  expect(r.status, r.text).toBe(201);
}

describe('an abort', () => {
  it('is undone by clearing its reason while nothing has been restored, and not after', async () => {
    await fleet('ab');
    await changeOrder('ab', 'undo', 3);
    await ok(['changeorder', 'update', '--space', 'ab-base', 'undo', '--aborted-reason', 'wrong replicas']);
    expect((await env.api.get('/space/ab-base/change_order/undo')).body).toMatchObject({
      State: 'Aborted',
      AbortedReason: 'wrong replicas',
    });
    const cleared = await ok(['changeorder', 'update', '--space', 'ab-base', 'undo', '--aborted-reason', '']);
    expect(cleared).not.toMatch(/Aborted Reason/);
    const co = (await env.api.get('/space/ab-base/change_order/undo')).body;
    expect(co.State).not.toBe('Aborted');
    expect(co).not.toHaveProperty('AbortedReason');
    expect(co).not.toHaveProperty('AbortedBy');
    // Promotable again.
    expect(await ok(['variant', 'promote', '--change-order', 'ab-base/undo', '--target-stage', 'staging'])).toMatch(
      /Promoted change order into stage 'staging': 1 of 1/,
    );
    // Aborted again and taken back out of staging: the abort stands for good.
    await ok(['changeorder', 'update', '--space', 'ab-base', 'undo', '--aborted-reason', 'wrong replicas']);
    await ok(['variant', 'demote', 'ab-stg', '--change-order', 'ab-base/undo']);
    const late = await cub(['changeorder', 'update', '--space', 'ab-base', 'undo', '--aborted-reason', '']);
    expect([late.code, late.stderr]).toEqual([
      1,
      expect.stringContaining(
        "has been restored in some spaces, so its abort reason ('wrong replicas') can no longer be cleared",
      ),
    ]);
    expect((await env.api.get('/space/ab-base/change_order/undo')).body.AbortedReason).toBe('wrong replicas');
  });
});

describe('an Invoke or Link-type ChangeOrder', () => {
  it('refuses a workflow whose first Stage has prerequisites, at create and at a workflow change, naming the Stage', async () => {
    await fleet('iv');
    await ok(['invocation', 'create', '--space', 'iv-base', 'scale', 'Kubernetes/YAML', '--', 'set-replicas', '4']);
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'iv-base',
      'gated',
      '--stage',
      'Staging',
      '--stage',
      'Production',
    ]);
    await ok(['changeworkflow', 'update', '--space', 'iv-base', 'gated', '--stage-prerequisites', 'Staging=Validated']);
    const refused = await cub([
      'changeorder',
      'create',
      '--space',
      'iv-base',
      'inv',
      '--update-type',
      'Invoke',
      '--invocation',
      'iv-base/scale',
      '--change-workflow',
      'iv-base/gated',
      '--component',
      'iv',
    ]);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      expect.stringContaining(
        "an Invoke change order cannot follow workflow 'gated': its first Stage 'Staging' has prerequisites (Validated), evaluated over the base",
      ),
    ]);
    expect((await env.api.get('/space/iv-base/change_order/inv')).status).toBe(404);
    // Without them it is taken; then the workflow may not gain them while the order follows it.
    await ok(['changeworkflow', 'update', '--space', 'iv-base', 'gated', '--stage-prerequisites', 'Staging=']);
    expect((await env.api.get('/space/iv-base/change_workflow/gated')).body.Stages[0].Prerequisites ?? []).toEqual([]);
    await ok([
      'changeorder',
      'create',
      '--space',
      'iv-base',
      'inv',
      '--update-type',
      'Invoke',
      '--invocation',
      'iv-base/scale',
      '--change-workflow',
      'iv-base/gated',
      '--component',
      'iv',
    ]);
    const change = await cub([
      'changeworkflow',
      'update',
      '--space',
      'iv-base',
      'gated',
      '--stage-prerequisites',
      'Staging=Validated',
    ]);
    expect([change.code, change.stderr]).toEqual([
      1,
      expect.stringContaining(
        "change order 'inv' follows this workflow: an Invoke change order cannot follow workflow 'gated'",
      ),
    ]);
    // A later Stage's prerequisites are fine.
    await ok([
      'changeworkflow',
      'update',
      '--space',
      'iv-base',
      'gated',
      '--stage-prerequisites',
      'Production=Validated',
    ]);
  });
});

describe('a blocked promotion', () => {
  it('exits 1 with --dry-run, with --dry-run --explain and for real, and 0 once open', async () => {
    await fleet('bl');
    await changeOrder('bl', 'blocked', 5);
    await ok(['variant', 'promote', '--change-order', 'bl-base/blocked', '--target-stage', 'staging']);
    const words = ['variant', 'promote', '--change-order', 'bl-base/blocked', '--target-stage', 'prod'];
    const dry = await cub([...words, '--dry-run']);
    const explained = await cub([...words, '--dry-run', '--explain']);
    expect([dry.code, explained.code]).toEqual([1, 1]);
    expect(explained.stdout).toMatch(/^Stage 'prod' \(bl-prd\): blocked, 1 of 2 gate\(s\) fail/);
    expect((await cub([...words, '--dry-run', '--explain', '-o', 'json'])).code).toBe(1);
    // Released in staging: open, and both say so with 0.
    expect((await env.api.post('/space/bl-stg/release', { Revision: 'ChangeOrder:bl-base/blocked' })).status).toBe(201);
    expect((await cub([...words, '--dry-run'])).code).toBe(0);
    const open = await cub([...words, '--dry-run', '--explain']);
    expect([open.code, open.stdout]).toEqual([0, expect.stringMatching(/^Stage 'prod' \(bl-prd\): open/)]);
  });
});

describe("a CEL gate's evidence", () => {
  it('shows the values CEL read: a map read whole as it is, beside the entry read from it', async () => {
    await fleet('cl');
    const wf = await env.api.post('/space/cl-base/change_workflow', {
      Slug: 'freeze',
      Stages: [
        { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging'" },
        { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'", Prerequisites: ['not-frozen'] },
      ],
      CustomPrerequisites: [
        {
          Name: 'not-frozen',
          Expression: "cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true'",
          Description: 'the space is not under a code freeze',
        },
      ],
    });
    expect(wf.status, wf.text).toBe(201);
    await ok(['space', 'update', 'cl-stg', '--annotation', 'code-freeze=true']);
    expect(
      (
        await env.api.post('/space/cl-base/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['6'],
          UnitIDs: ['app'],
        })
      ).status,
    ).toBeLessThan(300);
    await ok(['changeorder', 'create', '--space', 'cl-base', 'frz', '--change-workflow', 'cl-base/freeze']);
    await ok(['variant', 'promote', '--change-order', 'cl-base/frz', '--target-stage', 'staging']);
    const text = (await cub(['changeorder', 'explain', '--space', 'cl-base', 'frz', '--target-stage', 'prod'])).stdout;
    expect(text).toContain(`FAILS  cl-stg  not-frozen`);
    expect(text).toContain(
      `read: cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true' with Space.Annotations = {"code-freeze":"true"}, Space.Annotations['code-freeze'] = "true"`,
    );
    const json = JSON.parse(
      await ok(['changeorder', 'explain', '--space', 'cl-base', 'frz', '--target-stage', 'prod', '-o', 'json']),
    );
    expect(json.Gates.find((g: { Prerequisite: string }) => g.Prerequisite === 'not-frozen').Evidence.Values).toEqual({
      'Space.Annotations': { 'code-freeze': 'true' },
      "Space.Annotations['code-freeze']": 'true',
    });
    await ok(['space', 'update', 'cl-stg', '--annotation', 'code-freeze=false']);
    expect(await ok(['changeorder', 'explain', '--space', 'cl-base', 'frz', '--target-stage', 'prod'])).toMatch(
      /: open/,
    );
  });
});

describe('a hold past its expiry', () => {
  it('reads as not in force in hold get and list, and no gate counts it', async () => {
    await fleet('hd');
    await changeOrder('hd', 'blocked', 7);
    await ok(['variant', 'promote', '--change-order', 'hd-base/blocked', '--target-stage', 'staging']);
    await ok(['hold', 'create', 'lapse', '--space', 'hd-prd', '--reason', 'quiet hour', '--expires-in', '1h']);
    const words = ['changeorder', 'explain', '--space', 'hd-base', 'blocked', '--target-stage', 'prod', '-o', 'json'];
    expect(
      JSON.parse(await ok(words)).Gates.map((g: { Prerequisite: string; Satisfied: boolean }) => [
        g.Prerequisite,
        g.Satisfied,
      ]),
    ).toContainEqual(['Hold', false]);
    const real = env.deps.now;
    // Two hours on, by the server's clock (time is passed in).
    env.deps.now = () => new Date(real().getTime() + 2 * 3600_000);
    try {
      expect(JSON.parse(await ok(['hold', 'get', 'lapse', '-o', 'json']))).toMatchObject({
        Slug: 'lapse',
        InForce: false,
      });
      expect(await ok(['hold', 'get', 'lapse'])).toMatch(/lapse\s+false\s+space hd-prd/);
      expect(
        JSON.parse(await ok(['hold', 'list', '-o', 'json'])).find((h: { Slug: string }) => h.Slug === 'lapse'),
      ).toMatchObject({ InForce: false });
      const gates = JSON.parse(await ok(words)).Gates.map((g: { Prerequisite: string }) => g.Prerequisite);
      expect(gates).not.toContain('Hold');
    } finally {
      env.deps.now = real;
    }
  });
});

describe('a revision ref that names nothing', () => {
  it('is a 4xx naming it, with nothing written; a --where-space matching nothing says so', async () => {
    await fleet('rf');
    await ok(['tag', 'create', '--space', 'rf-stg', 'v1']);
    await ok(['unit', 'tag', 'v1', '--space', 'rf-stg', '--unit', 'app', '--revision', '1']);
    for (const [ref, said] of [
      ['ChangeSet:no-such-space/cs1', "space 'no-such-space'"],
      ['ChangeSet:cs1', "changeset 'cs1'"],
      ['Tag:nope', "tag 'nope'"],
      ['Before:Tag:nope', "tag 'nope'"],
      ['ChangeOrder:rf-base/nope', "changeorder 'rf-base/nope'"],
    ]) {
      const r = await cub(['variant', 'approve', 'rf-stg', 'rf-prd', '--revision', ref!]);
      expect([r.code, r.stdout], ref).toEqual([1, '']);
      expect(r.stderr, ref).toMatch(new RegExp(`^Failed: HTTP 404: .*${said!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    }
    expect((await env.api.post('/attest', { Spaces: ['rf-stg'], Revision: 'Tag:nope' })).status).toBe(404);
    const none = await cub(['variant', 'approve', '--where-space', "Slug = 'nothing-here'"]);
    expect([none.code, none.stderr]).toEqual([
      1,
      `Failed: HTTP 404: --where-space "Slug = 'nothing-here'" matches no Space you can see: nothing to approve\n`,
    ]);
    for (const s of ['rf-stg', 'rf-prd']) expect((await env.api.get(`/space/${s}/attestation`)).body).toEqual([]);
    // A Tag one Space has: approved there, the other skipped saying why.
    const some = await ok(['variant', 'approve', 'rf-stg', 'rf-prd', '--revision', 'Tag:v1']);
    expect(some).toMatch(/^Approved revisions in 1 space\(s\)/);
    expect(some, some).toMatch(/rf-prd\s+skipped\s/);
  });
});

describe('approvals', () => {
  it("count people, not attestations, and an author's own approval says at once that it does not count", async () => {
    await fleet('ap');
    const wf = await env.api.post('/space/ap-base/change_workflow', {
      Slug: 'two',
      Stages: [
        { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging' AND Slug LIKE 'ap-%'" },
        {
          Name: 'prod',
          WhereSpace: "Labels.Stage = 'Production' AND Slug LIKE 'ap-%'",
          Prerequisites: ['two-approvers'],
        },
      ],
      AttestationPrerequisites: [{ Name: 'two-approvers', Count: 2 }],
    });
    expect(wf.status, wf.text).toBe(201);
    expect(
      (
        await env.api.post('/space/ap-base/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['8'],
          UnitIDs: ['app'],
        })
      ).status,
    ).toBeLessThan(300);
    await ok(['changeorder', 'create', '--space', 'ap-base', 'rel', '--change-workflow', 'ap-base/two']);
    await ok(['variant', 'promote', '--change-order', 'ap-base/rel', '--target-stage', 'staging']);
    // The admin promoted it into ap-stg: their approval is recorded, and they are told it does not count.
    const own = await cub(['variant', 'approve', '--change-order', 'ap-base/rel', '--stage', 'staging']);
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/^Approved revisions in 1 space\(s\)/);
    expect(own.stderr).toMatch(
      /^Warning: ap-stg: recorded, but it does not count toward two-approvers: you wrote \(or promoted\) the change here \(app r\d+\), and the authors of a change do not count/,
    );
    const json = JSON.parse(
      (
        await cub([
          'variant',
          'approve',
          '--change-order',
          'ap-base/rel',
          '--stage',
          'staging',
          '--dry-run',
          '-o',
          'json',
        ])
      ).stdout,
    );
    expect(json.Spaces[0].Warning).toContain('does not count toward two-approvers');
    // alice approves twice: one person.
    const alice = cubAt(env.url, (await ok(['user', 'create', 'alice', '--role', 'Member', '-q'])).trim());
    for (let i = 0; i < 2; i++) {
      const r = await alice(['variant', 'approve', '--change-order', 'ap-base/rel', '--stage', 'staging']);
      expect([r.code, r.stderr]).toEqual([0, '']);
    }
    const text = await ok(['changeorder', 'explain', '--space', 'ap-base', 'rel', '--target-stage', 'prod']);
    expect(text).toMatch(/FAILS {2}ap-stg {2}two-approvers: .*has 1 of 2/);
    expect(text).toMatch(
      /read: app r\d+: 1\/2 Approval \(alice\); not counted: .*alice \(approved already: a person counts once\)/,
    );
    expect(text).toContain('admin (wrote the change)');
  });
});

/** The command at the end of an `opens:` text (after its last ": "), split as a shell would split it. */
const commandOf = (opens: string): string[] | undefined => {
  const at = opens.lastIndexOf(': cub ');
  if (at < 0) return undefined;
  return [...opens.slice(at + 2).matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!).slice(1);
};

describe("explain's opens: commands", () => {
  it('each runs as printed, for a blocked order of every gate kind, and together they open the gates they can', async () => {
    await fleet('op');
    await env.api.post('/space/op-base/change_workflow', {
      Slug: 'all',
      Stages: [
        { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging' AND Slug LIKE 'op-%'" },
        {
          Name: 'prod',
          WhereSpace: "Labels.Stage = 'Production' AND Slug LIKE 'op-%'",
          Prerequisites: ['Validated', 'Released', 'Healthy', 'not-frozen', 'approved'],
        },
      ],
      CustomPrerequisites: [
        {
          Name: 'not-frozen',
          Expression: "cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true'",
        },
      ],
      AttestationPrerequisites: [{ Name: 'approved', Count: 1 }],
    });
    expect(
      (
        await env.api.post('/space/op-base/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['9'],
          UnitIDs: ['app'],
        })
      ).status,
    ).toBeLessThan(300);
    await ok(['changeorder', 'create', '--space', 'op-base', 'x', '--change-workflow', 'op-base/all']);
    const bob = cubAt(env.url, (await ok(['user', 'create', 'bob-op', '--role', 'Member', '-q'])).trim());
    const explain = async () => {
      const json = JSON.parse(
        await ok(['changeorder', 'explain', '--space', 'op-base', 'x', '--target-stage', 'prod', '-o', 'json']),
      );
      const text = await ok(['changeorder', 'explain', '--space', 'op-base', 'x', '--target-stage', 'prod']);
      const failing = (json.Gates as { Prerequisite: string; Satisfied: boolean; Opens?: string }[]).filter(
        (g) => !g.Satisfied,
      );
      for (const g of failing) if (g.Opens) expect(text).toContain(`opens: ${g.Opens}`);
      return { open: json.Open as boolean, failing };
    };
    const run = async (gates: { Prerequisite: string; Opens?: string }[], as: typeof cub = cub) => {
      for (const g of gates) {
        const words = commandOf(g.Opens ?? '');
        if (!words) continue;
        const r = await as(words);
        expect([r.code, r.stderr.replace(/^Warning: .*\n/m, '')], `${g.Prerequisite}: cub ${words.join(' ')}`).toEqual([
          0,
          '',
        ]);
      }
    };
    // Staging has not taken it: the Taken gate's command promotes it there.
    const first = await explain();
    expect(first.failing.map((g) => g.Prerequisite)).toEqual(['Taken']);
    await run(first.failing);
    // Now every other kind fails: Released, Healthy, a CEL gate, an approval, a hold.
    await ok(['space', 'update', 'op-stg', '--annotation', 'code-freeze=true']);
    await ok(['hold', 'create', 'op-quiet', '--space', 'op-prd', '--reason', 'quiet']);
    const second = await explain();
    expect(second.failing.map((g) => g.Prerequisite).sort()).toEqual([
      'Healthy',
      'Hold',
      'Released',
      'approved',
      'not-frozen',
    ]);
    for (const g of second.failing) expect(commandOf(g.Opens ?? ''), g.Prerequisite).toBeDefined();
    // The approval's command, run by someone who did not write the change; the rest as printed.
    await run(
      second.failing.filter((g) => g.Prerequisite === 'approved'),
      bob,
    );
    await run(second.failing.filter((g) => g.Prerequisite !== 'approved' && g.Prerequisite !== 'Healthy'));
    const third = await explain();
    expect(third.failing.map((g) => g.Prerequisite).sort()).toEqual(['Healthy', 'not-frozen']);
    await run(third.failing);
    expect((await explain()).failing.map((g) => g.Prerequisite)).toEqual(['not-frozen']);
    await ok(['space', 'update', 'op-stg', '--annotation', 'code-freeze=false']);
    expect((await explain()).open).toBe(true);
  });

  it("a Validated gate's command lists the Units to fix", async () => {
    await fleet('ov');
    // A variant whose namespace placeholder is left: its revisions have validation errors.
    await env.api.post('/variant', { Name: 'raw', UpstreamSpaceID: 'ov-base', Stage: 'Staging' });
    await env.api.post('/space/ov-base/change_workflow', {
      Slug: 'v',
      Stages: [
        { Name: 'staging', WhereSpace: "Slug = 'ov-raw'" },
        { Name: 'prod', WhereSpace: "Slug = 'ov-prd'", Prerequisites: ['Validated'] },
      ],
    });
    expect(
      (
        await env.api.post('/space/ov-base/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['2'],
          UnitIDs: ['app'],
        })
      ).status,
    ).toBeLessThan(300);
    await ok(['changeorder', 'create', '--space', 'ov-base', 'y', '--change-workflow', 'ov-base/v']);
    await ok(['variant', 'promote', '--change-order', 'ov-base/y', '--target-stage', 'staging']);
    const json = JSON.parse(
      await ok(['changeorder', 'explain', '--space', 'ov-base', 'y', '--target-stage', 'prod', '-o', 'json']),
    );
    const gate = json.Gates.find((g: { Prerequisite: string }) => g.Prerequisite === 'Validated');
    expect(gate).toMatchObject({ Satisfied: false, SpaceSlug: 'ov-raw' });
    const words = commandOf(gate.Opens)!;
    expect(words).toEqual(['unit', 'list', '--space', 'ov-raw']);
    expect(await ok(words)).toMatch(/^app\s/m);
  });
});

describe('changeworkflow create --changeworkflow (clone)', () => {
  it("takes a bare slug as the spec's example does, and says which Spaces hold it when several do", async () => {
    for (const s of ['wf-shared', 'wf-team', 'wf-other']) await ok(['space', 'create', s]);
    await ok([
      'changeworkflow',
      'create',
      '--space',
      'wf-shared',
      'std-rollout',
      '--stage',
      'dev',
      '--stage',
      'prod',
      '--prerequisites',
      'Released',
    ]);
    const made = JSON.parse(
      await ok([
        'changeworkflow',
        'create',
        '--changeworkflow',
        'std-rollout',
        '--dest-space',
        'wf-team',
        '-o',
        'json',
      ]),
    );
    expect(made).toMatchObject({
      Slug: 'std-rollout',
      Stages: [{ Name: 'dev' }, { Name: 'prod', Prerequisites: ['Released'] }],
    });
    expect((await env.api.get('/space/wf-team/change_workflow/std-rollout')).status).toBe(200);
    // Now two Spaces have it: a bare slug is ambiguous, a qualified one is not.
    const two = await cub(['changeworkflow', 'create', '--changeworkflow', 'std-rollout', '--dest-space', 'wf-other']);
    expect([two.code, two.stderr]).toEqual([
      1,
      expect.stringContaining(
        "change workflow 'std-rollout' is in 2 spaces (wf-shared, wf-team): name one as <space>/std-rollout",
      ),
    ]);
    await ok([
      'changeworkflow',
      'create',
      '--changeworkflow',
      'wf-shared/std-rollout',
      '--dest-space',
      'wf-other',
      'copied',
    ]);
    const none = await cub(['changeworkflow', 'create', '--changeworkflow', 'no-such-wf', '--dest-space', 'wf-other']);
    expect([none.code, none.stderr]).toEqual([
      1,
      expect.stringContaining("no change workflow 'no-such-wf' in any space you can see"),
    ]);
  });
});

describe('a Space added by --refresh-spaces after the change started', () => {
  it('already holding the change, takes both Tags on its head; one past it is refused with a way out, --remove-space', async () => {
    await fleet('rs');
    expect(
      (
        await env.api.post('/space/rs-base/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['4'],
          UnitIDs: ['app'],
        })
      ).status,
    ).toBeLessThan(300);
    await ok([
      'changeorder',
      'create',
      '--space',
      'rs-base',
      'chg',
      '--change-workflow',
      'rs-base/w',
      '--where-space-field',
      "Slug LIKE 'rs-%'",
    ]);
    await ok(['variant', 'promote', '--change-order', 'rs-base/chg', '--target-stage', 'staging']);
    // A second staging variant made from the base now: it holds exactly the change's end.
    await env.api.post('/variant', { Name: 'stg2', UpstreamSpaceID: 'rs-base', Stage: 'Staging', Namespace: 'stg2' });
    expect(await ok(['changeorder', 'update', '--space', 'rs-base', 'chg', '--refresh-spaces'])).toMatch(
      /^In-Scope Spaces\s+rs-prd, rs-stg, rs-stg2$/m,
    );
    const r = await ok(['variant', 'promote', '--change-order', 'rs-base/chg', '--target-stage', 'staging']);
    expect(r, r).toMatch(/^Promoted change order into stage 'staging': \d of \d space\(s\)/);
    expect(r).toMatch(/rs-stg2\s+\S+\s+app\s+Mark\s+AlreadyHasChange/);
    const app = (await env.api.get('/space/rs-stg2/unit/app')).body;
    const co = (await env.api.get('/space/rs-base/change_order/chg')).body;
    const marks = await env.deps.store.marksAt([app.UnitID], [co.StartTagID, co.EndTagID]);
    expect(marks.map((m) => [m.TagID === co.StartTagID ? 'start' : 'end', m.RevisionNum]).sort()).toEqual([
      ['end', app.HeadRevisionNum],
      ['start', app.HeadRevisionNum],
    ]);
    expect((await env.api.get('/space/rs-base/change_order/chg')).body.ResolvedSpaceIDs).toContain(
      (await env.api.get('/space/rs-stg2')).body.SpaceID,
    );
    // The base moves on; a variant made now holds the change and more: refused, with how to take it out.
    expect(
      (
        await env.api.post('/space/rs-base/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['5'],
          UnitIDs: ['app'],
        })
      ).status,
    ).toBeLessThan(300);
    await env.api.post('/variant', { Name: 'stg3', UpstreamSpaceID: 'rs-base', Stage: 'Staging', Namespace: 'stg3' });
    await ok(['changeorder', 'update', '--space', 'rs-base', 'chg', '--refresh-spaces']);
    const past = await cub(['variant', 'promote', '--change-order', 'rs-base/chg', '--target-stage', 'staging']);
    expect(past.code).toBe(1);
    expect(past.stdout + past.stderr).toContain("past the change's end");
    const explained = await ok(['changeorder', 'explain', '--space', 'rs-base', 'chg', '--target-stage', 'staging']);
    expect(explained).toMatch(
      /last promotion into rs-stg3 failed \(.*\): .*past the change's end.*--remove-space rs-stg3/,
    );
    // The way out it prints, run as printed.
    const fix = /\(cub (changeorder update [^)]+)\)/.exec(explained)![1]!;
    expect(fix).toBe('changeorder update --space rs-base chg --remove-space rs-stg3');
    await ok(fix.split(' '));
    const got = await ok(['changeorder', 'update', '--space', 'rs-base', 'chg', '--refresh-spaces']);
    expect(got).toMatch(/^In-Scope Spaces\s+rs-prd, rs-stg, rs-stg2$/m);
    expect(got).toMatch(/^Removed Spaces\s+rs-stg3 \(.* by admin\)$/m);
    // A Space that took the change is not removed: it must be demoted first.
    const held = await cub(['changeorder', 'update', '--space', 'rs-base', 'chg', '--remove-space', 'rs-stg']);
    expect([held.code, held.stderr]).toEqual([
      1,
      expect.stringContaining(
        "space 'rs-stg' has taken change order 'chg': take it back out first (cub variant demote rs-stg --change-order rs-base/chg)",
      ),
    ]);
  });
});

import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { acmeFleet, ACME_DEV_DONE, type SeedStep } from '../../lib/local/seed.ts';
import type { Rollout } from '../../lib/model/rollout.ts';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const ok = (args: string[], input?: string) => cubOk(cub)(args, input);
const run = async (steps: SeedStep[]) => {
  for (const s of steps) await ok(s.args, s.input);
};
const rollout = async (): Promise<Rollout> => {
  const r = await env.api.get('/space/acme-base/change_order/release-v452/rollout');
  expect(r.status).toBe(200);
  return r.body as Rollout;
};
const cell = (r: Rollout, stage: string, space: string) =>
  r.Stages.find((s) => s.Name === stage)!.Spaces.find((s) => s.SpaceSlug === space)!;

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  await run(acmeFleet(fileURLToPath(new URL('../fixtures/acme', import.meta.url))));
});
afterAll(async () => env.close());

describe('a rollout, Stage by Stage and Space by Space (GET …/rollout, cub changeorder rollout)', () => {
  it('before any promotion: every Space waits, dev is next, and the next promotion is explained', async () => {
    const r = await rollout();
    expect(r.ChangeOrder).toMatchObject({ Slug: 'release-v452', State: 'New', SpaceSlug: 'acme-base' });
    expect(r.Base.SpaceSlug).toBe('acme-base');
    expect(r.Stages.map((s) => [s.Name, s.Status, s.Spaces.map((x) => x.SpaceSlug)])).toEqual([
      ['dev', 'Next', ['acme-dev']],
      ['staging', 'Waiting', ['acme-staging-euw1', 'acme-staging-use1']],
      ['prod', 'Waiting', ['acme-prod-euw1', 'acme-prod-use1']],
    ]);
    expect(r.Stages.map((s) => s.Guards)).toEqual([
      ['Validated', 'Released'],
      ['Released', 'Healthy', 'not-frozen', 'one-approver'],
      ['Released', 'Healthy'],
    ]);
    expect(cell(r, 'dev', 'acme-dev')).toMatchObject({
      Taken: false,
      HasTarget: true,
      Gates: [],
      Approvals: [],
      Overrides: [],
    });
    expect(r.Next).toMatchObject({
      Stage: 'dev',
      Open: true,
      Targets: [{ SpaceSlug: 'acme-dev' }],
      Over: [{ SpaceSlug: 'acme-base' }],
    });
    expect(r.Holds).toEqual([]);
    expect((await env.other.get('/space/acme-base/change_order/release-v452/rollout')).status).toBe(404);
    expect((await env.api.get('/space/acme-base/change_order/nope/rollout')).status).toBe(404);
  });

  it('dev took it and released it: its Release, live status and the gates staging asks of it', async () => {
    await ok(ACME_DEV_DONE[0]!.args);
    let r = await rollout();
    let dev = cell(r, 'dev', 'acme-dev');
    expect(r.Stages[0]!.Status).toBe('Reached');
    expect(dev).toMatchObject({ Taken: true, TakenAt: expect.any(String) });
    expect(dev.Release).toBeUndefined();
    expect(dev.Gates.map((g) => [g.Prerequisite, g.Satisfied])).toEqual([
      ['Validated', true],
      ['Released', false],
    ]);
    expect(dev.Gates[1]!.Opens).toMatch(/cub release publish acme-dev --revision ChangeOrder:acme-base\/release-v452$/);
    expect(r.Next).toMatchObject({ Stage: 'staging', Open: false });
    expect(r.Stages[1]!.Status).toBe('Next');
    await run(ACME_DEV_DONE.slice(1));
    r = await rollout();
    dev = cell(r, 'dev', 'acme-dev');
    expect(dev.Release).toMatchObject({
      ReleaseNum: 1,
      CarriesChange: true,
      LiveStatus: { Sync: 'Synced', Health: 'Healthy', Reporter: 'argocd' },
    });
    expect(dev.Gates.every((g) => g.Satisfied)).toBe(true);
    expect(r.Next).toMatchObject({ Stage: 'staging', Open: true });
    expect(r.ChangeOrder).toMatchObject({ State: 'InProgress', Stage: 'dev' });
  });

  it('staging: approvals recorded and missing, a hold in force, a forced promotion recorded', async () => {
    await ok(['variant', 'promote', '--change-order', 'acme-base/release-v452', '--target-stage', 'staging']);
    await ok(['variant', 'approve', 'acme-staging-euw1', '--change-order', 'acme-base/release-v452']);
    await ok(['hold', 'create', 'freeze-euw1', '--space', 'acme-prod-euw1', '--reason', 'datacenter move']);
    // Each Space's state is read once: the next promotion's explanation reuses what staging's cells read.
    // Its Releases, newest first, a page at a time until the gates have what they read (here one page each).
    const pages = vi.spyOn(env.deps.store, 'releasePage');
    let r = await rollout();
    const releaseReads = pages.mock.calls.map(([id]) => id);
    pages.mockRestore();
    expect(releaseReads).toHaveLength(5);
    expect(new Set(releaseReads).size).toBe(5);
    expect(r.Stages[1]!.Status).toBe('Reached');
    const euw1 = cell(r, 'staging', 'acme-staging-euw1');
    const use1 = cell(r, 'staging', 'acme-staging-use1');
    expect(euw1.Approvals).toEqual([
      { Name: 'one-approver', Type: 'Approval', Count: 1, Counted: [expect.any(String)], Missing: 0 },
    ]);
    expect(use1.Approvals).toEqual([{ Name: 'one-approver', Type: 'Approval', Count: 1, Counted: [], Missing: 1 }]);
    expect(use1.Gates.find((g) => g.Prerequisite === 'Released')).toMatchObject({ Satisfied: false });
    expect(r.Holds.map((h) => [h.Slug, h.Scope, h.SpaceSlug, h.Reason])).toEqual([
      ['freeze-euw1', 'Space', 'acme-prod-euw1', 'datacenter move'],
    ]);
    expect(r.Next!.Gates.filter((g) => !g.Satisfied).map((g) => g.Prerequisite)).toEqual(
      expect.arrayContaining(['Released', 'Healthy', 'one-approver', 'Hold']),
    );
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
    ]);
    // Every Stage reached: Completed is derived from Final over prod's states, which its cells already read.
    const again = vi.spyOn(env.deps.store, 'releasePage');
    r = await rollout();
    const rereads = again.mock.calls.map(([id]) => id);
    again.mockRestore();
    expect([rereads.length, new Set(rereads).size]).toEqual([5, 5]);
    expect(r.ChangeOrder.Completed).toBe(false);
    expect(cell(r, 'prod', 'acme-prod-euw1')).toMatchObject({
      Taken: true,
      Overrides: [{ Reason: 'incident 1234', Gates: expect.arrayContaining(['Released', 'Hold']) }],
    });
    expect(r.Stages[2]!.Status).toBe('Reached');
    expect(r.Next).toBeUndefined();
  });

  it('a promotion that failed in a Space shows there, with its error, until the Space takes the change', async () => {
    await ok([
      'function',
      'set',
      '--space',
      'acme-base',
      '--unit',
      'deployment',
      '--change-desc',
      'v453',
      '--',
      'set-image-reference-by-uri',
      'ghcr.io/acme/acme',
      ':v453',
    ]);
    await ok([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'release-v453',
      '--change-workflow',
      'acme-workflows/acme-main-line',
    ]);
    // A Unit of acme-dev locked to an open ChangeSet: the promotion's write there fails.
    await ok(['changeset', 'create', '--space', 'acme-dev', 'held']);
    await ok([
      'function',
      'set',
      '--space',
      'acme-dev',
      '--unit',
      'deployment',
      '--changeset',
      'held',
      '--',
      'set-replicas',
      '9',
    ]);
    expect((await cub(['variant', 'promote', '--change-order', 'acme-base/release-v453'])).code).toBe(1);
    const r = (await env.api.get('/space/acme-base/change_order/release-v453/rollout')).body as Rollout;
    const dev = cell(r, 'dev', 'acme-dev');
    expect(dev).toMatchObject({
      Taken: false,
      Failure: { Action: 'Failed', Units: [{ UnitSlug: 'deployment', Error: expect.stringMatching(/held/) }] },
    });
    expect(r.Stages[0]!.Status).toBe('Next');
    expect(await ok(['changeorder', 'rollout', '--space', 'acme-base', 'release-v453'])).toMatch(
      /acme-dev\s+failed\s+#1 \(without it\) Synced\/Healthy \d+[smhd] ago\s+failed: /,
    );
  });

  it('cub changeorder rollout prints the grid, one line per Space', async () => {
    const text = await ok(['changeorder', 'rollout', '--space', 'acme-base', 'release-v452']);
    expect(text).toMatch(/^release-v452 \(acme-base\): Resolved, stage prod\n(?!Next)/);
    expect(text).toMatch(/staging\s+Reached/);
    expect(text).toMatch(/acme-dev\s+taken\s+#1 Synced\/Healthy/);
    expect(text).toMatch(/acme-staging-use1\s+taken\s+-\s+.*one-approver 0\/1/);
    expect(text).toMatch(/acme-prod-euw1\s+taken\s+-\s+.*forced: incident 1234/);
    expect(text).toMatch(/Holds in force:\n\s+freeze-euw1/);
    const json = JSON.parse(await ok(['changeorder', 'rollout', '--space', 'acme-base', 'release-v452', '-o', 'json']));
    expect(json.Stages.map((s: { Name: string }) => s.Name)).toEqual(['dev', 'staging', 'prod']);
    expect((await cub(['changeorder', 'rollout', '--space', 'acme-base'])).code).toBe(2);
  });
});

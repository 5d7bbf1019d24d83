import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubAt, cubOk, type CubResult } from '../support/cli.ts';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
let cub: (args: string[], input?: string) => Promise<CubResult>;
const ok = (args: string[], input?: string) => cubOk(cub)(args, input);

beforeAll(async () => {
  env = await startEnv();
  cub = cubAt(env.url, env.api.token!);
  await ok(['space', 'create', 'hold-base', '--label', 'Stage=Base']);
  await ok(['unit', 'create', '--space', 'hold-base', 'app', '-'], deploymentYaml('app'));
  for (const v of ['eu', 'us']) await ok(['variant', 'create', v, 'hold-base', '--stage', 'Production', '-q']);
  await ok(['changeworkflow', 'create', '--space', 'hold-base', 'standard', '--stage', 'Production']);
  await ok([
    'function',
    'set',
    '--space',
    'hold-base',
    '--unit',
    'app',
    '--change-desc',
    'scale',
    '-q',
    '--',
    'set-replicas',
    '4',
  ]);
  await ok(['changeorder', 'create', '--space', 'hold-base', 'scale', '--change-workflow', 'hold-base/standard']);
});
afterAll(async () => env.close());

describe('cub hold', () => {
  it('places a freeze on a workflow, refuses the promotion naming it, passes it with --force, and lifts it', async () => {
    const placed = await ok([
      'hold',
      'create',
      'freeze',
      '--workflow',
      'hold-base/standard',
      '--reason',
      'year-end change freeze',
      '--expires-in',
      '336h',
    ]);
    expect(placed).toMatch(/^SLUG\s+INFORCE\s+COVERS\s+BLOCKS\s+OWNER\s+EXPIRES\s+LIFTED\s+REASON\n/);
    expect(placed).toMatch(
      /freeze\s+true\s+workflow hold-base\/standard\s+promote\s+admin\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+year-end change freeze/,
    );
    const refused = await cub(['variant', 'promote', '--change-order', 'hold-base/scale']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "unable to promote to stage 'Production': hold 'freeze' on this workflow is in force (placed by admin, until ",
    );
    expect(refused.stderr).toContain(
      'year-end change freeze; lift it (cub hold lift freeze) or pass it with --force --force-reason',
    );
    const forced = await ok([
      'variant',
      'promote',
      '--change-order',
      'hold-base/scale',
      '--force',
      '--force-reason',
      'security fix, approved by the CAB',
    ]);
    expect(forced).toContain(
      "Promoted change order into stage 'Production': 2 of 2 space(s) (forced past failing gates)",
    );
    const co = JSON.parse(await ok(['changeorder', 'get', '--space', 'hold-base', 'scale', '-o', 'json']));
    expect(co.PromotionOverrides[0]).toMatchObject({
      Reason: 'security fix, approved by the CAB',
      FailedGates: [{ Prerequisite: 'Hold' }],
    });
    expect(await ok(['hold', 'list', '-q'])).toBe('freeze\n');
    const lifted = JSON.parse(await ok(['hold', 'lift', 'freeze', '--note', 'freeze over', '-o', 'json']));
    expect(lifted).toEqual(expect.objectContaining({ Slug: 'freeze', InForce: false, LiftNote: 'freeze over' }));
    expect(await ok(['hold', 'get', 'freeze'])).toMatch(/freeze\s+false\s+workflow/);
    const again = await cub(['hold', 'lift', 'freeze']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^Failed: HTTP 409: hold 'freeze' was lifted already/);
    expect((await cub(['hold', 'create', 'x', '--space', 'hold-base-eu'])).code).toBe(2);
  });
});

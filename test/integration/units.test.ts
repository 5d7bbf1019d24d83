import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
  await env.api.post('/space', { Slug: 'u' });
});
afterAll(async () => env.close());

const twoDocs = `${deploymentYaml('web')}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n    - port: 80\n`;
const fn = (body: Record<string, unknown>) => env.api.post('/space/u/function/invoke', body);
const replicas = async (unit: string, rev?: number) =>
  parse((await env.api.get(`/space/u/unit/${unit}/data${rev ? `?revision=${rev}` : ''}`)).text).spec.replicas;

describe('units and revisions', () => {
  it('creates a unit from multi-document YAML with a first revision that records who, why and what', async () => {
    const r = await env.api.post('/space/u/unit', { Slug: 'web', Data: twoDocs, LastChangeDescription: 'first cut' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      Slug: 'web',
      ToolchainType: 'Kubernetes/YAML',
      HeadRevisionNum: 1,
      SpaceSlug: 'u',
      DataSize: Buffer.byteLength(twoDocs),
    });
    expect(r.body.DataHash).toMatch(/^[0-9a-f]{64}$/);
    const revs = (await env.api.get('/space/u/unit/web/revision')).body;
    expect(revs).toHaveLength(1);
    expect(revs[0]).toMatchObject({
      RevisionNum: 1,
      Source: 'Create',
      Description: 'first cut',
      UserID: env.api.caller!.UserID,
      DataHash: r.body.DataHash,
    });
    const muts = (await env.api.get('/space/u/unit/web/mutation')).body;
    expect(muts[0].Changes.map((c: any) => [c.Resource, c.Op])).toEqual([
      ['Deployment/web', 'Add'],
      ['Service/web', 'Add'],
    ]);
    expect((await env.api.get('/space/u/unit/web/data')).text).toBe(twoDocs);
  });

  it('refuses data that does not parse for its toolchain, writing nothing', async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ Slug: 'bad1', Data: 'kind: [unclosed' }, /not valid YAML/],
      [{ Slug: 'bad2', Data: 'apiVersion: v1\nmetadata:\n  name: x\n' }, /has no 'kind'/],
      [{ Slug: 'bad3', Data: 'kind: ConfigMap\n' }, /has no 'metadata.name'/],
      [{ Slug: 'bad4', ToolchainType: 'AppConfig/JSON', Data: '{"a":' }, /not valid JSON/],
      [{ Slug: 'bad5', ToolchainType: 'Helm/Chart', Data: '' }, /ToolchainType/],
    ];
    for (const [body, msg] of bad) {
      const r = await env.api.post('/space/u/unit', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.Message).toMatch(msg);
      expect((await env.api.get(`/space/u/unit/${body.Slug}`)).status).toBe(404);
    }
  });

  it('stores AppConfig units too', async () => {
    const r = await env.api.post('/space/u/unit', {
      Slug: 'settings',
      ToolchainType: 'AppConfig/Properties',
      Data: 'a=1\nb=2\n',
    });
    expect(r.status).toBe(201);
    const u = await env.api.patch('/space/u/unit/settings', { Version: r.body.Version, Data: 'a=1\nb=3\n' });
    expect(u.body.HeadRevisionNum).toBe(2);
    const diff = (await env.api.get('/space/u/unit/settings/diff?from=1&to=2')).body;
    expect(diff.Changes).toEqual([{ Resource: '', Path: 'b', Op: 'Update', Value: '3' }]);
  });

  it('answers 413 for data too large for an item, and writes nothing', async () => {
    const blob = randomBytes(400_000).toString('base64');
    const r = await env.api.post('/space/u/unit', {
      Slug: 'huge',
      Data: `kind: ConfigMap\nmetadata:\n  name: huge\ndata:\n  blob: ${blob}\n`,
    });
    expect(r.status).toBe(413);
    expect(r.body.Message).toMatch(/more than the 350000/);
    expect((await env.api.get('/space/u/unit/huge')).status).toBe(404);
  });

  it('makes a revision per changed write, none for identical data, and 409 for a stale Version', async () => {
    const u = (await env.api.post('/space/u/unit', { Slug: 'api', Data: deploymentYaml('api') })).body;
    const w1 = await env.api.patch('/space/u/unit/api', {
      Version: u.Version,
      Data: deploymentYaml('api', { replicas: 2 }),
      LastChangeDescription: 'scale up',
    });
    expect(w1.body).toMatchObject({ HeadRevisionNum: 2, LastChangeDescription: 'scale up', Version: 2 });
    const same = await env.api.patch('/space/u/unit/api', {
      Version: w1.body.Version,
      Data: deploymentYaml('api', { replicas: 2 }),
    });
    expect(same.body.HeadRevisionNum).toBe(2);
    const stale = await env.api.patch('/space/u/unit/api', {
      Version: u.Version,
      Data: deploymentYaml('api', { replicas: 5 }),
    });
    expect(stale.status).toBe(409);
    expect(await replicas('api')).toBe(2);
    expect(await replicas('api', 1)).toBe(1);
    const rev2 = (await env.api.get('/space/u/unit/api/revision/2')).body;
    expect(rev2).toMatchObject({ RevisionNum: 2, Source: 'Update', Description: 'scale up' });
    expect(rev2.Data).toBeUndefined();
    expect((await env.api.get('/space/u/unit/api/data?revision=3')).status).toBe(404);
  });

  it('diffs two revisions by path', async () => {
    const d = (await env.api.get('/space/u/unit/api/diff?from=1&to=2')).body;
    expect(d).toMatchObject({
      FromRevisionNum: 1,
      ToRevisionNum: 2,
      Changes: [{ Resource: 'Deployment/api', Path: 'spec.replicas', Op: 'Update', Value: 2 }],
    });
  });
});

describe('functions', () => {
  it('set-replicas writes a revision recording the invocation, and a second identical call writes none', async () => {
    await env.api.post('/space/u/unit', { Slug: 'fn', Data: deploymentYaml('fn') });
    const r = await fn({ FunctionName: 'set-replicas', Arguments: ['3'], UnitIDs: ['fn'], ChangeDescription: 'three' });
    expect(r.status).toBe(200);
    expect(r.body.Results).toEqual([expect.objectContaining({ UnitSlug: 'fn', Changed: true, RevisionNum: 2 })]);
    const again = await fn({ FunctionName: 'set-replicas', Arguments: ['3'], UnitIDs: ['fn'] });
    expect(again.body.Results[0]).toMatchObject({ Changed: false, RevisionNum: 2 });
    const muts = (await env.api.get('/space/u/unit/fn/mutation')).body;
    expect(muts[0]).toMatchObject({
      RevisionNum: 2,
      Source: 'FunctionInvocation',
      FunctionInvocation: { FunctionName: 'set-replicas', Arguments: ['3'] },
    });
    expect((await env.api.get('/space/u/unit/fn/revision/2')).body.Description).toBe('three');
  });

  it('refuses bad arguments with 400 and writes no revision', async () => {
    for (const [name, args, msg] of [
      ['set-replicas', ['lots'], /must be a non-negative integer/],
      ['set-image-reference-by-uri', ['ghcr.io/acme/fn'], /needs <image-reference>/],
      ['no-such-function', [], /unknown function/],
    ] as const) {
      const r = await fn({ FunctionName: name, Arguments: [...args], UnitIDs: ['fn'] });
      expect(r.status).toBe(400);
      expect(r.body.Message).toMatch(msg);
    }
    expect((await env.api.get('/space/u/unit/fn')).body.HeadRevisionNum).toBe(2);
  });

  it('--protect records the written paths on the unit and marks them in the mutation', async () => {
    const r = await fn({
      FunctionName: 'set-env-var',
      Arguments: ['fn', 'TITLE', 'dev'],
      UnitIDs: ['fn'],
      Protect: true,
    });
    expect(r.body.Results[0].Changed).toBe(true);
    const unit = (await env.api.get('/space/u/unit/fn')).body;
    expect(unit.ProtectedPaths).toEqual([
      { Resource: 'Deployment/fn', Path: 'spec.template.spec.containers.?name=fn.env.?name=TITLE.value' },
    ]);
    const muts = (await env.api.get('/space/u/unit/fn/mutation')).body;
    expect(muts[0].Changes).toEqual([
      {
        Resource: 'Deployment/fn',
        Path: 'spec.template.spec.containers.?name=fn.env',
        Op: 'Add',
        Value: [{ name: 'TITLE', value: 'dev' }],
        Protected: true,
      },
    ]);
    const units = (await env.api.get(`/space/u/unit?where=${encodeURIComponent('LEN(ProtectedPaths) > 0')}`)).body;
    expect(units.map((x: any) => x.Slug)).toEqual(['fn']);
  });

  it('selects units with Where, skips other toolchains, and a dry run writes nothing', async () => {
    await env.api.post('/space', { Slug: 'sel' });
    for (const n of ['a1', 'a2', 'b1'])
      await env.api.post('/space/sel/unit', { Slug: n, Data: deploymentYaml(n), Labels: { tier: n[0]! } });
    await env.api.post('/space/sel/unit', { Slug: 'props', ToolchainType: 'AppConfig/Env', Data: 'A=1\n' });
    const dry = await env.api.post('/space/sel/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['4'],
      Where: "Labels.tier = 'a'",
      DryRun: true,
    });
    expect(dry.body.Results.map((x: any) => [x.UnitSlug, x.Changed, x.Changes])).toEqual([
      ['a1', true, [{ Resource: 'Deployment/a1', Path: 'spec.replicas', Op: 'Update', Value: 4 }]],
      ['a2', true, [{ Resource: 'Deployment/a2', Path: 'spec.replicas', Op: 'Update', Value: 4 }]],
    ]);
    expect((await env.api.get('/space/sel/unit/a1')).body.HeadRevisionNum).toBe(1);
    const real = await env.api.post('/space/sel/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['4'],
      Where: "Labels.tier = 'a'",
    });
    expect(real.body.Results.map((x: any) => x.UnitSlug)).toEqual(['a1', 'a2']);
    expect((await env.api.get('/space/sel/unit/b1')).body.HeadRevisionNum).toBe(1);
    const named = await env.api.post('/space/sel/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['4'],
      UnitIDs: ['props'],
    });
    expect(named.status).toBe(400);
    expect(named.body.Message).toMatch(/AppConfig\/Env/);
  });

  it('get-placeholders reads without writing', async () => {
    const r = await fn({ FunctionName: 'get-placeholders', Arguments: [], UnitIDs: ['fn'] });
    expect(r.body.Results[0].Output).toEqual([{ Resource: 'Deployment/fn', Path: 'metadata.namespace' }]);
    await fn({ FunctionName: 'set-namespace', Arguments: ['prod'], UnitIDs: ['fn'] });
    const v = await fn({ FunctionName: 'vet-placeholders', Arguments: [], UnitIDs: ['fn'] });
    expect(v.body.Results[0].Output).toEqual({ Passed: true, Details: [] });
  });

  it('two racing writes on one unit: exactly one lands, the other gets 409, a rerun succeeds, and revision numbers stay contiguous', async () => {
    const u = (await env.api.post('/space/u/unit', { Slug: 'race', Data: deploymentYaml('race') })).body;
    const rs = await Promise.all(
      [2, 3].map((n) =>
        env.api.patch('/space/u/unit/race', { Version: u.Version, Data: deploymentYaml('race', { replicas: n }) }),
      ),
    );
    expect(rs.map((r) => r.status).sort()).toEqual([200, 409]);
    const winner = rs.find((r) => r.status === 200)!;
    expect(await replicas('race')).toBe([2, 3][rs.indexOf(winner)]);
    expect(winner.body.HeadRevisionNum).toBe(2);
    // Function writes racing without a Version read: each lands or gets 409, never a lost or duplicated revision.
    const fs = await Promise.all(
      ['4', '5', '6'].map((n) => fn({ FunctionName: 'set-replicas', Arguments: [n], UnitIDs: ['race'] })),
    );
    for (const r of fs) expect([200, 409]).toContain(r.status);
    const landed = fs.filter((r) => r.status === 200).length;
    expect(landed).toBeGreaterThan(0);
    const retry = await fn({ FunctionName: 'set-replicas', Arguments: ['7'], UnitIDs: ['race'] });
    expect(retry.status).toBe(200);
    const nums = (await env.api.get('/space/u/unit/race/revision')).body.map((r: any) => r.RevisionNum);
    expect(nums).toEqual(Array.from({ length: 3 + landed }, (_, i) => 3 + landed - i));
    expect(await replicas('race')).toBe(7);
  });
});

describe('tags, changesets, filters and targets', () => {
  it('a tag marks one revision per unit; moving it needs Move', async () => {
    const t1 = await env.api.post('/space/u/unit/api/tag', { Tag: 'stable', Revision: 1 });
    expect(t1.body).toMatchObject({ TagSlug: 'stable', RevisionNum: 1 });
    const clash = await env.api.post('/space/u/unit/api/tag', { Tag: 'stable', Revision: 2 });
    expect(clash.status).toBe(409);
    expect(clash.body.Message).toMatch(/already marks revision 1 of unit 'api'; use --move/);
    expect(await replicas('api')).toBe(2);
    expect(parse((await env.api.get('/space/u/unit/api/data?revision=Tag:stable')).text).spec.replicas).toBe(1);
    expect(
      (await env.api.post('/space/u/unit/api/tag', { Tag: 'stable', Revision: 'HeadRevisionNum', Move: true })).body
        .RevisionNum,
    ).toBe(2);
    const tag = (await env.api.get('/space/u/tag/stable')).body;
    expect(tag.Marks).toEqual([expect.objectContaining({ RevisionNum: 2 })]);
    const revs = (await env.api.get('/space/u/unit/api/revision')).body;
    expect(revs.find((r: any) => r.RevisionNum === 2).Tags).toEqual({ [tag.TagID]: '' });
    expect((await env.api.post('/space/u/unit/api/tag', { Tag: 'stable', Revision: 9 })).status).toBe(404);
  });

  it('a changeset locks the units written under it, and closing mints -start/-end tags and unlocks them', async () => {
    await env.api.post('/space', { Slug: 'cs' });
    const u = (await env.api.post('/space/cs/unit', { Slug: 'app', Data: deploymentYaml('app') })).body;
    await env.api.post('/space/cs/unit', { Slug: 'other', Data: deploymentYaml('other') });
    const cs = (await env.api.post('/space/cs/change_set', { Slug: 'release-1', Description: 'release one' })).body;
    expect(cs.State).toBe('Open');
    const w1 = await env.api.post('/space/cs/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['2'],
      UnitIDs: ['app'],
      ChangeSetID: 'release-1',
    });
    expect(w1.status).toBe(200);
    expect((await env.api.get('/space/cs/unit/app')).body.ChangeSetID).toBe(cs.ChangeSetID);
    const outside = await env.api.post('/space/cs/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['9'],
      UnitIDs: ['app'],
    });
    expect(outside.status).toBe(409);
    expect(outside.body.Message).toMatch(/locked by open changeset 'release-1'/);
    await env.api.post('/space/cs/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['3'],
      UnitIDs: ['app'],
      ChangeSetID: 'release-1',
    });
    const closed = await env.api.patch('/space/cs/change_set/release-1', { Version: cs.Version, State: 'Closed' });
    expect(closed.status).toBe(200);
    expect(closed.body.State).toBe('Closed');
    const start = (await env.api.get('/space/cs/tag/release-1-start')).body;
    const end = (await env.api.get('/space/cs/tag/release-1-end')).body;
    expect(start.Marks).toEqual([expect.objectContaining({ UnitID: u.UnitID, RevisionNum: 1 })]);
    expect(end.Marks).toEqual([expect.objectContaining({ UnitID: u.UnitID, RevisionNum: 3 })]);
    expect(closed.body).toMatchObject({ StartTagID: start.TagID, EndTagID: end.TagID });
    expect((await env.api.get('/space/cs/unit/app')).body.ChangeSetID).toBeUndefined();
    expect(
      (await env.api.get('/space/cs/unit/app/data?revision=ChangeSet:release-1')).headers.get('x-revision-num'),
    ).toBe('3');
    expect(
      (await env.api.get('/space/cs/unit/app/data?revision=Before:ChangeSet:release-1')).headers.get('x-revision-num'),
    ).toBe('1');
    expect(
      (
        await env.api.post('/space/cs/function/invoke', {
          FunctionName: 'set-replicas',
          Arguments: ['9'],
          UnitIDs: ['app'],
        })
      ).status,
    ).toBe(200);
    const reuse = await env.api.post('/space/cs/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['8'],
      UnitIDs: ['app'],
      ChangeSetID: 'release-1',
    });
    expect(reuse.status).toBe(409);
    expect(reuse.body.Message).toMatch(/closed/);
  });

  it('filters are checked when written and narrow lists when used', async () => {
    const bad = await env.api.post('/space/u/filter', { Slug: 'bad', From: 'Unit', Where: 'Nope = 1' });
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toMatch(/unknown attribute 'Nope' for Unit/);
    expect((await env.api.post('/space/u/filter', { Slug: 'bad', From: 'Widget', Where: "Slug = 'x'" })).status).toBe(
      400,
    );
    expect(
      (await env.api.post('/space/u/filter', { Slug: 'scaled', From: 'Unit', Where: 'HeadRevisionNum > 1' })).status,
    ).toBe(201);
    const units = (await env.api.get('/space/u/unit?filter=scaled')).body.map((x: any) => x.Slug);
    expect(units).toContain('api');
    expect(units).not.toContain('web');
    const spacesFilter = await env.api.post('/space/u/filter', { Slug: 'only-u', From: 'Space', Where: "Slug = 'u'" });
    expect(spacesFilter.status).toBe(201);
    expect((await env.api.get('/space?filter=u/only-u')).body.map((s: any) => s.Slug)).toEqual(['u']);
    expect((await env.api.get('/space/u/unit?filter=u/only-u')).status).toBe(400);
  });

  it('targets are created and listed, and a unit and a space can point at one', async () => {
    const t = await env.api.post('/space/u/target', { Slug: 'dev-cluster', Facts: { cluster: 'kind-dev' } });
    expect(t.status).toBe(201);
    expect((await env.api.get('/space/u/target')).body.map((x: any) => x.Slug)).toEqual(['dev-cluster']);
    const unit = (await env.api.get('/space/u/unit/web')).body;
    const set = await env.api.patch('/space/u/unit/web', { Version: unit.Version, TargetID: 'dev-cluster' });
    expect(set.body.TargetID).toBe(t.body.TargetID);
    expect(set.body.HeadRevisionNum).toBe(1);
    const sp = (await env.api.get('/space/u')).body;
    const withTarget = await env.api.patch('/space/u', { Version: sp.Version, ReleaseTargetID: 'u/dev-cluster' });
    expect(withTarget.body.ReleaseTargetID).toBe(t.body.TargetID);
    expect(
      (await env.api.patch('/space/u', { Version: withTarget.body.Version, ReleaseTargetID: 'dev-cluster' })).status,
    ).toBe(400);
  });
});

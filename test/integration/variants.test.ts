import { parse, parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import type { StoreOp } from '../../lib/ports/store.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env.close());

const backend = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: backend
  namespace: confighubplaceholder
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: backend
          image: ghcr.io/chat/backend:v1
          env:
            - name: CHAT_TITLE
              value: Cubby Chat
`;
const ns = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: confighubplaceholder\n';
const doc = async (space: string, unit: string, rev?: number) =>
  parseAllDocuments(
    (await env.api.get(`/space/${space}/unit/${unit}/data${rev ? `?revision=${rev}` : ''}`)).text,
  )[0]!.toJS();
const title = (d: any) => d.spec.template.spec.containers[0].env.find((e: any) => e.name === 'CHAT_TITLE').value;
const fn = (space: string, unit: string, name: string, args: string[], extra: Record<string, unknown> = {}) =>
  env.api.post(`/space/${space}/function/invoke`, { FunctionName: name, Arguments: args, UnitIDs: [unit], ...extra });
const head = async (space: string, unit: string) =>
  (await env.api.get(`/space/${space}/unit/${unit}`)).body.HeadRevisionNum;

describe('upload', () => {
  it('creates the component, the labelled base space and one unit per file in one step', async () => {
    const r = await env.api.post('/variant/upload', {
      Component: 'chat',
      Variant: 'base',
      Units: [
        { Slug: 'backend', Data: backend },
        { Slug: 'namespace', Data: ns },
      ],
    });
    expect(r.status).toBe(201);
    expect(r.body.Space).toMatchObject({
      Slug: 'chat-base',
      Labels: { Component: 'chat', Variant: 'base' },
      ComponentID: r.body.Component.ComponentID,
    });
    expect((await env.api.get('/space/chat-base/unit')).body.map((u: any) => u.Slug)).toEqual(['backend', 'namespace']);
    expect(
      (await env.api.get(`/space?where=${encodeURIComponent("Labels.Component = 'chat'")}`)).body.map(
        (s: any) => s.Slug,
      ),
    ).toEqual(['chat-base']);
  });

  it('lands whole or not at all', async () => {
    const bad = await env.api.post('/variant/upload', {
      Component: 'half',
      Variant: 'base',
      Units: [
        { Slug: 'ok', Data: deploymentYaml('ok') },
        { Slug: 'broken', Data: 'kind: [' },
      ],
    });
    expect(bad.status).toBe(400);
    // A failure inside the transaction (the space slug is taken) leaves the new component unwritten too.
    await env.api.post('/space', { Slug: 'taken-base' });
    const clash = await env.api.post('/variant/upload', {
      Component: 'taken',
      Variant: 'base',
      Units: [{ Slug: 'ok', Data: deploymentYaml('ok') }],
    });
    expect(clash.status).toBe(409);
    const components = (await env.api.get('/component')).body.map((c: any) => c.Slug);
    expect(components).not.toContain('half');
    expect(components).not.toContain('taken');
    expect((await env.api.get('/space/half-base')).status).toBe(404);
  });
});

describe('variants, links and upgrade', () => {
  it('variant create clones every unit, links it to its source, fills the namespace and sets labels', async () => {
    await env.api.post('/space', { Slug: 'dev' });
    await env.api.post('/space/dev/target', { Slug: 'target' });
    const r = await env.api.post('/variant', {
      Name: 'dev',
      UpstreamSpaceID: 'chat-base',
      ReleaseTargetID: 'dev/target',
      Namespace: 'chat',
      Stage: 'Development',
    });
    expect(r.status).toBe(201);
    expect(r.body.Space).toMatchObject({
      Slug: 'chat-dev',
      Labels: { Component: 'chat', Variant: 'dev', Stage: 'Development', Namespace: 'chat' },
    });
    const base = (await env.api.get('/space/chat-base')).body;
    expect(r.body.Space.UpstreamSpaceID).toBe(base.SpaceID);
    expect(r.body.Space.ReleaseTargetID).toBeTruthy();
    const unit = (await env.api.get('/space/chat-dev/unit/backend')).body;
    const baseUnit = (await env.api.get('/space/chat-base/unit/backend')).body;
    expect(unit).toMatchObject({
      UpstreamUnitID: baseUnit.UnitID,
      UpstreamSpaceID: base.SpaceID,
      UpstreamRevisionNum: 1,
      HeadRevisionNum: 2,
      TargetID: r.body.Space.ReleaseTargetID,
    });
    expect((await doc('chat-dev', 'backend')).metadata.namespace).toBe('chat');
    expect((await doc('chat-dev', 'namespace')).metadata.name).toBe('chat');
    const byTarget = await env.api.get(`/space/chat-dev/unit?where=${encodeURIComponent("Target.Slug = 'target'")}`);
    expect(byTarget.body.map((u: any) => u.Slug)).toEqual(['backend', 'namespace']);
    const links = (await env.api.get('/space/chat-dev/link')).body;
    expect(links).toHaveLength(2);
    expect(links.find((l: any) => l.FromUnitID === unit.UnitID)).toMatchObject({
      UpdateType: 'UpgradeUnit',
      ToUnitID: baseUnit.UnitID,
      UpstreamLastMergedRevisionNum: 1,
      DownstreamLastMergedRevisionNum: 1,
      Stale: false,
    });
    const staged = await env.api.post('/variant', {
      Name: 'staging',
      UpstreamSpaceID: 'chat-base',
      Stage: 'Staging',
      Namespace: 'chat',
    });
    expect(staged.status).toBe(201);
    expect(
      (await env.api.get(`/space?where=${encodeURIComponent("Labels.Stage = 'Staging'")}`)).body.map(
        (s: any) => s.Slug,
      ),
    ).toEqual(['chat-staging']);
  });

  it('shows a unit behind its upstream, previews the promotion without writing, then merges it', async () => {
    await fn('chat-base', 'backend', 'set-replicas', ['2'], { ChangeDescription: 'two replicas' });
    const behind = (
      await env.api.get(
        `/space/chat-dev/unit?where=${encodeURIComponent('UpstreamRevisionNum < UpstreamUnit.HeadRevisionNum')}`,
      )
    ).body;
    expect(behind.map((u: any) => u.Slug)).toEqual(['backend']);
    expect((await env.api.get('/space/chat-dev/link')).body.filter((l: any) => l.Stale)).toHaveLength(1);
    const dry = await env.api.post('/promote', { Space: 'chat-dev', DryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.Units.find((u: any) => u.UnitSlug === 'backend')).toMatchObject({
      Action: 'Upgrade',
      Changes: [{ Resource: 'Deployment/backend', Path: 'spec.replicas', Op: 'Update', Value: 2 }],
    });
    expect(await head('chat-dev', 'backend')).toBe(2);
    const real = await env.api.post('/promote', { Space: 'chat-dev' });
    expect(real.body.Units.find((u: any) => u.UnitSlug === 'backend')).toMatchObject({
      Action: 'Upgrade',
      RevisionNums: [3],
    });
    const d = await doc('chat-dev', 'backend');
    expect([d.spec.replicas, d.metadata.namespace]).toEqual([2, 'chat']);
    expect((await env.api.get('/space/chat-dev/unit/backend')).body.UpstreamRevisionNum).toBe(2);
    const devBackend = (await env.api.get('/space/chat-dev/unit/backend')).body;
    const link = (await env.api.get('/space/chat-dev/link')).body.find((l: any) => l.FromUnitID === devBackend.UnitID);
    expect(link).toMatchObject({ UpstreamLastMergedRevisionNum: 2, DownstreamLastMergedRevisionNum: 3, Stale: false });
    const rev3 = (await env.api.get('/space/chat-dev/unit/backend/mutation')).body[0];
    expect(rev3).toMatchObject({
      RevisionNum: 3,
      Source: 'UpgradeUnit',
      MergeBaseRevisionNum: 1,
      MergeEndRevisionNum: 2,
      MergeSourceID: (await env.api.get('/space/chat-base/unit/backend')).body.UnitID,
    });
    expect((await env.api.get('/space/chat-dev/unit/backend/revision/3')).body.Description).toBe('two replicas');
    expect(
      (await env.api.post('/promote', { Space: 'chat-dev' })).body.Units.every((u: any) => u.Action === 'Unchanged'),
    ).toBe(true);
  });

  it('keeps a protected path, records the upstream value as a conflict, and apply/dismiss resolve it', async () => {
    expect(
      (await fn('chat-dev', 'backend', 'set-env-var', ['backend', 'CHAT_TITLE', 'Cubby Chat (dev)'], { Protect: true }))
        .status,
    ).toBe(200);
    await fn('chat-base', 'backend', 'set-env-var', ['backend', 'CHAT_TITLE', 'Cubby Chat 2.0']);
    await fn('chat-base', 'backend', 'set-replicas', ['3']);
    const r = await env.api.post('/space/chat-dev/unit/backend/upgrade', {});
    expect(r.status).toBe(200);
    expect(r.body.RevisionNums).toEqual([5]);
    const d = await doc('chat-dev', 'backend');
    expect([d.spec.replicas, title(d)]).toEqual([3, 'Cubby Chat (dev)']);
    const unit = (await env.api.get('/space/chat-dev/unit/backend')).body;
    expect(unit.Conflicts).toEqual([
      expect.objectContaining({
        Path: 'spec.template.spec.containers.?name=backend.env.?name=CHAT_TITLE.value',
        UpstreamValue: 'Cubby Chat 2.0',
        DownstreamValue: 'Cubby Chat (dev)',
        UpstreamRevisionNum: 3,
      }),
    ]);
    const preview = await env.api.post('/space/chat-dev/unit/backend/conflicts', { Action: 'Apply', DryRun: true });
    expect(preview.body.Changes).toEqual([
      {
        Resource: 'Deployment/backend',
        Path: 'spec.template.spec.containers.?name=backend.env.?name=CHAT_TITLE.value',
        Op: 'Update',
        Value: 'Cubby Chat 2.0',
      },
    ]);
    expect(await head('chat-dev', 'backend')).toBe(5);
    const dismissed = await env.api.post('/space/chat-dev/unit/backend/conflicts', { Action: 'Dismiss' });
    expect(dismissed.body.unit.Conflicts).toEqual([]);
    const after = (await env.api.get('/space/chat-dev/unit/backend')).body;
    expect(after.HeadRevisionNum).toBe(5);
    expect(after.ProtectedPaths).toEqual(unit.ProtectedPaths);
    expect(title(await doc('chat-dev', 'backend'))).toBe('Cubby Chat (dev)');
    expect((await env.api.post('/space/chat-dev/unit/backend/conflicts', { Action: 'Dismiss' })).status).toBe(409);
    // The staging variant never protected the title: it takes both changes, one revision per upstream revision.
    const s = await env.api.post('/space/chat-staging/unit/backend/upgrade', {});
    expect(s.body.RevisionNums).toEqual([3, 4, 5]);
    const sd = await doc('chat-staging', 'backend');
    expect([sd.spec.replicas, title(sd)]).toEqual([3, 'Cubby Chat 2.0']);
  });

  it('apply takes the upstream value of a conflict as a new revision', async () => {
    await fn('chat-base', 'backend', 'set-env-var', ['backend', 'CHAT_TITLE', 'Cubby Chat 3.0']);
    await env.api.post('/space/chat-dev/unit/backend/upgrade', {});
    const applied = await env.api.post('/space/chat-dev/unit/backend/conflicts', { Action: 'Apply' });
    expect(applied.status).toBe(200);
    expect(title(await doc('chat-dev', 'backend'))).toBe('Cubby Chat 3.0');
    expect((await env.api.get('/space/chat-dev/unit/backend')).body.Conflicts).toEqual([]);
  });

  it('squash merges a range as one revision; merge-source takes an explicit range', async () => {
    await env.api.post('/variant', { Name: 'sq', UpstreamSpaceID: 'chat-base', Slug: 'chat-sq' });
    await fn('chat-base', 'backend', 'set-replicas', ['4']);
    await fn('chat-base', 'backend', 'set-replicas', ['5']);
    const h = await head('chat-sq', 'backend');
    const r = await env.api.post('/space/chat-sq/unit/backend/upgrade', { Squash: true });
    expect(r.body.RevisionNums).toEqual([h + 1]);
    expect((await doc('chat-sq', 'backend')).spec.replicas).toBe(5);
    const baseHead = await head('chat-base', 'backend');
    const explicit = await env.api.post('/space/chat-sq/unit/backend/upgrade', {
      MergeSourceID: 'chat-base/backend',
      MergeBaseRevisionNum: baseHead - 1,
      MergeEndRevisionNum: baseHead - 1,
      DryRun: true,
    });
    expect(explicit.body.Action).toBe('Unchanged');
    const bad = await env.api.post('/space/chat-sq/unit/backend/upgrade', {
      MergeSourceID: 'chat-base/backend',
      MergeBaseRevisionNum: 3,
      MergeEndRevisionNum: 99,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toMatch(/outside unit 'backend'/);
  });

  it('a MergeUnits link merges from a unit that is not the clone source', async () => {
    await env.api.post('/space', { Slug: 'shared' });
    await env.api.post('/space/shared/unit', { Slug: 'defaults', Data: deploymentYaml('backend', { replicas: 1 }) });
    await env.api.post('/space', { Slug: 'team' });
    await env.api.post('/space/team/unit', {
      Slug: 'app',
      Data: deploymentYaml('backend', { replicas: 1, namespace: 'team' }),
    });
    const l = await env.api.post('/space/team/link', {
      FromUnitID: 'app',
      ToUnitID: 'shared/defaults',
      UpdateType: 'MergeUnits',
    });
    expect(l.status).toBe(201);
    expect(l.body).toMatchObject({ UpdateType: 'MergeUnits', UpstreamLastMergedRevisionNum: 0, Stale: true });
    // Start the cursor at what the two already share, then merge only what changed since.
    await env.api.post('/space/team/unit/app/upgrade', {
      MergeSourceID: 'shared/defaults',
      MergeBaseRevisionNum: 1,
      MergeEndRevisionNum: 1,
    });
    await env.api.post('/space/shared/function/invoke', {
      FunctionName: 'set-replicas',
      Arguments: ['6'],
      UnitIDs: ['defaults'],
    });
    const r = await env.api.post('/space/team/unit/app/upgrade', {
      MergeSourceID: 'shared/defaults',
      MergeBaseRevisionNum: 1,
    });
    expect(r.body).toMatchObject({ Action: 'Upgrade', RevisionNums: [2] });
    const d = await doc('team', 'app');
    expect([d.spec.replicas, d.metadata.namespace]).toEqual([6, 'team']);
    expect((await env.api.get('/space/team/link')).body[0]).toMatchObject({
      UpstreamLastMergedRevisionNum: 2,
      DownstreamLastMergedRevisionNum: 2,
      Stale: false,
    });
    const bad = await env.api.post('/space/team/link', {
      FromUnitID: 'app',
      ToUnitID: 'shared/defaults',
      UpdateType: 'UpgradeUnit',
      Protect: true,
    });
    expect(bad.status).toBe(400);
    const tp = await env.api.post('/space/team/link', {
      FromUnitID: 'app',
      ToUnitID: 'shared/defaults',
      UpdateType: 'TransformPaths',
    });
    expect(tp.body.Message).toMatch(/needs UpstreamPaths and DownstreamSetters/);
  });

  it('promote clones units the upstream gained, with their links', async () => {
    await env.api.post('/space/chat-base/unit', { Slug: 'frontend', Data: deploymentYaml('frontend') });
    const r = await env.api.post('/promote', { Space: 'chat-dev' });
    expect(r.body.Units.find((u: any) => u.UnitSlug === 'frontend')).toMatchObject({ Action: 'Clone' });
    expect((await doc('chat-dev', 'frontend')).metadata.namespace).toBe('chat');
    expect((await env.api.get('/space/chat-dev/link')).body.map((l: any) => l.Slug)).toContain('frontend-upstream');
  });

  it('restore writes a new revision with old content, and revert takes one range out', async () => {
    await env.api.post('/space', { Slug: 'hist' });
    await env.api.post('/space/hist/unit', { Slug: 'app', Data: deploymentYaml('app') });
    await fn('hist', 'app', 'set-replicas', ['2']); // rev 2
    await fn('hist', 'app', 'set-namespace', ['prod']); // rev 3
    await fn('hist', 'app', 'set-replicas', ['3']); // rev 4
    const rv = await env.api.post('/space/hist/unit/app/revert', { Range: '3' });
    expect(rv.body.HeadRevisionNum).toBe(5);
    const d = await doc('hist', 'app');
    expect([d.spec.replicas, d.metadata.namespace]).toEqual([3, 'confighubplaceholder']);
    await env.api.post('/space/hist/unit/app/tag', { Tag: 'good', Revision: 2 });
    const rs = await env.api.post('/space/hist/unit/app/restore', { Revision: 'Tag:good' });
    expect(rs.body).toMatchObject({ HeadRevisionNum: 6, RestoredRevisionNum: 2, Changed: true });
    expect((await doc('hist', 'app')).spec.replicas).toBe(2);
    expect((await env.api.get('/space/hist/unit/app/mutation')).body[0]).toMatchObject({
      Source: 'Restore',
      RestoredRevisionNum: 2,
    });
    expect(
      (await env.api.post('/space/hist/unit/app/restore', { Revision: 'Before:Tag:good' })).body.RestoredRevisionNum,
    ).toBe(1);
    expect((await env.api.post('/space/hist/unit/app/revert', { Range: '5-2' })).status).toBe(400);
  });

  it('two merges racing on one unit: exactly one lands, the other gets 409, a rerun succeeds; no revision number skipped', async () => {
    await env.api.post('/variant', { Name: 'race', UpstreamSpaceID: 'chat-base', Slug: 'chat-race' });
    await fn('chat-base', 'backend', 'set-replicas', ['8']);
    const h = await head('chat-race', 'backend');
    // The two race for certain, however busy the machine: the first write of the Unit waits until the second
    // has read it too and comes to write (or, should it never come, for 20 s), then both go at once.
    const unitId = (await env.api.get('/space/chat-race/unit/backend')).body.UnitID as string;
    const store = env.deps.store;
    let first: (() => void) | undefined;
    env.deps.store = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'transact') return Reflect.get(target, prop, receiver);
        return async (ops: StoreOp[]) => {
          if (
            ops.some((o) => o.kind === 'Unit' && o.op === 'update' && (o.item as { UnitID?: string }).UnitID === unitId)
          ) {
            if (!first) await new Promise<void>((go) => ((first = go), setTimeout(go, 20_000)));
            else first();
          }
          return target.transact(ops);
        };
      },
    });
    const rs = await Promise.all([1, 2].map(() => env.api.post('/space/chat-race/unit/backend/upgrade', {}))).finally(
      () => {
        env.deps.store = store;
      },
    );
    // The writes went through the barrier.
    expect(first).toBeDefined();
    const statuses = rs.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409]);
    expect(rs.find((r) => r.status === 409)!.body.Message).toMatch(/changed by someone else|another write/);
    const again = await env.api.post('/space/chat-race/unit/backend/upgrade', {});
    expect(again.status).toBe(200);
    expect(again.body.Action).toBe('Unchanged');
    const nums = (await env.api.get('/space/chat-race/unit/backend/revision')).body.map((r: any) => r.RevisionNum);
    expect(nums).toEqual(Array.from({ length: h + 1 }, (_, i) => h + 1 - i));
    expect((await doc('chat-race', 'backend')).spec.replicas).toBe(8);
  });

  it('delete gates refuse a space delete, naming the units; recursive-force deletes past them; links into deleted units are removed', async () => {
    await env.api.post('/variant', {
      Name: 'prod',
      UpstreamSpaceID: 'chat-base',
      Environment: 'Prod',
      UnitDeleteGates: ['critical'],
    });
    const refused = await env.api.del('/space/chat-prod?recursive=true');
    expect(refused.status).toBe(409);
    expect(refused.body.Message).toMatch(
      /delete gates: backend \(critical\), frontend \(critical\), namespace \(critical\)/,
    );
    expect((await env.api.del('/space/chat-prod/unit/backend')).status).toBe(409);
    const forced = await env.api.del('/space/chat-prod?recursive=true&force=true');
    expect(forced.status).toBe(200);
    expect((await env.api.get('/space/chat-prod')).status).toBe(404);
    const base = await env.api.del('/space/chat-base?recursive=true');
    expect(base.status).toBe(200);
    expect(base.body.RemovedLinks.length).toBeGreaterThan(0);
    const devUnit = (await env.api.get('/space/chat-dev/unit/backend')).body;
    expect(devUnit.UpstreamUnitID).toBeUndefined();
    expect((await env.api.get('/space/chat-dev/link')).body).toEqual([]);
    expect(parse((await env.api.get('/space/chat-dev/unit/backend/data')).text).metadata.namespace).toBe('chat');
  });
});

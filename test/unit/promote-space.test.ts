import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { createChangeOrder } from '../../lib/changes/create.ts';
import { marksOf, withPublishMarks } from '../../lib/changes/marks.ts';
import type { ChangeDeps } from '../../lib/changes/ports.ts';
import type { Caller, ChangeOrder, Link, Space, Unit } from '../../lib/model/entities.ts';
import type { Deps } from '../../lib/ports/deps.ts';
import { dataAt, writeData } from '../../lib/variants/revisions.ts';
import { createVariant, uploadVariant } from '../../lib/variants/variant.ts';
import { MemoryStore } from '../support/memory-store.ts';
import { promoteContext, readAhead } from '../../lib/changes/promote/context.ts';
import { promoteSpace } from '../../lib/changes/promote/space.ts';

const deployment = readFileSync(new URL('../fixtures/acme/deployment.yaml', import.meta.url), 'utf8');
const config = readFileSync(new URL('../fixtures/acme/config.yaml', import.meta.url), 'utf8');
const caller: Caller = { OrganizationID: '0a000000-0000-4000-8000-000000000001', UserID: 'user-1' };

/** A fleet in memory: acme-base with two Units, acme-dev cloned from it, the base's deployment bumped to v452, and a ChangeOrder naming that. */
async function fleet(o: { configToo?: boolean } = {}) {
  const store = new MemoryStore();
  let n = 0;
  const deps: Deps & ChangeDeps = {
    store,
    bus: { put: async () => {} },
    now: () => new Date('2026-12-01T00:00:00Z'),
    newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    newToken: () => 'token',
  };
  const { Space: base } = await uploadVariant(deps, caller, {
    Component: 'acme',
    Variant: 'base',
    Units: [
      { Slug: 'config', Data: config, ToolchainType: 'Kubernetes/YAML' },
      { Slug: 'deployment', Data: deployment, ToolchainType: 'Kubernetes/YAML' },
    ],
  });
  const { Space: dev } = await createVariant(deps, caller, { Name: 'dev', UpstreamSpaceID: 'acme-base', Stage: 'dev' });
  const unitOf = async (space: Space, slug: string) =>
    (await store.listUnits(space.SpaceID)).find((u) => u.Slug === slug)!;
  const baseDeployment = await unitOf(base, 'deployment');
  await writeData(deps, caller, base, baseDeployment, deployment.replace(':v451', ':v452'), {
    source: 'Update',
    description: 'v452',
  });
  if (o.configToo) {
    const baseConfig = await unitOf(base, 'config');
    await writeData(deps, caller, base, baseConfig, config + '  CACHE: on\n', {
      source: 'Update',
      description: 'tuned',
    });
  }
  const { co } = await createChangeOrder(deps, caller, base, {
    Slug: 'release-v452',
    UpdateType: 'UpgradeUnit',
    PriorRevisions: 'Include',
  });
  return { store, deps, base, dev, co, unitOf };
}

describe('promoting one Space over an in-memory store', () => {
  let f: Awaited<ReturnType<typeof fleet>>;
  beforeEach(async () => {
    f = await fleet();
  });

  const progressOf = async (co: ChangeOrder) =>
    (await f.store.progressOf(co.ChangeOrderID)).map((p) => p.SpaceID).sort();

  it('merges the change into the Unit it covers, marks the unchanged one, and records the Space as having taken it', async () => {
    const r = await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, {}), f.dev);
    expect(r.Action).toBe('Promote');
    expect(r.Units.map((u) => [u.UnitSlug, u.Action, u.Reason ?? '', u.RevisionNums ?? []])).toEqual([
      ['config', 'Mark', 'NoChange', []],
      ['deployment', 'Upgrade', '', [2]],
    ]);
    const dep = await f.unitOf(f.dev, 'deployment');
    expect(await dataAt(f.deps, dep, dep.HeadRevisionNum)).toContain('ghcr.io/acme/acme:v452');
    expect(
      (await f.store.marksOfTag(f.co.EndTagID))
        .filter((m) => m.SpaceID === f.dev.SpaceID)
        .map((m) => [m.UnitID === dep.UnitID ? 'deployment' : 'config', m.RevisionNum])
        .sort(),
    ).toEqual([
      ['config', 1],
      ['deployment', 2],
    ]);
    expect(await progressOf(f.co)).toEqual([f.base.SpaceID, f.dev.SpaceID].sort());
  });

  it('writes a Unit’s marks in the same transaction as the revision that carries the change, and the whole Space in one', async () => {
    const before = f.store.transactions.length;
    await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, {}), f.dev);
    const dep = await f.unitOf(f.dev, 'deployment');
    const tx = f.store.transactions.find((ops) =>
      ops.some(
        (o) =>
          o.kind === 'Revision' &&
          (o.item as { UnitID: string }).UnitID === dep.UnitID &&
          (o.item as { RevisionNum: number }).RevisionNum === 2,
      ),
    )!;
    const marksOf = (unitId: string) =>
      tx
        .filter((o) => o.kind === 'Mark' && (o.item as { UnitID: string }).UnitID === unitId)
        .map((o) => (o.item as { TagID: string }).TagID)
        .sort();
    expect(marksOf(dep.UnitID)).toEqual([f.co.EndTagID, f.co.PublishTagID, f.co.StartTagID].sort());
    expect(tx.some((o) => o.kind === 'Link' && o.op === 'update')).toBe(true);
    // The unchanged Unit's marks and the Space's progress come after the merge, in the same transaction: one for the Space.
    expect(f.store.transactions.length).toBe(before + 1);
    expect(marksOf((await f.unitOf(f.dev, 'config')).UnitID)).toEqual(
      [f.co.EndTagID, f.co.PublishTagID, f.co.StartTagID].sort(),
    );
    expect(tx.map((o) => o.kind).slice(-1)).toEqual(['Progress']);
  });

  it('writes the Space’s Units together, yet a Unit refused there fails alone: the others land, its marks and the progress wait for a rerun', async () => {
    const g = await fleet({ configToo: true });
    const ctx = await promoteContext(g.deps, g.co, {});
    const { Space: dev2 } = await createVariant(g.deps, caller, {
      Name: 'dev2',
      UpstreamSpaceID: 'acme-base',
      Stage: 'dev',
    });
    // Starting dev2 reads dev's Units too (a group is read together).
    const reads = readAhead(g.deps, ctx, [dev2, g.dev]);
    await reads(dev2);
    // dev's config is edited after the promotion read it: its write is refused, deployment's is not.
    const cfg = await g.unitOf(g.dev, 'config');
    await writeData(g.deps, caller, g.dev, cfg, config.replace('LOG_LEVEL: info', 'LOG_LEVEL: debug'), {
      source: 'Update',
    });
    const before = g.store.transactions.length;
    const r = await promoteSpace(g.deps, caller, ctx, g.dev, reads);
    expect(r.Action).toBe('Failed');
    expect(r.Units.map((u) => [u.UnitSlug, u.Action, u.RevisionNums ?? []])).toEqual([
      ['config', 'Failed', []],
      ['deployment', 'Upgrade', [2]],
    ]);
    expect(r.Error).toBe(
      'config: the Unit was changed by someone else since it was read (its Version no longer matches); read it again and retry',
    );
    // One transaction landed: deployment's revision, head, cursor and marks; nothing of config's, no progress.
    expect(g.store.transactions.length).toBe(before + 1);
    const landed = g.store.transactions.at(-1)!;
    const dep = await g.unitOf(g.dev, 'deployment');
    expect(
      new Set(
        landed.map(
          (o) =>
            (o.item as { UnitID?: string; FromUnitID?: string }).UnitID ??
            (o.item as { FromUnitID?: string }).FromUnitID,
        ),
      ),
    ).toEqual(new Set([dep.UnitID]));
    expect(
      (await g.store.marksOfTag(g.co.EndTagID)).filter((m) => m.SpaceID === g.dev.SpaceID).map((m) => m.UnitID),
    ).toEqual([dep.UnitID]);
    expect((await g.store.progressOf(g.co.ChangeOrderID)).map((p) => p.SpaceID)).toEqual([g.base.SpaceID]);
    expect((await g.unitOf(g.dev, 'config')).HeadRevisionNum).toBe(2);
    // A rerun merges config into the edit and records the Space.
    const again = await promoteSpace(g.deps, caller, await promoteContext(g.deps, g.co, {}), g.dev);
    expect(again.Action).toBe('Promote');
    expect(again.Units.map((u) => [u.UnitSlug, u.Action])).toEqual([
      ['config', 'Upgrade'],
      ['deployment', 'Unchanged'],
    ]);
    const merged = await g.unitOf(g.dev, 'config');
    expect(await dataAt(g.deps, merged, merged.HeadRevisionNum)).toMatch(/LOG_LEVEL: debug\n {2}CACHE: on/);
    expect((await g.store.progressOf(g.co.ChangeOrderID)).map((p) => p.SpaceID).sort()).toEqual(
      [g.base.SpaceID, g.dev.SpaceID].sort(),
    );
  });

  it('writes nothing on a dry run, and says what it would do', async () => {
    const before = f.store.transactions.length;
    const r = await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, { dryRun: true }), f.dev);
    expect(r.Units.find((u) => u.UnitSlug === 'deployment')?.Changes).toEqual([
      expect.objectContaining({ Path: expect.stringContaining('image'), Value: 'ghcr.io/acme/acme:v452' }),
    ]);
    expect(f.store.transactions.length).toBe(before);
    expect(await progressOf(f.co)).toEqual([f.base.SpaceID]);
  });

  it('takes nothing twice: a rerun finds every Unit carrying the change', async () => {
    await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, {}), f.dev);
    const again = await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, {}), f.dev);
    expect(again.Units.map((u) => [u.UnitSlug, u.Action, u.Reason])).toEqual([
      ['config', 'Unchanged', 'AlreadyTaken'],
      ['deployment', 'Unchanged', 'AlreadyTaken'],
    ]);
    expect((await f.unitOf(f.dev, 'deployment')).HeadRevisionNum).toBe(2);
  });

  it('fails a Space whose Unit merged past the change’s start, and records nothing for it', async () => {
    // The base moves on and dev takes that by hand: its cursor is now past where the change starts.
    const dep: Unit = await f.unitOf(f.base, 'deployment');
    await writeData(f.deps, caller, f.base, dep, deployment.replace(':v451', ':v453'), { source: 'Update' });
    const devDep = await f.unitOf(f.dev, 'deployment');
    const devLink = (await f.store.listInSpace<Link>('Link', f.dev.SpaceID)).find(
      (l) => l.FromUnitID === devDep.UnitID,
    )!;
    await f.store.transact([
      {
        op: 'update',
        kind: 'Link',
        item: { ...devLink, UpstreamLastMergedRevisionNum: 3, Version: devLink.Version + 1 },
        expectedVersion: devLink.Version,
      },
    ]);
    const r = await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, {}), f.dev);
    expect(r.Action).toBe('Failed');
    expect(r.Error).toMatch(
      /^deployment: unit 'deployment' has already merged past the change order's start \(revision 1 of 'deployment'\): it took revisions 2\.\.3, past the change's end \(revision 2\), so it has the change and more; take it out of the change order's scope \(cub changeorder update --space \S+ \S+ --remove-space \S+\)$/,
    );
    expect(await progressOf(f.co)).toEqual([f.base.SpaceID]);
  });

  it('reads ahead: the Spaces of a group are listed together and their heads batched; an edit after the read is a conflict, never overwritten', async () => {
    const { Space: dev2 } = await createVariant(f.deps, caller, {
      Name: 'dev2',
      UpstreamSpaceID: 'acme-base',
      Stage: 'dev',
    });
    const ctx = await promoteContext(f.deps, f.co, {});
    const batches: number[] = [];
    const getRevisions = f.store.getRevisions.bind(f.store);
    f.store.getRevisions = async (keys) => (batches.push(keys.length), getRevisions(keys));
    const reads = readAhead(f.deps, ctx, [dev2, f.dev]);
    // Starting dev2 reads dev too: both Spaces' Units' heads in one batch.
    expect((await reads(dev2)).units.map((u) => u.Slug).sort()).toEqual(['config', 'deployment']);
    expect(batches).toEqual([4]);
    // dev's deployment is edited after the read: its promotion must not write over that edit.
    const dep = await f.unitOf(f.dev, 'deployment');
    await writeData(f.deps, caller, f.dev, dep, deployment.replace('replicas: 1', 'replicas: 7'), { source: 'Update' });
    const stale = await promoteSpace(f.deps, caller, ctx, f.dev, reads);
    expect(stale.Action).toBe('Failed');
    expect(stale.Error).toMatch(/^deployment: /);
    const edited = await f.unitOf(f.dev, 'deployment');
    expect(edited.HeadRevisionNum).toBe(2);
    expect(await progressOf(f.co)).toEqual([f.base.SpaceID]);
    // Promoted again, it merges into the edit.
    const again = await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, {}), f.dev);
    expect(again.Action).toBe('Promote');
    const after = await f.unitOf(f.dev, 'deployment');
    const data = await dataAt(f.deps, after, after.HeadRevisionNum);
    expect(data).toContain('ghcr.io/acme/acme:v452');
    expect(data).toContain('replicas: 7');
    // A Space not in the list is read alone.
    expect((await reads(f.base)).units).toHaveLength(2);
  });

  it('reads one group ahead: when a group’s first Space starts, the next group is read once this one has been, each Space once', async () => {
    const ctx = await promoteContext(f.deps, f.co, {});
    const { Space: dev2 } = await createVariant(f.deps, caller, {
      Name: 'dev2',
      UpstreamSpaceID: 'acme-base',
      Stage: 'dev',
    });
    const { Space: dev3 } = await createVariant(f.deps, caller, {
      Name: 'dev3',
      UpstreamSpaceID: 'acme-base',
      Stage: 'dev',
    });
    const listed: string[] = [];
    const listUnits = f.store.listUnits.bind(f.store);
    f.store.listUnits = async (spaceId) => (listed.push(spaceId), listUnits(spaceId));
    const settle = () => new Promise((r) => setImmediate(r));
    // Groups of one Space: starting dev reads dev, then dev2 ahead of it.
    const reads = readAhead(f.deps, ctx, [f.dev, dev2, dev3], 1);
    expect((await reads(f.dev)).units).toHaveLength(2);
    await settle();
    expect(listed).toEqual([f.dev.SpaceID, dev2.SpaceID]);
    // Starting dev2 finds its read done and reads dev3 ahead; starting dev3 reads nothing more.
    expect((await reads(dev2)).units).toHaveLength(2);
    await settle();
    expect(listed).toEqual([f.dev.SpaceID, dev2.SpaceID, dev3.SpaceID]);
    expect((await reads(dev3)).units).toHaveLength(2);
    await settle();
    expect(listed).toHaveLength(3);
  });

  it('reads ahead Space by Space: a failed read fails its own Space only, and leaves nothing unhandled', async () => {
    const ctx = await promoteContext(f.deps, f.co, {});
    const { Space: dev2 } = await createVariant(f.deps, caller, {
      Name: 'dev2',
      UpstreamSpaceID: 'acme-base',
      Stage: 'dev',
    });
    const { Space: dev3 } = await createVariant(f.deps, caller, {
      Name: 'dev3',
      UpstreamSpaceID: 'acme-base',
      Stage: 'dev',
    });
    const listUnits = f.store.listUnits.bind(f.store);
    f.store.listUnits = async (spaceId) => {
      if (spaceId === dev2.SpaceID || spaceId === dev3.SpaceID) throw new Error('the database went away');
      return listUnits(spaceId);
    };
    const reads = readAhead(f.deps, ctx, [f.dev, dev2, dev3]);
    expect((await reads(f.dev)).units).toHaveLength(2);
    await expect(reads(dev2)).rejects.toThrow('the database went away');
    // dev3's read failed too and is never asked for: nothing unhandled is left behind (vitest fails the run on one).
    await new Promise((r) => setTimeout(r, 10));
  });

  it('leaves the publish marks unread when asked, refuses to answer from them, and reads them when a gate needs them', async () => {
    await promoteSpace(f.deps, caller, await promoteContext(f.deps, f.co, {}), f.dev);
    const partial = await marksOf(f.deps, f.co, { publish: false });
    expect(partial.end.size).toBe(4);
    expect(() => partial.publish.get('x')).toThrow("the change order's publish marks were not read");
    expect(() => [...partial.publish.values()]).toThrow("the change order's publish marks were not read");
    const full = await withPublishMarks(f.deps, f.co, partial);
    expect([...full.publish.values()].map((m) => m.SpaceID).sort()).toEqual(
      [f.base.SpaceID, f.base.SpaceID, f.dev.SpaceID, f.dev.SpaceID].sort(),
    );
    expect(await withPublishMarks(f.deps, f.co, full)).toBe(full);
  });
});

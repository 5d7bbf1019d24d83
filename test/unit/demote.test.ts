import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createChangeOrder } from '../../lib/changes/create.ts';
import { demote, type DemoteResult } from '../../lib/changes/demote.ts';
import type { ChangeDeps } from '../../lib/changes/ports.ts';
import type { Caller, ChangeOrder } from '../../lib/model/entities.ts';
import { Conflict } from '../../lib/model/errors.ts';
import type { Deps } from '../../lib/ports/deps.ts';
import type { StoreOp } from '../../lib/ports/store.ts';
import { createUnit, dataAt, writeData } from '../../lib/variants/revisions.ts';
import { createVariant, uploadVariant } from '../../lib/variants/variant.ts';
import { MemoryStore } from '../support/memory-store.ts';
import { promoteContext } from '../../lib/changes/promote/context.ts';
import { promoteSpace } from '../../lib/changes/promote/space.ts';

const deployment = readFileSync(new URL('../fixtures/acme/deployment.yaml', import.meta.url), 'utf8');
const config = readFileSync(new URL('../fixtures/acme/config.yaml', import.meta.url), 'utf8');
const caller: Caller = { OrganizationID: '0a000000-0000-4000-8000-000000000001', UserID: 'user-1' };
const EXTRA = 28;

/** acme-base with 30 Units, acme-dev cloned from it, v452 in the base's deployment promoted into dev, and the ChangeOrder aborted. */
async function fleet() {
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
    Units: [{ Slug: 'deployment', Data: deployment, ToolchainType: 'Kubernetes/YAML' }],
  });
  for (let i = 0; i < EXTRA; i++)
    await createUnit(deps, caller, base, {
      Slug: `config-${String(i).padStart(2, '0')}`,
      Data: config,
      ToolchainType: 'Kubernetes/YAML',
    });
  await createUnit(deps, caller, base, { Slug: 'zz-last', Data: config, ToolchainType: 'Kubernetes/YAML' });
  const { Space: dev } = await createVariant(deps, caller, { Name: 'dev', UpstreamSpaceID: 'acme-base', Stage: 'dev' });
  const unitOf = async (slug: string) => (await store.listUnits(dev.SpaceID)).find((u) => u.Slug === slug)!;
  const baseDeployment = (await store.listUnits(base.SpaceID)).find((u) => u.Slug === 'deployment')!;
  await writeData(deps, caller, base, baseDeployment, deployment.replace(':v451', ':v452'), {
    source: 'Update',
    description: 'v452',
  });
  const { co } = await createChangeOrder(deps, caller, base, {
    Slug: 'release-v452',
    UpdateType: 'UpgradeUnit',
    PriorRevisions: 'Include',
  });
  await promoteSpace(deps, caller, await promoteContext(deps, co, {}), dev);
  const aborted = async (): Promise<ChangeOrder> => {
    const cur = (await store.getInSpace<ChangeOrder>('ChangeOrder', base.SpaceID, co.ChangeOrderID))!;
    if (cur.AbortedReason) return cur;
    const next = { ...cur, AbortedReason: 'superseded by v453', Version: cur.Version + 1 };
    await store.transact([{ op: 'update', kind: 'ChangeOrder', item: next, expectedVersion: cur.Version }]);
    return next;
  };
  return { store, deps, base, dev, co, unitOf, aborted };
}

const isRestoreMark = (o: StoreOp) => o.kind === 'Mark' && (o.item as { Role?: string }).Role === 'restore';

describe('demote over an in-memory store', () => {
  it('is refused until the change order is aborted, and writes nothing', async () => {
    const f = await fleet();
    const before = f.store.transactions.length;
    await expect(demote(f.deps, caller, f.co, f.dev, {})).rejects.toThrow(
      /change order 'release-v452' is not aborted: abort it first/,
    );
    expect(f.store.transactions.length).toBe(before);
  });

  it('restores each marked Unit in one revision (and its restore mark in the same transaction); a rerun after a partial demote finishes it', async () => {
    const f = await fleet();
    const co = await f.aborted();
    const dep = await f.unitOf('deployment');
    expect(await dataAt(f.deps, dep, dep.HeadRevisionNum)).toContain(':v452');
    // The second transaction of restores fails: the first 24 Units land, the rest do not.
    const transact = f.store.transact.bind(f.store);
    let restoreTransactions = 0;
    f.store.transact = async (ops: StoreOp[]) => {
      if (ops.some(isRestoreMark) && ++restoreTransactions === 2)
        throw new Conflict('injected: the second write lost a race');
      return transact(ops);
    };
    await expect(demote(f.deps, caller, co, f.dev, { changeDesc: 'back out v452' })).rejects.toThrow(/injected/);
    expect(
      (await f.store.progressOf(co.ChangeOrderID)).find((p) => p.SpaceID === f.dev.SpaceID)?.RestoredAt,
    ).toBeUndefined();
    f.store.transact = transact;
    const fresh = (await f.store.getInSpace<ChangeOrder>('ChangeOrder', f.base.SpaceID, co.ChangeOrderID))!;
    const rerun = (await demote(f.deps, caller, fresh, f.dev, { changeDesc: 'back out v452' })) as DemoteResult;
    expect(rerun.Restored).toBe(true);
    expect(rerun.Units.filter((u) => u.Action === 'Unchanged' && u.Reason === 'AlreadyRestored')).toHaveLength(24);
    expect(rerun.Units.filter((u) => u.Action !== 'Unchanged').map((u) => u.UnitSlug)).toEqual([
      'config-24',
      'config-25',
      'config-26',
      'config-27',
      'deployment',
      'zz-last',
    ]);
    // deployment: one new revision with what the start Tag marks (v451), described as asked.
    const restored = await f.unitOf('deployment');
    expect(restored.HeadRevisionNum).toBe(dep.HeadRevisionNum + 1);
    expect(await dataAt(f.deps, restored, restored.HeadRevisionNum)).toBe(await dataAt(f.deps, restored, 1));
    expect(restored.LastChangeDescription).toBe('back out v452');
    const tx = f.store.transactions.find((ops) =>
      ops.some(
        (o) =>
          o.kind === 'Revision' &&
          (o.item as { UnitID: string }).UnitID === dep.UnitID &&
          (o.item as { Source: string }).Source === 'Restore',
      ),
    )!;
    expect(tx.filter(isRestoreMark).map((o) => (o.item as { UnitID: string; RevisionNum: number }).UnitID)).toContain(
      dep.UnitID,
    );
    expect((await f.store.progressOf(co.ChangeOrderID)).find((p) => p.SpaceID === f.dev.SpaceID)?.RestoredAt).toBe(
      '2026-12-01T00:00:00.000Z',
    );
    // A Unit edited forward after its restore keeps that work: a third run changes nothing.
    await writeData(f.deps, caller, f.dev, restored, deployment.replace('replicas: 1', 'replicas: 5'), {
      source: 'Update',
    });
    const third = (await demote(f.deps, caller, fresh, f.dev, {})) as DemoteResult;
    expect(third.Units.every((u) => u.Action === 'Unchanged')).toBe(true);
    const kept = await f.unitOf('deployment');
    expect(await dataAt(f.deps, kept, kept.HeadRevisionNum)).toContain('replicas: 5');
  });

  it('a dry run names the later revisions the restore would drop, and writes nothing', async () => {
    const f = await fleet();
    const co = await f.aborted();
    const dep = await f.unitOf('deployment');
    await writeData(
      f.deps,
      { ...caller, UserID: 'user-2' },
      f.dev,
      dep,
      (await dataAt(f.deps, dep, dep.HeadRevisionNum)).replace('replicas: 1', 'replicas: 3'),
      { source: 'Update', description: 'more replicas' },
    );
    const before = f.store.transactions.length;
    const plan = (await demote(f.deps, caller, co, f.dev, { dryRun: true })) as DemoteResult;
    expect(f.store.transactions.length).toBe(before);
    expect(plan.Units.find((u) => u.UnitSlug === 'deployment')).toEqual({
      UnitID: dep.UnitID,
      UnitSlug: 'deployment',
      Action: 'Restore',
      RestoredRevisionNum: 1,
      RevisionNum: dep.HeadRevisionNum + 2,
      Dropped: [{ RevisionNum: dep.HeadRevisionNum + 1, UserID: 'user-2', Description: 'more replicas' }],
    });
    expect(plan.Units.find((u) => u.UnitSlug === 'config-00')).toMatchObject({
      Action: 'Mark',
      Reason: 'NoChange',
      RestoredRevisionNum: 1,
      Dropped: [],
    });
  });

  it('a Unit of the Space the start Tag never marked is an error, not passed over', async () => {
    const f = await fleet();
    const co = await f.aborted();
    await createUnit(f.deps, caller, f.dev, { Slug: 'made-later', Data: config, ToolchainType: 'Kubernetes/YAML' });
    const r = (await demote(f.deps, caller, co, f.dev, {})) as DemoteResult;
    expect(r.Units.find((u) => u.UnitSlug === 'made-later')).toMatchObject({
      Action: 'Failed',
      Error:
        "change order 'release-v452' never marked unit 'made-later' (its start Tag does not mark it): there is nothing to restore it to",
    });
    // The Units it did mark are all restored, so the Space counts as restored.
    expect(r.Restored).toBe(true);
  });
});

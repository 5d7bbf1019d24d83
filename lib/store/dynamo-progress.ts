import type { ChangeOrder } from '../model/entities.ts';
import { COMPLETED, releaseToRecord, type Progress } from '../model/change-orders.ts';
import { Conflict } from '../model/errors.ts';
import type { AnyEntity } from './dynamo-records.ts';
import { DynamoEntries } from './dynamo-entries.ts';

/**
 * Which ChangeOrders reached a Space, read without the organization's or the Space's history of them: the
 * organization's ChangeOrders in flight (an entry each, written and deleted by `transact`) and a Space's progress
 * with a Release still to record (a sparse index), with the markers that give older items theirs.
 */

/** Whether a ChangeOrder is in flight: neither Completed nor aborted. */
export const inFlight = (c: Record<string, unknown>) => c.Stage !== COMPLETED && !c.AbortedReason;
/** A ChangeOrder's entry among its organization's in flight. */
export const inFlightOf = (c: Record<string, unknown>) => ({ OrganizationID: String(c.OrganizationID), ChangeOrderID: String(c.ChangeOrderID), SpaceID: String(c.SpaceID) });
/** The counter item that says an organization's ChangeOrders in flight all have their entries. */
export const inFlightDone = (orgId: string) => `INFLIGHT#${orgId}`;
/** The counter item that says the progress items in a Space all carry their ChangeOrder's Space (and so are read by Space). */
export const progressBySpaceDone = (spaceId: string) => `PROGRESSBYSPACE#${spaceId}`;
/** The counter item that says the progress in a Space with no Release left to record is out of the index a Release reads. */
export const progressToReleaseDone = (spaceId: string) => `PROGRESSTORELEASE#${spaceId}`;

export abstract class DynamoProgress extends DynamoEntries {
  async changeOrdersReaching(orgId: string, spaceId: string, o: { inFlight: true } | { toRelease: true }): Promise<{ co: ChangeOrder; progress: Progress }[]> {
    let progress: Progress[];
    if ('inFlight' in o) {
      // The organization's ChangeOrders in flight (not its history), then their progress in this Space by key: those that reached it.
      await this.backfillInFlight(orgId);
      const flying = (await this.db.InFlightChangeOrder.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data;
      const bases = new Map(flying.map((f) => [f.ChangeOrderID, f.SpaceID]));
      progress = (await this.batchRead<Progress>(this.db.Progress, flying.map((f) => ({ ChangeOrderID: f.ChangeOrderID, SpaceID: spaceId })))).map((p) => ({ ...p, BaseSpaceID: bases.get(p.ChangeOrderID)! }));
    } else {
      // Those with a Release still to record here, from the sparse index (an earlier version's write that recorded one
      // but left the keys is passed over here, and its keys go when the marker settles).
      await this.backfillProgressBySpace(orgId, spaceId);
      await this.backfillProgressToRelease(spaceId);
      progress = ((await this.db.Progress.query.toRelease({ SpaceID: spaceId }).go({ pages: 'all' })).data as Progress[]).filter((p) => p.BaseSpaceID && releaseToRecord(p));
    }
    const cos = await this.batchRead<ChangeOrder>(this.db.ChangeOrder, progress.map((p) => ({ SpaceID: p.BaseSpaceID, ChangeOrderID: p.ChangeOrderID })));
    const at = new Map(progress.map((p) => [p.ChangeOrderID, p]));
    return cos
      .filter((co) => co.OrganizationID === orgId && (!('inFlight' in o) || inFlight(co as unknown as Record<string, unknown>)))
      .sort((a, b) => (a.ChangeOrderID < b.ChangeOrderID ? -1 : 1))
      .map((co) => ({ co, progress: at.get(co.ChangeOrderID)! }));
  }

  async progressAt(changeOrderId: string, spaceId: string): Promise<Progress | undefined> {
    return ((await this.db.Progress.get({ ChangeOrderID: changeOrderId, SpaceID: spaceId }).go({ consistent: true })).data ?? undefined) as Progress | undefined;
  }

  /**
   * Gives an organization's ChangeOrders in flight made before their entries existed theirs, and forgets the
   * entries of those an earlier version finished or deleted while a deploy rolled over (`backfillUntilSettled`,
   * per organization: once, and once more when the marker settles). The entries are read before the
   * ChangeOrders: an entry is written with its ChangeOrder, so each one read has a ChangeOrder unless it was
   * deleted. An entry goes only on what is certain: its ChangeOrder read Completed or aborted (never undone), or
   * not found by key (consistent), as the organization's index may not show one just made yet.
   */
  private async backfillInFlight(orgId: string): Promise<void> {
    await this.backfillUntilSettled(inFlightDone(orgId), async () => {
      const entries = (await this.db.InFlightChangeOrder.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data;
      const cos = (await this.db.ChangeOrder.query.byOrg({ OrganizationID: orgId }).go({ pages: 'all', attributes: ['OrganizationID', 'SpaceID', 'ChangeOrderID', 'Stage', 'AbortedReason'] })).data as Record<string, unknown>[];
      const have = new Set(entries.map((e) => e.ChangeOrderID));
      const missing = cos.filter((c) => inFlight(c) && !have.has(String(c.ChangeOrderID))).map(inFlightOf);
      if (missing.length) await this.db.InFlightChangeOrder.put(missing).go();
      // What each entry's ChangeOrder is: as the index shows it, or read by key (consistently) where the index did not
      // show it (deleted, or just made) and for each entry just written (one that finished between the index's answer
      // and that write had its entry deleted before it was written). Few are read: an earlier version's.
      const byId = new Map(cos.map((c) => [String(c.ChangeOrderID), c]));
      const reread = [...entries.filter((e) => !byId.has(e.ChangeOrderID)), ...missing];
      const read = await Promise.all(reread.map(async (k) => (await this.db.ChangeOrder.get({ SpaceID: k.SpaceID, ChangeOrderID: k.ChangeOrderID }).go({ consistent: true })).data as Record<string, unknown> | null));
      const byKey = new Map(reread.map((k, i) => [k.ChangeOrderID, read[i] ?? undefined]));
      const done = [...entries, ...missing].filter((e) => {
        const co = byKey.has(e.ChangeOrderID) ? byKey.get(e.ChangeOrderID) : byId.get(e.ChangeOrderID);
        return !co || !inFlight(co);
      });
      if (done.length) await this.db.InFlightChangeOrder.delete(done.map((e) => ({ OrganizationID: orgId, ChangeOrderID: e.ChangeOrderID }))).go();
      return missing.length;
    });
  }

  /**
   * Gives the progress in a Space that ChangeOrders wrote before progress carried its ChangeOrder's Space
   * that Space, and with it the keys it is read by from the Space (`backfillUntilSettled`, per Space): the
   * organization's ChangeOrder entries (small, one query) name the keys, their progress here is read in
   * batches, and each item found without its ChangeOrder's Space is written again whole, guarded by its
   * Version (one updated meanwhile is read again).
   */
  private async backfillProgressBySpace(orgId: string, spaceId: string): Promise<void> {
    await this.backfillUntilSettled(progressBySpaceDone(spaceId), async () => {
      await this.backfillChangeOrderEntries(orgId);
      const entries = (await this.db.ChangeOrderEntry.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data;
      const bases = new Map(entries.map((e) => [e.ChangeOrderID, e.SpaceID]));
      const read = async (ids: string[]) => (await this.batchRead<Progress>(this.db.Progress, ids.map((id) => ({ ChangeOrderID: id, SpaceID: spaceId })))).filter((p) => !p.BaseSpaceID);
      let left = await read([...bases.keys()]);
      let given = 0;
      for (let tries = 0; left.length && tries < 5; tries++) {
        // One written meanwhile (its Version moved) is read again.
        const moved = await this.putAtVersion(left.map((p) => ({ ...p, BaseSpaceID: bases.get(p.ChangeOrderID)! })));
        given += left.length - moved.length;
        left = moved.length ? await read(moved) : [];
      }
      if (left.length) throw new Conflict('progress kept changing while it was given its Space; retry');
      return given;
    });
  }

  /**
   * Takes the progress in a Space that has no Release left to record out of the index a Release reads
   * (`backfillUntilSettled`, per Space): written before the index was sparse, or by an earlier version while a
   * deploy rolled over, it kept its keys. Each is written again whole, guarded by its Version (which stays), and
   * the index condition leaves the keys off; one updated meanwhile is left (read, it is passed over by its state)
   * for the run when the marker settles.
   */
  private async backfillProgressToRelease(spaceId: string): Promise<void> {
    await this.backfillUntilSettled(progressToReleaseDone(spaceId), async () => {
      const keyed = (await this.db.Progress.query.toRelease({ SpaceID: spaceId }).go({ pages: 'all' })).data as Progress[];
      const done = keyed.filter((p) => !releaseToRecord(p));
      await this.putAtVersion(done);
      return done.length;
    });
  }

  /**
   * Writes progress items whole, each guarded by the Version it was read at (which stays): the ChangeOrder IDs of
   * those another write changed meanwhile; any other failure is the store's, thrown.
   */
  private async putAtVersion(items: Progress[]): Promise<string[]> {
    const settled = await Promise.allSettled(items.map((p) => this.db.Progress.put(p).where((a: AnyEntity, op: AnyEntity) => op.eq(a.Version, p.Version)).go()));
    const failed = settled.flatMap((s, k) => (s.status === 'rejected' ? [{ error: s.reason as Error, id: items[k]!.ChangeOrderID }] : []));
    const other = failed.find((f) => !/conditional/i.test(String(f.error?.message)));
    if (other) throw other.error;
    return failed.map((f) => f.id);
  }
}

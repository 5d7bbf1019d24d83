import type { ChangeOrder } from '../model/entities.ts';
import { inFlight, type Progress } from '../model/change-orders.ts';
import { DynamoEntries } from './dynamo-entries.ts';

/**
 * Which ChangeOrders reached a Space, read without the organization's or the Space's history of them: the
 * organization's ChangeOrders in flight (the ChangeOrder's sparse index of them) and a Space's progress
 * with a Release still to record (a sparse index).
 */

export abstract class DynamoProgress extends DynamoEntries {
  async changeOrdersReaching(
    orgId: string,
    spaceId: string,
    o: { inFlight: true } | { toRelease: true },
  ): Promise<{ co: ChangeOrder; progress: Progress }[]> {
    let progress: Progress[];
    if ('inFlight' in o) {
      // The organization's ChangeOrders in flight (not its history), then their progress in this Space by key: those that reached it.
      const flying = (
        await this.db.ChangeOrder.query
          .inFlight({ OrganizationID: orgId })
          .go({ pages: 'all', attributes: ['ChangeOrderID', 'SpaceID'] })
      ).data;
      const bases = new Map(flying.map((f) => [f.ChangeOrderID, f.SpaceID]));
      progress = (
        await this.batchRead<Progress>(
          this.db.Progress,
          flying.map((f) => ({ ChangeOrderID: f.ChangeOrderID, SpaceID: spaceId })),
        )
      ).map((p) => ({ ...p, BaseSpaceID: bases.get(p.ChangeOrderID)! }));
    } else {
      // Those with a Release still to record here, from the sparse index.
      progress = (await this.db.Progress.query.toRelease({ SpaceID: spaceId }).go({ pages: 'all' })).data as Progress[];
    }
    const cos = await this.batchRead<ChangeOrder>(
      this.db.ChangeOrder,
      progress.map((p) => ({ SpaceID: p.BaseSpaceID, ChangeOrderID: p.ChangeOrderID })),
    );
    const at = new Map(progress.map((p) => [p.ChangeOrderID, p]));
    return cos
      .filter((co) => co.OrganizationID === orgId && (!('inFlight' in o) || inFlight(co)))
      .sort((a, b) => (a.ChangeOrderID < b.ChangeOrderID ? -1 : 1))
      .map((co) => ({ co, progress: at.get(co.ChangeOrderID)! }));
  }

  async progressAt(changeOrderId: string, spaceId: string): Promise<Progress | undefined> {
    return ((await this.db.Progress.get({ ChangeOrderID: changeOrderId, SpaceID: spaceId }).go({ consistent: true }))
      .data ?? undefined) as Progress | undefined;
  }
}

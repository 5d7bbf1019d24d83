import { createConversions } from 'electrodb';
import type { ChangeOrder, DeployWindow, Hold, Notification, NotificationDelivery } from '../model/entities.ts';
import { COMPLETED, inFlight, type Progress } from '../model/change-orders.ts';
import type { ChangeStore, OutboxItem } from '../ports/store.ts';
import type { JobPartRecord, JobPlanRecord, JobRecord } from '../ports/jobs.ts';
import * as E from './entities.ts';
import { checkCursor, type Table, type Where } from './table.ts';

const changeOrderCursors = createConversions(E.ChangeOrder).byAccessPattern.byOrg!;

/** The filter the database applies to an organization's ChangeOrders: not Completed, not aborted (either or both). */
function changeOrderFilter(o: { notCompleted?: boolean; notAborted?: boolean }): Where | undefined {
  if (!o.notCompleted && !o.notAborted) return undefined;
  return (a, op) =>
    [
      o.notCompleted ? `(${op.notExists!(a.Stage)} OR ${op.ne!(a.Stage, COMPLETED)})` : '',
      o.notAborted ? op.notExists!(a.AbortedReason) : '',
    ]
      .filter(Boolean)
      .join(' AND ');
}

/** ChangeOrders and their progress, holds, jobs, and the events the outbox publishes. */
export function changes(t: Table): ChangeStore {
  const { db, e } = t;
  return {
    async changeOrdersOf(orgId, o = {}) {
      const q = e.ChangeOrder!.query.byOrg!({ OrganizationID: orgId });
      const where = changeOrderFilter(o);
      return (await (where ? q.where(where) : q).go({ pages: 'all' })).data as ChangeOrder[];
    },
    async changeOrdersInFlight(orgId, limit) {
      return (await db.ChangeOrder.query.inFlight({ OrganizationID: orgId }).go({ count: limit }))
        .data as ChangeOrder[];
    },
    async changeOrderPage(orgId, limit, after, o = {}) {
      checkCursor(changeOrderCursors, after, { OrganizationID: orgId });
      const page = await db.ChangeOrder.query.byOrg({ OrganizationID: orgId }).go({ limit, cursor: after ?? null });
      // In slug order; what `o` leaves out is left out of the page (its cursor still resumes after the last read).
      const kept = (c: ChangeOrder) =>
        (!o.notCompleted || c.Stage !== COMPLETED) && (!o.notAborted || !c.AbortedReason);
      const items = (page.data as ChangeOrder[]).flatMap((changeOrder) =>
        kept(changeOrder)
          ? [{ changeOrder, cursor: changeOrderCursors.fromComposite.toCursor(changeOrder as never) }]
          : [],
      );
      return { items, next: page.cursor ?? undefined };
    },

    /**
     * Which ChangeOrders reached a Space, read without the organization's or the Space's history of them: the
     * organization's ChangeOrders in flight (the ChangeOrder's sparse index of them) and a Space's progress
     * with a Release still to record (a sparse index).
     */
    async changeOrdersReaching(orgId, spaceId, o) {
      let progress: Progress[];
      if ('inFlight' in o) {
        // The organization's ChangeOrders in flight (not its history), then their progress in this Space by key: those that reached it.
        const flying = (
          await db.ChangeOrder.query
            .inFlight({ OrganizationID: orgId })
            .go({ pages: 'all', attributes: ['ChangeOrderID', 'SpaceID'] })
        ).data;
        const bases = new Map(flying.map((f) => [f.ChangeOrderID, f.SpaceID]));
        progress = (
          await t.batchRead<Progress>(
            'Progress',
            flying.map((f) => ({ ChangeOrderID: f.ChangeOrderID, SpaceID: spaceId })),
          )
        ).map((p) => ({ ...p, BaseSpaceID: bases.get(p.ChangeOrderID)! }));
      } else {
        // Those with a Release still to record here, from the sparse index.
        progress = (await db.Progress.query.toRelease({ SpaceID: spaceId }).go({ pages: 'all' })).data as Progress[];
      }
      const cos = await t.batchRead<ChangeOrder>(
        'ChangeOrder',
        progress.map((p) => ({ SpaceID: p.BaseSpaceID, ChangeOrderID: p.ChangeOrderID })),
      );
      const at = new Map(progress.map((p) => [p.ChangeOrderID, p]));
      return cos
        .filter((co) => co.OrganizationID === orgId && (!('inFlight' in o) || inFlight(co)))
        .sort((a, b) => (a.ChangeOrderID < b.ChangeOrderID ? -1 : 1))
        .map((co) => ({ co, progress: at.get(co.ChangeOrderID)! }));
    },
    async progressAt(changeOrderId, spaceId) {
      return ((await db.Progress.get({ ChangeOrderID: changeOrderId, SpaceID: spaceId }).go({ consistent: true }))
        .data ?? undefined) as Progress | undefined;
    },
    async progressOf(changeOrderId) {
      return (await db.Progress.query.primary({ ChangeOrderID: changeOrderId }).go({ pages: 'all' })).data;
    },

    async listHolds(orgId, o = {}) {
      const q = e.Hold!.query.primary!({ OrganizationID: orgId });
      if (!o.inForceAt) return (await q.go({ pages: 'all' })).data as Hold[];
      // In force: not lifted, not expired (expiries are ISO times in UTC, which compare as strings do).
      const now = o.inForceAt.toISOString();
      return (
        await q
          .where(
            (a, op) =>
              `${op.notExists!(a.LiftedAt)} AND (${op.notExists!(a.ExpiresAt)} OR ${op.gt!(a.ExpiresAt, now)})`,
          )
          .go({ pages: 'all' })
      ).data as Hold[];
    },
    async getHold(orgId, holdId) {
      return ((await db.Hold.get({ OrganizationID: orgId, HoldID: holdId }).go()).data ?? undefined) as
        Hold | undefined;
    },

    async listWindows(orgId) {
      return (await db.Window.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data as DeployWindow[];
    },
    async getWindow(orgId, windowId) {
      return ((await db.Window.get({ OrganizationID: orgId, WindowID: windowId }).go()).data ?? undefined) as
        DeployWindow | undefined;
    },

    async listNotifications(orgId) {
      return (await db.Notification.query.primary({ OrganizationID: orgId }).go({ pages: 'all' }))
        .data as Notification[];
    },
    async notificationsWatchingBlocked() {
      return (await db.Notification.query.watchingBlocked({}).go({ pages: 'all' })).data as Notification[];
    },
    async getNotification(orgId, notificationId) {
      return ((await db.Notification.get({ OrganizationID: orgId, NotificationID: notificationId }).go()).data ??
        undefined) as Notification | undefined;
    },
    async deliveriesOf(notificationId, limit) {
      return (
        await db.NotificationDelivery.query.primary({ NotificationID: notificationId }).go({ order: 'desc', limit })
      ).data as NotificationDelivery[];
    },

    async getJob(jobId) {
      return ((await db.Job.get({ JobID: jobId }).go({ consistent: true })).data ?? undefined) as JobRecord | undefined;
    },
    async jobPlan(jobId) {
      const pieces = (await db.JobPlan.query.primary({ JobID: jobId }).go({ pages: 'all', consistent: true }))
        .data as JobPlanRecord[];
      return pieces.sort((a, b) => a.Chunk - b.Chunk);
    },
    async jobParts(jobId) {
      return (await db.JobPart.query.primary({ JobID: jobId }).go({ pages: 'all', consistent: true }))
        .data as JobPartRecord[];
    },
    async jobPartDone(jobId, part) {
      return !!(await db.JobPart.get({ JobID: jobId, Part: part }).go({ consistent: true, attributes: ['JobID'] }))
        .data;
    },
    async runningJobs() {
      return (await db.Job.query.running({}).go({ pages: 'all', attributes: ['JobID'] })).data.map((j) => j.JobID);
    },

    async pendingEvents(limit) {
      return (await db.Outbox.query.pending({}).go({ limit })).data as OutboxItem[];
    },
    async deletePendingEvent(eventId) {
      await db.Outbox.delete({ EventID: eventId }).go();
    },
    async eventProcessed(eventId, consumer) {
      return !!(await db.ProcessedEvent.get({ EventID: eventId, Consumer: consumer }).go()).data;
    },
    async markEventProcessed(eventId, consumer, expiresAtEpoch) {
      await db.ProcessedEvent.put({ EventID: eventId, Consumer: consumer, ExpiresAtEpoch: expiresAtEpoch }).go();
    },
  };
}

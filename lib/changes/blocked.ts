/**
 * Blocked notifications (`cub notification create … --on Blocked --blocked-for 2h`): a sweep, run on a
 * clock (every SWEEP_MINUTES on AWS, by a schedule; every minute under `npm start`), reads the notifications
 * told of blocked ChangeOrders from their sparse index (no scan), and for each of their organizations the
 * ChangeOrders in flight (their sparse index). A ChangeOrder is blocked when `changeorder explain` says its
 * next Stage is shut (a gate that does not hold); it has been since its Stage could start (the Stage before
 * reached, or the ChangeOrder made). Once that is longer than a notification's BlockedFor, the notification
 * is told, once per wait: the same ChangeOrder, Stage and start are not told again (for DEDUPE_SECONDS).
 */
import type { ChangeDeps } from './ports.ts';
import { explainPromotion } from './promote/explain.ts';
import { send } from './notifications.ts';
import { onceFor } from '../events/outbox.ts';
import { bounded } from '../util/concurrency.ts';
import {
  DEFAULT_BLOCKED_FOR,
  parseDuration,
  span,
  type ChangeOrder,
  type Explanation,
  type Notification,
} from '../model/entities.ts';

/** The most ChangeOrders in flight one sweep looks at per organization (the oldest by ID first). */
export const SWEEP_CHANGE_ORDERS = 500;
const READS = 4;
export const BLOCKED_EVENT = 'ChangeOrder Blocked';

export interface SweepResult {
  Organizations: number;
  ChangeOrders: number;
  Blocked: number;
  /** Notices sent (each recorded with how it went, delivered or failed after its retries: a wait is told once either way). */
  Delivered: number;
  /** ChangeOrders the sweep could not explain, and why: the rest are still looked at. */
  Errors: { ChangeOrderID: string; Error: string }[];
}

/** When a blocked ChangeOrder's next Stage could have started: the last of the Stage before to take it, or when it was made. Pure. */
export function blockedSince(
  co: ChangeOrder,
  e: Pick<Explanation, 'Over'>,
  progress: { SpaceID: string; ResolvedAt: string; RestoredAt?: string }[],
): string {
  const taken = new Map(progress.filter((p) => !p.RestoredAt).map((p) => [p.SpaceID, p.ResolvedAt]));
  const times = e.Over.filter((s) => s.SpaceID !== co.SpaceID)
    .map((s) => taken.get(s.SpaceID))
    .filter((t): t is string => !!t);
  return times.length ? times.reduce((a, b) => (a > b ? a : b)) : co.CreatedAt;
}

/** What a person reads: how long, which Stage, the gates that do not hold (and where), and the command that says more. Pure. */
export function blockedText(base: string, co: ChangeOrder, e: Explanation, seconds: number): string {
  const shut = new Map<string, string[]>();
  for (const g of e.Gates.filter((x) => !x.Satisfied))
    shut.set(g.Prerequisite, [...(shut.get(g.Prerequisite) ?? []), g.SpaceSlug]);
  const gates = [...shut].map(([p, spaces]) => {
    const where = [...new Set(spaces)];
    return `${p} (${where.slice(0, 3).join(', ')}${where.length > 3 ? ` and ${where.length - 3} more` : ''})`;
  });
  return `Baton: change order ${base}/${co.Slug} has waited ${span(seconds)} to go into stage ${e.Stage}: ${gates.join('; ')} not met. Why: cub changeorder explain --space ${base} ${co.Slug}`;
}

/** One sweep: tells each notification on Blocked of the ChangeOrders of its organization blocked longer than its BlockedFor. */
export async function sweepBlocked(deps: ChangeDeps): Promise<SweepResult> {
  const watching = await deps.store.notificationsWatchingBlocked();
  const byOrg = new Map<string, Notification[]>();
  for (const n of watching) byOrg.set(n.OrganizationID, [...(byOrg.get(n.OrganizationID) ?? []), n]);
  const result: SweepResult = { Organizations: byOrg.size, ChangeOrders: 0, Blocked: 0, Delivered: 0, Errors: [] };
  const now = deps.now().getTime();
  for (const [org, notifications] of byOrg) {
    const flying = await deps.store.changeOrdersInFlight(org, SWEEP_CHANGE_ORDERS);
    result.ChangeOrders += flying.length;
    await bounded(flying, READS, async (co) => {
      try {
        const base = await deps.store.getSpace(org, co.SpaceID);
        if (!base) return;
        // The system's own look (no Role: it may read every Space), as `cub changeorder explain` would.
        const e = await explainPromotion(deps, { OrganizationID: org, UserID: 'baton' }, co, base, {});
        const shut = e.Gates.filter((g) => !g.Satisfied);
        if (e.Open || !e.Stage || !shut.length) return;
        const since = blockedSince(co, e, await deps.store.progressOf(co.ChangeOrderID));
        const waited = Math.floor((now - Date.parse(since)) / 1000);
        result.Blocked++;
        for (const n of notifications) {
          if (waited * 1000 < (parseDuration(n.BlockedFor ?? DEFAULT_BLOCKED_FOR) ?? Infinity)) continue;
          const eventId = `blocked:${co.ChangeOrderID}:${e.Stage}:${since}`;
          await onceFor(deps, `notify-blocked:${n.NotificationID}`, { detail: { EventID: eventId } }, async () => {
            await send(deps, n, {
              on: 'Blocked',
              event: BLOCKED_EVENT,
              eventId,
              text: blockedText(base.Slug, co, e, waited),
              changeOrder: { Slug: co.Slug, ChangeOrderID: co.ChangeOrderID, Space: base.Slug, Stage: e.Stage },
              detail: {
                OrganizationID: org,
                SpaceID: co.SpaceID,
                ChangeOrderID: co.ChangeOrderID,
                Slug: co.Slug,
                Stage: e.Stage,
                BlockedSince: since,
                BlockedSeconds: waited,
                BlockedFor: n.BlockedFor ?? DEFAULT_BLOCKED_FOR,
                Gates: shut.map((g) => ({
                  Prerequisite: g.Prerequisite,
                  SpaceSlug: g.SpaceSlug,
                  Message: g.Message,
                  ...(g.Opens ? { Opens: g.Opens } : {}),
                })),
              },
              record: { Stage: e.Stage, BlockedSince: since },
            });
            result.Delivered++;
          });
        }
      } catch (err) {
        result.Errors.push({ ChangeOrderID: co.ChangeOrderID, Error: (err as Error).message });
      }
    });
  }
  return result;
}

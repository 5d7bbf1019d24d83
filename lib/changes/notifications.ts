/**
 * Notifications out (`cub notification create|list|get|delete|deliveries`): a webhook told when a
 * ChangeOrder advances a Stage, is recalled, or completes. Each is a POST of a JSON body with Slack's
 * incoming-webhook `text` field (so a Slack URL works as is), the event and the ChangeOrder; signed
 * `X-Baton-Signature: sha256=<hex HMAC-SHA256 of the body>` when it has a secret; tried up to three times,
 * waiting 1 s then 4 s, on a network error, a timeout, 408, 429 or a 5xx. Each delivery is recorded, and a
 * redelivered event is dropped by its EventID. Locally the in-process bus hands the events over (delivered in
 * the background, so a slow webhook never holds a request); on AWS an EventBridge rule invokes a Lambda.
 */
import { createHmac } from 'node:crypto';
import type { ChangeDeps } from './ports.ts';
import type { Deps } from '../ports/deps.ts';
import {
  BLOCKED_FOR_BOUNDS,
  DEFAULT_BLOCKED_FOR,
  NOTIFY_ON,
  notificationView,
  parseDuration,
  type Caller,
  type Notification,
  type NotificationDelivery,
  type NotificationView,
  type NotifyOn,
} from '../model/entities.ts';
import { Forbidden, Invalid, NotFound } from '../model/errors.ts';
import { isId } from '../model/ids.ts';
import { DetailType, NOTIFY_RULE, type BatonEvent } from '../events/contracts.ts';
import { onceFor } from '../events/outbox.ts';
import type { Outcome } from '../releases/deploy-events.ts';

const ON_EVENT: Record<string, NotifyOn> = {
  [DetailType.ChangeOrderStageAdvanced]: 'StageAdvanced',
  [DetailType.ChangeOrderRecalled]: 'Recalled',
  [DetailType.ChangeOrderCompleted]: 'Completed',
};
/** Waits before the second and third attempt. */
export const BACKOFF_MS = [1_000, 4_000];
const TIMEOUT_MS = 5_000;
const MAX_URL = 2048;

/** Checks a webhook address: http or https, with a host, no credentials in it, at most 2048 characters. */
export function checkUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Invalid(
      `URL '${raw.slice(0, 200)}' is not an address: give one such as https://hooks.slack.com/services/…`,
    );
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:')
    throw new Invalid(`URL '${raw.slice(0, 200)}' must be http(s), not ${u.protocol.replace(/:$/, '')}`);
  if (u.username || u.password)
    throw new Invalid('URL must not carry a user or password: use --secret to sign the body');
  if (raw.length > MAX_URL) throw new Invalid(`URL is ${raw.length} characters; at most ${MAX_URL}`);
  return u.toString();
}

/** A Blocked notification's wait (DEFAULT_BLOCKED_FOR when not given), checked: a duration within the bounds, and only with Blocked. */
export function checkBlockedFor(on: NotifyOn[], blockedFor: string | undefined): string | undefined {
  if (!on.includes('Blocked')) {
    if (blockedFor !== undefined)
      throw new Invalid(
        `BlockedFor '${blockedFor}' is for a notification on Blocked: add Blocked to On, or leave it out`,
      );
    return undefined;
  }
  const text = blockedFor ?? DEFAULT_BLOCKED_FOR;
  const ms = parseDuration(text);
  const [least, most] = [parseDuration(BLOCKED_FOR_BOUNDS.least)!, parseDuration(BLOCKED_FOR_BOUNDS.most)!];
  if (ms === undefined) throw new Invalid(`BlockedFor '${text}' is not a duration: give one such as 30m, 2h or 1d`);
  if (ms < least || ms > most)
    throw new Invalid(
      `BlockedFor '${text}' must be from ${BLOCKED_FOR_BOUNDS.least} (the sweep looks every few minutes) to ${BLOCKED_FOR_BOUNDS.most}`,
    );
  return text;
}

export async function createNotification(
  deps: ChangeDeps,
  caller: Caller,
  o: { Slug: string; URL: string; Secret?: string; On: NotifyOn[]; BlockedFor?: string },
): Promise<NotificationView> {
  if (caller.Role && caller.Role !== 'Admin')
    throw new Forbidden('only an Admin may make a notification: it is told of every change order of the organization');
  const blockedFor = checkBlockedFor(o.On, o.BlockedFor);
  const now = deps.now().toISOString();
  const n: Notification = {
    NotificationID: deps.newId(),
    OrganizationID: caller.OrganizationID,
    Slug: o.Slug,
    URL: checkUrl(o.URL),
    ...(o.Secret ? { Secret: o.Secret } : {}),
    On: [...new Set(o.On)].sort((a, b) => NOTIFY_ON.indexOf(a) - NOTIFY_ON.indexOf(b)),
    ...(blockedFor ? { BlockedFor: blockedFor } : {}),
    OwnerID: caller.UserID,
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  await deps.store.transact([{ op: 'create', kind: 'Notification', item: n }]);
  return notificationView(n);
}

export async function findNotification(deps: ChangeDeps, caller: Caller, ref: string): Promise<Notification> {
  const id = isId(ref) ? ref.toLowerCase() : await deps.store.idInOrg(caller.OrganizationID, 'Notification', ref);
  const n = id ? await deps.store.getNotification(caller.OrganizationID, id) : undefined;
  if (!n) throw new NotFound(`notification '${ref}' not found`);
  return n;
}

export async function listNotifications(deps: ChangeDeps, caller: Caller): Promise<NotificationView[]> {
  return (await deps.store.listNotifications(caller.OrganizationID))
    .sort((a, b) => (a.Slug < b.Slug ? -1 : 1))
    .map((n) => notificationView(n));
}

export async function deleteNotification(deps: ChangeDeps, caller: Caller, ref: string): Promise<NotificationView> {
  const n = await findNotification(deps, caller, ref);
  if (caller.Role && caller.Role !== 'Admin') throw new Forbidden('only an Admin may delete a notification');
  await deps.store.transact([{ op: 'delete', kind: 'Notification', item: n }]);
  return notificationView(n);
}

/** A notification's deliveries, newest first. */
export async function deliveries(
  deps: ChangeDeps,
  caller: Caller,
  ref: string,
  limit = 50,
): Promise<NotificationDelivery[]> {
  const n = await findNotification(deps, caller, ref);
  return deps.store.deliveriesOf(n.NotificationID, limit);
}

/** What a person reads of an event: Slack's `text`. */
function textOf(on: NotifyOn, d: Record<string, unknown>, base: string): string {
  const co = `change order ${base}/${String(d.Slug)}`;
  const from = d.PreviousStage ? ` (from ${String(d.PreviousStage)})` : '';
  // The event names Completed as its Stage when the last Stage was reached with Final holding, in one step.
  if (on === 'StageAdvanced')
    return d.Stage === 'Completed'
      ? `Baton: ${co} reached every stage${from}`
      : `Baton: ${co} reached stage ${String(d.Stage)}${from}`;
  if (on === 'Completed') return `Baton: ${co} completed`;
  return `Baton: ${co} was recalled: ${String(d.RecalledSpaceSlug)} (stage ${String(d.Stage)}) reported ${String(d.Matched)} for release ${String(d.ReleaseNum)}${d.Demote ? '; Baton is taking it back out' : ''}`;
}

/** One POST, retried as the module says; what came of it. */
async function post(
  deps: Pick<Deps, 'sleep'>,
  n: Notification,
  body: string,
  headers: Record<string, string>,
): Promise<{ ok: boolean; attempts: number; status?: number; error?: string }> {
  let last: { status?: number; error?: string } = {};
  for (let attempt = 1; attempt <= BACKOFF_MS.length + 1; attempt++) {
    if (attempt > 1)
      await (deps.sleep ?? ((ms) => new Promise<void>((r) => setTimeout(r, ms))))(BACKOFF_MS[attempt - 2]!);
    try {
      const res = await fetch(n.URL, { method: 'POST', headers, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
      await res.body?.cancel().catch(() => undefined);
      if (res.ok) return { ok: true, attempts: attempt, status: res.status };
      last = { status: res.status, error: `answered ${res.status}` };
      if (res.status < 500 && res.status !== 408 && res.status !== 429)
        return { ok: false, attempts: attempt, ...last };
    } catch (e) {
      last = {
        error: (e as Error).name === 'TimeoutError' ? `no answer in ${TIMEOUT_MS / 1000}s` : (e as Error).message,
      };
    }
  }
  return { ok: false, attempts: BACKOFF_MS.length + 1, ...last };
}

/** The notifications of an event's organization that ask for it (one query: most organizations have none). */
async function askedFor(deps: ChangeDeps, event: BatonEvent): Promise<Notification[]> {
  const on = ON_EVENT[event.detailType];
  const org = String(event.detail.OrganizationID ?? '');
  if (!on || !org) return [];
  return (await deps.store.listNotifications(org)).filter((n) => n.On.includes(on));
}

/** What one delivery says: Slack's text, the body's change order and detail, and what its record keeps. */
export interface Message {
  on: NotifyOn;
  /** The event's detail type (`ChangeOrder Blocked` for the sweep's own notices). */
  event: string;
  eventId: string;
  text: string;
  changeOrder: { Slug?: unknown; ChangeOrderID?: unknown; Space: string; Stage?: unknown };
  detail: Record<string, unknown>;
  record?: Pick<NotificationDelivery, 'Stage' | 'BlockedSince'>;
}

/** Posts one message to one notification (signed when it has a secret, retried as the module says) and records the delivery. */
export async function send(deps: ChangeDeps, n: Notification, m: Message): Promise<NotificationDelivery> {
  const deliveryId = deps.newId();
  const body = JSON.stringify({
    text: m.text,
    on: m.on,
    event: m.event,
    eventId: m.eventId,
    deliveryId,
    changeOrder: m.changeOrder,
    detail: m.detail,
  });
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'baton-notifications',
    'x-baton-event': m.on,
    'x-baton-delivery': deliveryId,
    ...(n.Secret ? { 'x-baton-signature': `sha256=${createHmac('sha256', n.Secret).update(body).digest('hex')}` } : {}),
  };
  const r = await post(deps, n, body, headers);
  const record: NotificationDelivery = {
    NotificationID: n.NotificationID,
    DeliveryID: deliveryId,
    OrganizationID: n.OrganizationID,
    EventID: m.eventId,
    On: m.on,
    ...(m.changeOrder.Slug ? { ChangeOrderSlug: String(m.changeOrder.Slug) } : {}),
    ...m.record,
    Text: m.text,
    At: deps.now().toISOString(),
    Status: r.ok ? 'Delivered' : 'Failed',
    Attempts: r.attempts,
    ...(r.status !== undefined ? { HTTPStatus: r.status } : {}),
    ...(r.error ? { Error: r.error } : {}),
  };
  await deps.store.transact([{ op: 'create', kind: 'NotificationDelivery', item: record }]);
  if (!r.ok) deps.telemetry?.count('NotificationFailures');
  return record;
}

/** Delivers one event to the notifications that ask for it, recording each delivery. */
export async function deliverEvent(deps: ChangeDeps, event: BatonEvent, targets: Notification[]): Promise<number> {
  const on = ON_EVENT[event.detailType]!;
  const d = event.detail;
  const org = String(d.OrganizationID);
  if (!targets.length) return 0;
  const base = (await deps.store.getSpace(org, String(d.SpaceID)))?.Slug ?? String(d.SpaceID);
  const message: Message = {
    on,
    event: event.detailType,
    eventId: String(d.EventID ?? ''),
    text: textOf(on, d, base),
    changeOrder: { Slug: d.Slug, ChangeOrderID: d.ChangeOrderID, Space: base, Stage: d.Stage },
    detail: d,
  };
  await Promise.all(targets.map((n) => send(deps, n, message)));
  return targets.length;
}

/** The notifications consumer: each event handled once (a redelivery is dropped by its EventID) when some notification asks for it. */
export async function consumeNotifyEvent(deps: Deps, event: BatonEvent): Promise<Outcome> {
  // Nothing asks for it: nothing to mark as handled either.
  const targets = await askedFor(deps, event);
  if (!targets.length) return { applied: true, ReleaseID: '' };
  await onceFor(deps, NOTIFY_RULE.name, event, async () => {
    await deliverEvent(deps, event, targets);
  });
  return { applied: true, ReleaseID: '' };
}

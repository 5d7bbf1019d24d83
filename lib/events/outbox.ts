/**
 * The transactional outbox: an event is written as an item in the same DynamoDB transaction as the
 * change it reports, so a crash can never leave the change without its event (or the event without the
 * change). It is published from there — by the DynamoDB Streams publisher on AWS (functions/outbox.ts),
 * drained in-process here locally — at least once, with an EventID consumers drop duplicates by.
 */
import type { Deps, EventBus } from '../ports/deps.ts';
import type { OutboxItem, Store, StoreOp } from '../ports/store.ts';
import { CONTRACTS, type BatonEvent, type DetailType } from './contracts.ts';

/** The outbox items for events, each checked against its contract and given its EventID: add them to the transaction of the change they report. */
export function eventOps(deps: Pick<Deps, 'now' | 'newId'>, events: BatonEvent[]): StoreOp[] {
  const now = deps.now().toISOString();
  return events.map((e) => {
    const checked = CONTRACTS[e.detailType].safeParse(e.detail);
    // A detail off its contract is a bug in Baton, never the caller's: it must not reach the bus.
    if (!checked.success)
      throw new Error(
        `event '${e.detailType}' does not meet its contract: ${checked.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    const EventID = deps.newId();
    const item: OutboxItem = {
      EventID,
      OrganizationID: String(e.detail.OrganizationID),
      Source: e.source,
      DetailType: e.detailType,
      Detail: { ...checked.data, EventID },
      CreatedAt: now,
    };
    return { op: 'create' as const, kind: 'Outbox' as const, item };
  });
}

/** The event an outbox item carries. */
export function outboxEvent(item: OutboxItem): BatonEvent {
  return { source: item.Source, detailType: item.DetailType as DetailType, detail: item.Detail };
}

/**
 * Publishes outbox items on a bus, in order, and forgets each once published (while the next is
 * published): a failure leaves the item pending, to be published again.
 */
export async function publishOutbox(store: Store, bus: EventBus, items: OutboxItem[]): Promise<void> {
  const forgotten: Promise<void>[] = [];
  try {
    for (const item of items) {
      await bus.put([outboxEvent(item)]);
      const forget = store.deletePendingEvent(item.EventID);
      forget.catch(() => undefined);
      forgotten.push(forget);
    }
  } catch (e) {
    await Promise.allSettled(forgotten);
    throw e;
  }
  await Promise.all(forgotten);
}

/** Publishes whatever is still pending (a local run stopped between a write and its publishing), oldest first. */
export async function drainPending(store: Store, bus: EventBus): Promise<number> {
  let n = 0;
  for (;;) {
    const batch = await store.pendingEvents(100);
    if (!batch.length) return n;
    await publishOutbox(store, bus, batch);
    n += batch.length;
  }
}

/**
 * A store whose transactions publish the events they wrote as soon as they commit: the local stand-in
 * for the Streams publisher, so a request's consumers have run when it answers, as before the outbox.
 */
export function publishingStore(store: Store, bus: EventBus): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'transact') {
        return async (ops: StoreOp[]) => {
          await target.transact(ops);
          const items = ops.filter((o) => o.kind === 'Outbox' && o.op === 'create').map((o) => o.item as OutboxItem);
          if (items.length) await publishOutbox(target, bus, items);
        };
      }
      if (prop === 'transactGroups') {
        return async (groups: StoreOp[][], o?: { tail?: number }) => {
          const outcomes = await target.transactGroups(groups, o);
          const items = groups
            .flatMap((g, i) => (outcomes[i] === 'landed' ? g : []))
            .filter((op) => op.kind === 'Outbox' && op.op === 'create')
            .map((op) => op.item as OutboxItem);
          if (items.length) await publishOutbox(target, bus, items);
          return outcomes;
        };
      }
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** How long a consumer remembers an event it handled (seconds). */
export const DEDUPE_SECONDS = 7 * 24 * 3600;

/** Runs a consumer once per EventID: a second delivery of the same event is dropped. The record is written after the work, so a failed run is retried. */
export async function onceFor(
  deps: { store: Pick<Store, 'eventProcessed' | 'markEventProcessed'>; now: () => Date },
  consumer: string,
  e: Pick<BatonEvent, 'detail'>,
  work: () => Promise<void>,
): Promise<'done' | 'duplicate'> {
  const id = typeof e.detail.EventID === 'string' ? e.detail.EventID : undefined;
  if (id && (await deps.store.eventProcessed(id, consumer))) return 'duplicate';
  await work();
  if (id) await deps.store.markEventProcessed(id, consumer, Math.floor(deps.now().getTime() / 1000) + DEDUPE_SECONDS);
  return 'done';
}

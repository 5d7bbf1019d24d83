import { describe, expect, it } from 'vitest';
import { InProcessBus } from '../../lib/events/bus.ts';
import { DetailType, SOURCE, STAGE_RULE, type BatonEvent } from '../../lib/events/contracts.ts';
import { drainPending, eventOps, onceFor, publishOutbox, publishingStore } from '../../lib/events/outbox.ts';
import type { OutboxItem } from '../../lib/ports/store.ts';
import { MemoryStore } from '../support/memory-store.ts';

const ORG = '0a000000-0000-4000-8000-000000000001';
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ids = () => {
  let n = 0;
  return { now: () => new Date('2026-12-03T00:00:00Z'), newId: () => uuid(++n) };
};
const aborted = (slug: string): BatonEvent => ({
  source: SOURCE,
  detailType: DetailType.ChangeOrderAborted,
  detail: {
    OrganizationID: ORG,
    SpaceID: uuid(90),
    ChangeOrderID: uuid(91),
    Slug: slug,
    AbortedReason: 'broken',
    AbortedAt: '2026-12-03T00:00:00.000Z',
    AbortedBy: 'u',
  },
});

describe('the transactional outbox', () => {
  it('turns events into outbox items checked against their contract, each with its EventID', () => {
    const [op] = eventOps(ids(), [aborted('co')]);
    expect(op).toMatchObject({
      op: 'create',
      kind: 'Outbox',
      item: {
        EventID: uuid(1),
        OrganizationID: ORG,
        Source: 'baton',
        DetailType: 'ChangeOrder Aborted',
        CreatedAt: '2026-12-03T00:00:00.000Z',
      },
    });
    expect((op!.item as OutboxItem).Detail).toMatchObject({ EventID: uuid(1), Slug: 'co' });
    expect(() => eventOps(ids(), [{ ...aborted('co'), detail: { OrganizationID: ORG, Slug: 'co' } }])).toThrow(
      /event 'ChangeOrder Aborted' does not meet its contract: .*SpaceID/,
    );
  });

  it('publishes what a transaction wrote once it commits, and nothing from a transaction that failed', async () => {
    const raw = new MemoryStore();
    const bus = new InProcessBus(true);
    const store = publishingStore(raw, bus);
    const deps = ids();
    const space = {
      SpaceID: uuid(50),
      OrganizationID: ORG,
      Slug: 's',
      Labels: {},
      Annotations: {},
      CreatedAt: '',
      UpdatedAt: '',
      Version: 1,
    };
    await store.transact([{ op: 'create', kind: 'Space', item: space }, ...eventOps(deps, [aborted('first')])]);
    expect(bus.log.map((e) => e.detail.Slug)).toEqual(['first']);
    expect(await raw.pendingEvents(10)).toEqual([]);
    // The Space exists already: the transaction fails whole, its event with it.
    await expect(
      store.transact([{ op: 'create', kind: 'Space', item: space }, ...eventOps(deps, [aborted('second')])]),
    ).rejects.toThrow(/already exists/);
    expect(bus.log.map((e) => e.detail.Slug)).toEqual(['first']);
    expect(await raw.pendingEvents(10)).toEqual([]);
  });

  it('publishes, oldest first, what a run that stopped between a write and its publishing left pending', async () => {
    const raw = new MemoryStore();
    const deps = ids();
    await raw.transact(eventOps(deps, [aborted('a'), aborted('b')]));
    const bus = new InProcessBus(true);
    expect(await drainPending(raw, bus)).toBe(2);
    expect(bus.log.map((e) => [e.detail.Slug, e.detail.EventID])).toEqual([
      ['a', uuid(1)],
      ['b', uuid(2)],
    ]);
    expect(await drainPending(raw, bus)).toBe(0);
  });

  it('publishes in order and forgets each published item; one the bus refuses stays pending, with those after it', async () => {
    const raw = new MemoryStore();
    const deps = ids();
    const ops = eventOps(deps, [aborted('a'), aborted('b'), aborted('c')]);
    await raw.transact(ops);
    const put: string[] = [];
    const bus = {
      put: async (es: BatonEvent[]) => {
        if (es[0]!.detail.Slug === 'b') throw new Error('the bus is gone');
        put.push(String(es[0]!.detail.Slug));
      },
    };
    await expect(
      publishOutbox(
        raw,
        bus,
        ops.map((o) => o.item as OutboxItem),
      ),
    ).rejects.toThrow('the bus is gone');
    expect(put).toEqual(['a']);
    expect((await raw.pendingEvents(10)).map((i) => i.Detail.Slug)).toEqual(['b', 'c']);
    const later = new InProcessBus(true);
    expect(await drainPending(raw, later)).toBe(2);
    expect(later.log.map((e) => e.detail.Slug)).toEqual(['b', 'c']);
  });

  it('a consumer handles each EventID once; a failed run is tried again on redelivery', async () => {
    const store = new MemoryStore();
    const deps = { store, now: () => new Date('2026-12-03T00:00:00Z') };
    const e = { ...aborted('x'), detail: { ...aborted('x').detail, EventID: uuid(7) } };
    let runs = 0;
    await expect(
      onceFor(deps, STAGE_RULE.name, e, async () => {
        runs++;
        throw new Error('down');
      }),
    ).rejects.toThrow('down');
    expect(await onceFor(deps, STAGE_RULE.name, e, async () => void runs++)).toBe('done');
    expect(await onceFor(deps, STAGE_RULE.name, e, async () => void runs++)).toBe('duplicate');
    expect(runs).toBe(2);
    expect(store.processed.get(`${uuid(7)}#${STAGE_RULE.name}`)).toBe(
      Date.parse('2026-12-03T00:00:00Z') / 1000 + 7 * 24 * 3600,
    );
  });
});

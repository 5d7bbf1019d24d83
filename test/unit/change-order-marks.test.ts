import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MarkRole, type Mark } from '../../lib/model/entities.ts';
import type { StoreOp } from '../../lib/ports/store.ts';
import {
  foldChangeOrderMarks,
  tagMarksAsRead,
  unitMarksAsRead,
  type StoredMark,
} from '../../lib/store/change-order-marks.ts';

/** Two ChangeOrders' Tags (start, end, release) and a plain Tag. */
const CO = [
  { id: 'co-a', start: 'ta-start', end: 'ta-end', publish: 'ta-publish' },
  { id: 'co-b', start: 'tb-start', end: 'tb-end', publish: 'tb-publish' },
];
const UNITS = ['u1', 'u2', 'u3', 'u4'];
/** A mark written at `at` (by default a time of its revision's, so marks written apart differ). */
const mark = (
  TagID: string,
  UnitID: string,
  RevisionNum: number,
  co?: (typeof CO)[number],
  Role?: MarkRole,
  at = RevisionNum,
): Mark => ({
  TagID,
  UnitID,
  SpaceID: `s-${UnitID}`,
  RevisionNum,
  UpdatedAt: `2026-12-03T00:00:${String(at % 60).padStart(2, '0')}.000Z`,
  ...(co ? { ChangeOrderID: co.id, Role } : {}),
});
const create = (m: Mark): StoreOp => ({ op: 'create', kind: 'Mark', item: m });
const key = (m: Mark) => `${m.TagID}#${m.UnitID}`;

/** Stores ops as the table does: the last write of a key wins. */
function store(into: Map<string, StoredMark>, ops: StoreOp[]): void {
  for (const o of foldChangeOrderMarks(ops)) into.set(key(o.item as Mark), o.item as StoredMark);
}
/** What was meant to be written, unfolded: the marks a reader must see. */
function meant(into: Map<string, Mark>, ops: StoreOp[]): void {
  for (const o of ops) into.set(key(o.item as Mark), o.item as Mark);
}
const byTag = (a: Mark, b: Mark) => (a.TagID < b.TagID ? -1 : a.TagID > b.TagID ? 1 : 0);
const byUnit = (a: Mark, b: Mark) => (a.UnitID < b.UnitID ? -1 : a.UnitID > b.UnitID ? 1 : 0);

/**
 * A history of mark writes: promotions (a Unit's three marks written at one time, the release one on the
 * end's revision, in any order, in one transaction or split across two anywhere, as a 100-op chunk once
 * split them; or written at different times), adopts (a release mark put on its own), a plain Tag's
 * marks, and start and release marks written alone as earlier versions did.
 */
const write = fc.oneof(
  fc.record({
    kind: fc.constant('promote' as const),
    co: fc.nat(1),
    unit: fc.nat(3),
    start: fc.nat(5),
    step: fc.nat(3),
    split: fc.nat(3),
    order: fc.nat(5),
    apart: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('adopt' as const), co: fc.nat(1), unit: fc.nat(3), rev: fc.nat(12) }),
  fc.record({ kind: fc.constant('plain' as const), unit: fc.nat(3), rev: fc.nat(12) }),
  fc.record({
    kind: fc.constant('legacy' as const),
    co: fc.nat(1),
    unit: fc.nat(3),
    start: fc.nat(5),
    step: fc.nat(3),
  }),
);

type Write = typeof write extends fc.Arbitrary<infer T> ? T : never;

/** The transactions one write makes (`taken`: the (ChangeOrder, Unit) pairs already marked). */
function txOf(w: Write, taken: Set<string>): StoreOp[][] {
  const unit = UNITS[w.unit]!;
  if (w.kind === 'plain') return [[{ op: 'put', kind: 'Mark', item: mark('plain', unit, w.rev) }]];
  const co = CO[w.co]!;
  if (w.kind === 'adopt')
    return taken.has(`${co.id}#${unit}`)
      ? [[{ op: 'put', kind: 'Mark', item: mark(co.publish, unit, w.rev, co, MarkRole.publish) }]]
      : [];
  // A Unit takes a ChangeOrder once (its marks are created, never twice).
  if (taken.has(`${co.id}#${unit}`)) return [];
  taken.add(`${co.id}#${unit}`);
  const end = w.start + w.step;
  // Written at one time, as a promotion writes them (apart: each at a time of its own).
  const at = (i: number) => (w.kind === 'promote' && !w.apart ? 30 : 40 + i);
  const ops = [
    create(mark(co.start, unit, w.start, co, MarkRole.start, at(0))),
    create(mark(co.end, unit, end, co, MarkRole.end, at(1))),
    create(mark(co.publish, unit, end, co, MarkRole.publish, at(2))),
  ];
  // Before the start mark was stored with the end mark, each was an item; before that, the release mark too.
  if (w.kind === 'legacy') return [[ops[0]!], [ops[1]!], [ops[2]!]];
  const ordered = ORDERS[w.order]!.map((i) => ops[i]!);
  return w.split ? [ordered.slice(0, w.split), ordered.slice(w.split)] : [ordered];
}

/** The six orders of a Unit's three marks in a transaction. */
const ORDERS = [
  [0, 1, 2],
  [0, 2, 1],
  [1, 0, 2],
  [1, 2, 0],
  [2, 0, 1],
  [2, 1, 0],
];

describe('a ChangeOrder’s start and release marks: stored with their end mark, read as before', () => {
  it('a Unit’s three marks written together are one item: the end mark carries the start Tag and revision and the release Tag', () => {
    const co = CO[0]!;
    const ops = [
      create(mark(co.start, 'u1', 1, co, MarkRole.start, 9)),
      create(mark(co.end, 'u1', 3, co, MarkRole.end, 9)),
      create(mark(co.publish, 'u1', 3, co, MarkRole.publish, 9)),
      create(mark('plain', 'u1', 3)),
    ];
    const folded = foldChangeOrderMarks(ops);
    expect(folded.map((o) => (o.item as StoredMark).TagID)).toEqual(['ta-end', 'plain']);
    expect(folded[0]!.item).toMatchObject({
      TagID: 'ta-end',
      RevisionNum: 3,
      StartTagID: 'ta-start',
      StartRevisionNum: 1,
      PublishTagID: 'ta-publish',
    });
    expect(unitMarksAsRead(folded.map((o) => o.item as StoredMark))).toEqual(
      ops.map((o) => o.item as Mark).sort(byTag),
    );
    // A release mark on another revision than the end (never written so today), or a mark written at another time, stays an item of its own.
    const apart = foldChangeOrderMarks([
      create(mark(co.end, 'u1', 3, co, MarkRole.end, 9)),
      create(mark(co.publish, 'u1', 4, co, MarkRole.publish, 9)),
      create(mark(co.start, 'u1', 1, co, MarkRole.start, 8)),
    ]);
    expect(apart).toHaveLength(3);
    expect(apart[0]!.item).not.toHaveProperty('PublishTagID');
    expect(apart[0]!.item).not.toHaveProperty('StartTagID');
    // Another Unit's or ChangeOrder's start mark is not carried.
    const others = foldChangeOrderMarks([
      create(mark(co.end, 'u1', 3, co, MarkRole.end, 9)),
      create(mark(co.start, 'u2', 1, co, MarkRole.start, 9)),
      create(mark(CO[1]!.start, 'u1', 1, CO[1], MarkRole.start, 9)),
    ]);
    expect(others).toHaveLength(3);
  });

  it('reads every Unit’s and Tag’s marks exactly as the unfolded writes would have left them, over any history', () => {
    fc.assert(
      fc.property(fc.array(write, { maxLength: 30 }), (history) => {
        const stored = new Map<string, StoredMark>();
        const expected = new Map<string, Mark>();
        const taken = new Set<string>();
        // How many marks a promotion wrote at one time in the transaction of their end mark.
        let folds = 0;
        for (const w of history) {
          const txs = txOf(w, taken);
          for (const tx of txs) {
            if (w.kind === 'promote' && !w.apart && tx.some((o) => (o.item as Mark).Role === MarkRole.end))
              folds += tx.length - 1;
            store(stored, tx);
            meant(expected, tx);
          }
        }
        const all = [...stored.values()];
        const want = [...expected.values()];
        for (const u of UNITS)
          expect(unitMarksAsRead(all.filter((m) => m.UnitID === u))).toEqual(
            want.filter((m) => m.UnitID === u).sort(byTag),
          );
        for (const co of CO) {
          const own = (t: string) => all.filter((m) => m.TagID === t);
          for (const t of [co.start, co.publish])
            expect(tagMarksAsRead(t, own(t), own(co.end))).toEqual(want.filter((m) => m.TagID === t).sort(byUnit));
          expect(tagMarksAsRead(co.end, own(co.end))).toEqual(want.filter((m) => m.TagID === co.end).sort(byUnit));
        }
        // Never more items than were meant; only end marks carry others.
        expect(all.length).toBeLessThanOrEqual(want.length);
        expect(all.some((m) => ('PublishTagID' in m || 'StartTagID' in m) && m.Role !== MarkRole.end)).toBe(false);
        // Each start and release mark written at one time with its end mark, in its transaction, is no item of its own.
        if (history.every((w) => w.kind === 'promote')) expect(all.length).toBe(want.length - folds);
      }),
      { numRuns: 300 },
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MarkRole, type Mark } from '../../lib/model/entities.ts';
import type { StoreOp } from '../../lib/ports/store.ts';
import { foldReleaseMarks, tagMarksAsRead, unitMarksAsRead, type StoredMark } from '../../lib/store/release-marks.ts';

/** Two ChangeOrders' Tags (start, end, release) and a plain Tag. */
const CO = [
  { id: 'co-a', start: 'ta-start', end: 'ta-end', publish: 'ta-publish' },
  { id: 'co-b', start: 'tb-start', end: 'tb-end', publish: 'tb-publish' },
];
const UNITS = ['u1', 'u2', 'u3', 'u4'];
const mark = (TagID: string, UnitID: string, RevisionNum: number, co?: (typeof CO)[number], Role?: MarkRole): Mark => ({ TagID, UnitID, SpaceID: `s-${UnitID}`, RevisionNum, UpdatedAt: `2026-12-03T00:00:0${RevisionNum % 10}.000Z`, ...(co ? { ChangeOrderID: co.id, Role } : {}) });
const create = (m: Mark): StoreOp => ({ op: 'create', kind: 'Mark', item: m });
const key = (m: Mark) => `${m.TagID}#${m.UnitID}`;

/** Stores ops as the table does: the last write of a key wins. */
function store(into: Map<string, StoredMark>, ops: StoreOp[]): void {
  for (const o of foldReleaseMarks(ops)) into.set(key(o.item as Mark), o.item as StoredMark);
}
/** What was meant to be written, unfolded: the marks a reader must see. */
function meant(into: Map<string, Mark>, ops: StoreOp[]): void {
  for (const o of ops) into.set(key(o.item as Mark), o.item as Mark);
}
const byTag = (a: Mark, b: Mark) => (a.TagID < b.TagID ? -1 : a.TagID > b.TagID ? 1 : 0);
const byUnit = (a: Mark, b: Mark) => (a.UnitID < b.UnitID ? -1 : a.UnitID > b.UnitID ? 1 : 0);

/**
 * A history of mark writes: promotions (a Unit's three marks, the release one on the end's revision,
 * in one transaction or split across two, as a 100-op chunk once split them), adopts (a release mark
 * put on its own), a plain Tag's marks, and release marks written alone as the previous version did.
 */
const write = fc.oneof(
  fc.record({ kind: fc.constant('promote' as const), co: fc.nat(1), unit: fc.nat(3), start: fc.nat(5), step: fc.nat(3), split: fc.boolean(), endFirst: fc.boolean() }),
  fc.record({ kind: fc.constant('adopt' as const), co: fc.nat(1), unit: fc.nat(3), rev: fc.nat(12) }),
  fc.record({ kind: fc.constant('plain' as const), unit: fc.nat(3), rev: fc.nat(12) }),
  fc.record({ kind: fc.constant('legacy' as const), co: fc.nat(1), unit: fc.nat(3), start: fc.nat(5), step: fc.nat(3) }),
);

type Write = typeof write extends fc.Arbitrary<infer T> ? T : never;

/** The transactions one write makes (`taken`: the (ChangeOrder, Unit) pairs already marked). */
function txOf(w: Write, taken: Set<string>): StoreOp[][] {
  const unit = UNITS[w.unit]!;
  if (w.kind === 'plain') return [[{ op: 'put', kind: 'Mark', item: mark('plain', unit, w.rev) }]];
  const co = CO[w.co]!;
  if (w.kind === 'adopt') return taken.has(`${co.id}#${unit}`) ? [[{ op: 'put', kind: 'Mark', item: mark(co.publish, unit, w.rev, co, MarkRole.publish) }]] : [];
  // A Unit takes a ChangeOrder once (its marks are created, never twice).
  if (taken.has(`${co.id}#${unit}`)) return [];
  taken.add(`${co.id}#${unit}`);
  const end = w.start + w.step;
  const ops = [create(mark(co.start, unit, w.start, co, MarkRole.start)), create(mark(co.end, unit, end, co, MarkRole.end)), create(mark(co.publish, unit, end, co, MarkRole.publish))];
  if (w.kind === 'legacy') return [ops.slice(0, 2), ops.slice(2)];
  if (!w.endFirst) ops.reverse();
  return w.split ? [ops.slice(0, 2), ops.slice(2)] : [ops];
}

describe('release marks: stored with their end mark, read as before', () => {
  it('a Unit’s three marks written together are two items: the end mark carries the release Tag', () => {
    const co = CO[0]!;
    const ops = [create(mark(co.start, 'u1', 1, co, MarkRole.start)), create(mark(co.end, 'u1', 3, co, MarkRole.end)), create(mark(co.publish, 'u1', 3, co, MarkRole.publish)), create(mark('plain', 'u1', 3))];
    const folded = foldReleaseMarks(ops);
    expect(folded.map((o) => (o.item as StoredMark).TagID)).toEqual(['ta-start', 'ta-end', 'plain']);
    expect((folded[1]!.item as StoredMark).PublishTagID).toBe('ta-publish');
    // A release mark on another revision than the end (never written so today) stays an item of its own.
    const apart = foldReleaseMarks([create(mark(co.end, 'u1', 3, co, MarkRole.end)), create(mark(co.publish, 'u1', 4, co, MarkRole.publish))]);
    expect(apart).toHaveLength(2);
    expect((apart[0]!.item as StoredMark).PublishTagID).toBeUndefined();
  });

  it('reads every Unit’s and Tag’s marks exactly as the unfolded writes would have left them, over any history', () => {
    fc.assert(
      fc.property(fc.array(write, { maxLength: 30 }), (history) => {
        const stored = new Map<string, StoredMark>();
        const expected = new Map<string, Mark>();
        const taken = new Set<string>();
        for (const w of history) {
          for (const tx of txOf(w, taken)) {
            store(stored, tx);
            meant(expected, tx);
          }
        }
        const all = [...stored.values()];
        const want = [...expected.values()];
        for (const u of UNITS) expect(unitMarksAsRead(all.filter((m) => m.UnitID === u))).toEqual(want.filter((m) => m.UnitID === u).sort(byTag));
        for (const co of CO) {
          const own = (t: string) => all.filter((m) => m.TagID === t);
          expect(tagMarksAsRead(co.publish, own(co.publish), own(co.end))).toEqual(want.filter((m) => m.TagID === co.publish).sort(byUnit));
          for (const t of [co.start, co.end]) expect(tagMarksAsRead(t, own(t))).toEqual(want.filter((m) => m.TagID === t).sort(byUnit));
        }
        // Never more items than were meant, and fewer by one per release mark written with its end mark.
        expect(all.length).toBeLessThanOrEqual(want.length);
        expect(all.some((m) => 'PublishTagID' in m && m.Role !== MarkRole.end)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

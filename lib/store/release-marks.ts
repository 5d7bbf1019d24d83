import { MarkRole, type Mark } from '../model/entities.ts';
import type { StoreOp } from '../ports/store.ts';

/**
 * How a ChangeOrder's release (publish) marks are stored. Each is placed on the revision the change
 * ended at, with the end mark, and moves only when a later fix is adopted (`adoptIntoRelease`): until
 * then it is the end mark's twin. So where both are created together on one revision, one item holds
 * them: the end mark carries its release Tag (`PublishTagID`), one item (and its index entry) fewer
 * per Unit promoted. A release mark written on its own (adopted, or by a version before this one) is
 * an item of its own and wins over the one the end mark carries. Readers see the same marks either way.
 */

/** A mark as stored: an end mark may also stand for its ChangeOrder's release mark on the same revision. */
export type StoredMark = Mark & { PublishTagID?: string };

const itemOf = (o: StoreOp) => o.item as StoredMark;
const pairKey = (m: Mark) => `${m.ChangeOrderID}#${m.UnitID}`;

/** The ops with each release mark created alongside its end mark, on the same revision, folded into it. */
export function foldReleaseMarks(ops: StoreOp[]): StoreOp[] {
  const created = (o: StoreOp, role: MarkRole) => o.op === 'create' && o.kind === 'Mark' && itemOf(o).Role === role && !!itemOf(o).ChangeOrderID;
  const ends = new Map(ops.filter((o) => created(o, MarkRole.end)).map((o) => [pairKey(itemOf(o)), o]));
  if (!ends.size) return ops;
  const carried = new Map<StoreOp, string>();
  const folded = new Set<StoreOp>();
  for (const o of ops) {
    if (!created(o, MarkRole.publish)) continue;
    const p = itemOf(o);
    const end = ends.get(pairKey(p));
    if (!end || carried.has(end) || itemOf(end).RevisionNum !== p.RevisionNum || itemOf(end).SpaceID !== p.SpaceID) continue;
    carried.set(end, p.TagID);
    folded.add(o);
  }
  if (!folded.size) return ops;
  return ops.filter((o) => !folded.has(o)).map((o) => (carried.has(o) ? { ...o, item: { ...itemOf(o), PublishTagID: carried.get(o) } } : o));
}

/** A stored mark as readers know it (without what it carries). */
function plain(m: StoredMark): Mark {
  const { PublishTagID: _, ...mark } = m;
  return mark;
}

/** The release mark an end mark carries. */
function carriedRelease(end: StoredMark): Mark {
  return { TagID: end.PublishTagID!, UnitID: end.UnitID, SpaceID: end.SpaceID, RevisionNum: end.RevisionNum, UpdatedAt: end.UpdatedAt, ChangeOrderID: end.ChangeOrderID, Role: MarkRole.publish };
}

/** A Unit's marks as read from its stored ones: with the release marks its end marks carry, where none of their own is stored. In Tag order. */
export function unitMarksAsRead(stored: StoredMark[]): Mark[] {
  const own = new Set(stored.map((m) => m.TagID));
  const carried = stored.filter((m) => m.PublishTagID && !own.has(m.PublishTagID)).map(carriedRelease);
  return [...stored.map(plain), ...carried].sort((a, b) => (a.TagID < b.TagID ? -1 : a.TagID > b.TagID ? 1 : 0));
}

/**
 * A Tag's marks as read from its own stored ones and, for a ChangeOrder's release Tag, its end Tag's
 * (`followed`): the release marks those carry, on Units where the release Tag has none of its own. In Unit order.
 */
export function tagMarksAsRead(tagId: string, own: StoredMark[], followed: StoredMark[] = []): Mark[] {
  const units = new Set(own.map((m) => m.UnitID));
  const carried = followed.filter((m) => m.PublishTagID === tagId && !units.has(m.UnitID)).map(carriedRelease);
  return [...own.map(plain), ...carried].sort((a, b) => (a.UnitID < b.UnitID ? -1 : a.UnitID > b.UnitID ? 1 : 0));
}

import { MarkRole, type Mark } from '../model/entities.ts';
import type { StoreOp } from '../ports/store.ts';

/**
 * How a ChangeOrder's start and release (publish) marks are stored. A Unit's three marks (start, end,
 * release) are created together, in the transaction that lands its change (or marks it unchanged): the
 * start on the revision the change starts from, the end and the release on the one it ends at. After
 * that the start and end never move (a Unit takes a ChangeOrder once), and the release moves only when a
 * later fix is adopted (`adoptIntoRelease`). So where they are created together, one item holds all
 * three: the end mark carries its start Tag and revision (`StartTagID`, `StartRevisionNum`) and its
 * release Tag (`PublishTagID`) — two items (and their index entries) fewer per Unit promoted. A start
 * or release mark written on its own (adopted, created apart, or written by a version before this one)
 * is an item of its own and wins over the one the end mark carries. Readers see the same marks either way.
 */

/** A mark as stored: an end mark may also stand for its ChangeOrder's start mark and release mark. */
export type StoredMark = Mark & { PublishTagID?: string; StartTagID?: string; StartRevisionNum?: number };

const itemOf = (o: StoreOp) => o.item as StoredMark;
const pairKey = (m: Mark) => `${m.ChangeOrderID}#${m.UnitID}`;

/**
 * The ops with each start and release mark created alongside its end mark folded into the end mark:
 * a release mark on the same revision, a start mark on any (the end mark keeps its revision); each only
 * when written at the same time in the same Space, so what is read back is exactly what was written.
 */
export function foldChangeOrderMarks(ops: StoreOp[]): StoreOp[] {
  const created = (o: StoreOp, role: MarkRole) =>
    o.op === 'create' && o.kind === 'Mark' && itemOf(o).Role === role && !!itemOf(o).ChangeOrderID;
  const ends = new Map(ops.filter((o) => created(o, MarkRole.end)).map((o) => [pairKey(itemOf(o)), o]));
  if (!ends.size) return ops;
  const carried = new Map<StoreOp, Pick<StoredMark, 'PublishTagID' | 'StartTagID' | 'StartRevisionNum'>>();
  const folded = new Set<StoreOp>();
  for (const o of ops) {
    const start = created(o, MarkRole.start);
    if (!start && !created(o, MarkRole.publish)) continue;
    const m = itemOf(o);
    const end = ends.get(pairKey(m));
    if (!end || itemOf(end).SpaceID !== m.SpaceID || itemOf(end).UpdatedAt !== m.UpdatedAt) continue;
    const c = carried.get(end) ?? {};
    if (start) {
      if (c.StartTagID) continue;
      c.StartTagID = m.TagID;
      c.StartRevisionNum = m.RevisionNum;
    } else {
      if (c.PublishTagID || itemOf(end).RevisionNum !== m.RevisionNum) continue;
      c.PublishTagID = m.TagID;
    }
    carried.set(end, c);
    folded.add(o);
  }
  if (!folded.size) return ops;
  return ops
    .filter((o) => !folded.has(o))
    .map((o) => (carried.has(o) ? { ...o, item: { ...itemOf(o), ...carried.get(o) } } : o));
}

/** A stored mark as readers know it (without what it carries). */
function plain(m: StoredMark): Mark {
  const { PublishTagID: _p, StartTagID: _s, StartRevisionNum: _r, ...mark } = m;
  return mark;
}

/** The start and release marks an end mark carries. */
function carriedBy(end: StoredMark): Mark[] {
  const as = (TagID: string, RevisionNum: number, Role: MarkRole): Mark => ({
    TagID,
    UnitID: end.UnitID,
    SpaceID: end.SpaceID,
    RevisionNum,
    UpdatedAt: end.UpdatedAt,
    ChangeOrderID: end.ChangeOrderID,
    Role,
  });
  const out: Mark[] = [];
  if (end.StartTagID) out.push(as(end.StartTagID, end.StartRevisionNum ?? 0, MarkRole.start));
  if (end.PublishTagID) out.push(as(end.PublishTagID, end.RevisionNum, MarkRole.publish));
  return out;
}

/** A Unit's marks as read from its stored ones: with the start and release marks its end marks carry, where none of their own is stored. In Tag order. */
export function unitMarksAsRead(stored: StoredMark[]): Mark[] {
  const own = new Set(stored.map((m) => m.TagID));
  const carried = stored.flatMap(carriedBy).filter((m) => !own.has(m.TagID));
  return [...stored.map(plain), ...carried].sort((a, b) => (a.TagID < b.TagID ? -1 : a.TagID > b.TagID ? 1 : 0));
}

/**
 * A Tag's marks as read from its own stored ones and, for a ChangeOrder's start or release Tag, its end
 * Tag's (`followed`): the marks those carry for it, on Units where the Tag has none of its own. In Unit order.
 */
export function tagMarksAsRead(tagId: string, own: StoredMark[], followed: StoredMark[] = []): Mark[] {
  const units = new Set(own.map((m) => m.UnitID));
  const carried = followed.flatMap(carriedBy).filter((m) => m.TagID === tagId && !units.has(m.UnitID));
  return [...own.map(plain), ...carried].sort((a, b) => (a.UnitID < b.UnitID ? -1 : a.UnitID > b.UnitID ? 1 : 0));
}

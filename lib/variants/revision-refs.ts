import type { Caller, ChangeOrder, ChangeSet, Mark, Space, Tag, Unit } from '../model/entities.ts';
import { BatonError, Conflict, Invalid, NotFound } from '../model/errors.ts';
import { findInSpace } from './lookup.ts';
import type { UnitDeps } from './ports.ts';
import { noRevision } from './revisions.ts';

/**
 * Revision references — a number, `HeadRevisionNum`, `LastReleasedRevisionNum`, `Tag:`, `ChangeSet:`,
 * `ChangeOrder:` and `Before:` one of the last three — resolved for one Unit or a Space's Units at once.
 */

/**
 * Resolves a revision reference for one Unit: a number, `HeadRevisionNum`, `LastReleasedRevisionNum`,
 * `Tag:<tag>`, `ChangeSet:<cs>` (its end), `ChangeOrder:<co>` (its release Tag) and `Before:` one of the
 * last three (the revision before what it marks; for a ChangeOrder, the state the change started from).
 */
export async function revisionNum(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  ref: string | number,
): Promise<number> {
  return (await revisionNums(deps, caller, space, [unit], ref))[0]!;
}

/**
 * Resolves one revision reference for each of a Space's Units (as `revisionNum`, in their order; the first
 * that has none refuses): the Tag, ChangeSet or ChangeOrder named is found once, and the marks of the Units
 * are read by key in one batch, not each Unit's marks whole.
 */
export async function revisionNums(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  units: Unit[],
  ref: string | number,
): Promise<number[]> {
  return (await revisionNumsEach(deps, caller, space, units, ref)).map((n) => {
    if (n instanceof BatonError) throw n;
    return n;
  });
}

/**
 * As `revisionNums`, each Unit's answer its own: the revision, or why that Unit has none (a Tag that marks
 * no revision of it, say). What fails for every Unit alike (a Tag that does not exist, a reference that is
 * not one) is thrown.
 */
export async function revisionNumsEach(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  units: Unit[],
  ref: string | number,
): Promise<(number | BatonError)[]> {
  const each = (f: (unit: Unit) => number) =>
    units.map((unit) => {
      try {
        return f(unit);
      } catch (e) {
        if (e instanceof BatonError) return e;
        throw e;
      }
    });
  if (typeof ref === 'number' || /^\d+$/.test(ref)) {
    const n = Number(ref);
    return each((unit) => {
      if (n < 1 || n > unit.HeadRevisionNum) throw noRevision(unit, n);
      return n;
    });
  }
  if (ref === 'HeadRevisionNum') return units.map((u) => u.HeadRevisionNum);
  if (ref === 'LastReleasedRevisionNum') {
    return each((unit) => {
      if (!unit.LastReleasedRevisionNum) throw new NotFound(`unit '${unit.Slug}' has never been released`);
      return unit.LastReleasedRevisionNum;
    });
  }
  const before = ref.startsWith('Before:');
  const rest = before ? ref.slice('Before:'.length) : ref;
  const marksOf = async (tagIds: string[]) => {
    const read = await deps.store.marksAt(
      units.map((u) => u.UnitID),
      tagIds,
    );
    return (unit: Unit, tagId: string | undefined) => read.find((m) => m.UnitID === unit.UnitID && m.TagID === tagId);
  };
  /** The revision a mark names (before it, with Before:), or none when the Unit has no such mark. */
  const marked = (unit: Unit, mark: Mark | undefined, what: string) => {
    if (!mark) throw new NotFound(`${what} does not mark a revision of unit '${unit.Slug}'`);
    if (before) return mark.RevisionNum > 1 ? mark.RevisionNum - 1 : missing(unit, `before ${what}`);
    return mark.RevisionNum;
  };
  if (rest.startsWith('Tag:')) {
    const { item: tag } = await findInSpace<Tag>(deps, caller, space, 'Tag', rest.slice(4));
    const at = await tagMarksOn(
      deps,
      tag,
      units.map((u) => u.UnitID),
    );
    return each((unit) => marked(unit, at.get(unit.UnitID), `tag '${tag.Slug}'`));
  }
  if (rest.startsWith('ChangeSet:')) {
    const { item: cs } = await findInSpace<ChangeSet>(deps, caller, space, 'ChangeSet', rest.slice(10));
    const tagId = before ? cs.StartTagID : cs.EndTagID;
    if (!tagId) throw new Conflict(`changeset '${cs.Slug}' is still open; close it before naming its revisions`);
    const at = await marksOf([tagId]);
    return each((unit) => {
      const mark = at(unit, tagId);
      if (mark)
        return before && mark.RevisionNum === 0
          ? missing(unit, `the start of changeset '${cs.Slug}'`)
          : mark.RevisionNum;
      // Before: a ChangeSet's start is its own mark; with none, the Unit was not in it.
      return marked(unit, mark, `changeset '${cs.Slug}'`);
    });
  }
  if (rest.startsWith('ChangeOrder:')) {
    const { item: co } = await findInSpace<ChangeOrder>(
      deps,
      caller,
      space,
      'ChangeOrder',
      rest.slice('ChangeOrder:'.length),
    );
    // The release Tag names what a Release of the change bundles; Before: is the state the change started from:
    // once a demote restored the Unit, exactly what the restore Tag marks (that state, written again). The end
    // Tag is read with them: its mark's item may hold the start and release marks.
    const tagId = before ? co.StartTagID : co.PublishTagID;
    const restoreTag = before ? co.RestoreTagID : undefined;
    const at = await marksOf([co.EndTagID, tagId, ...(restoreTag ? [restoreTag] : [])]);
    return each((unit) => {
      const restored = at(unit, restoreTag);
      if (restored) return restored.RevisionNum;
      const mark = at(unit, tagId);
      if (!mark) throw new NotFound(`unit '${unit.Slug}' has not taken change order '${co.Slug}'`);
      return mark.RevisionNum;
    });
  }
  throw new Invalid(
    `revision '${ref}' must be a number, HeadRevisionNum, LastReleasedRevisionNum, Tag:<tag>, ChangeSet:<changeset>, ChangeOrder:<space>/<change-order>, or Before: one of the last three`,
  );
}

/** A Tag's marks on some Units, by key in one batch. */
export async function tagMarksOn(deps: UnitDeps, tag: Tag, unitIds: string[]): Promise<Map<string, Mark>> {
  const read = await deps.store.marksAt(unitIds, [tag.TagID]);
  return new Map(read.map((m) => [m.UnitID, m]));
}

function missing(unit: Unit, what: string): never {
  throw new NotFound(`unit '${unit.Slug}' has no revision ${what}`);
}

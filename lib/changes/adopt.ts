import type { Caller, ChangeOrder, Space, Unit } from '../model/entities.ts';
import { Conflict } from '../model/errors.ts';
import { findInSpace } from '../variants/lookup.ts';
import type { TagMark } from '../variants/units.ts';
import type { ChangeDeps } from './ports.ts';

/**
 * Moves a ChangeOrder's release Tag on one Unit to adopt a later fix. It cannot move before where the
 * change landed or what is released, nor onto a revision with validation errors, and once a Release
 * in the Space was published at it, its marks there are fixed.
 */
export async function adoptIntoRelease(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  ref: string,
  num: number,
  move: boolean,
): Promise<TagMark> {
  const { item: co } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', ref);
  // The change's marks on this Unit, read by key, not the Unit's marks whole.
  const marks = await deps.store.marksAt([unit.UnitID], [co.EndTagID, co.PublishTagID]);
  const end = marks.find((m) => m.TagID === co.EndTagID);
  const publish = marks.find((m) => m.TagID === co.PublishTagID);
  if (!end || !publish) throw new Conflict(`unit '${unit.Slug}' has not taken change order '${co.Slug}'`);
  if (!move && publish.RevisionNum !== num)
    throw new Conflict(
      `change order '${co.Slug}' already marks revision ${publish.RevisionNum} of unit '${unit.Slug}' for release; use --move to move it to ${num}`,
    );
  if (num < end.RevisionNum)
    throw new Conflict(
      `the release tag of '${co.Slug}' cannot move before where the change landed (revision ${end.RevisionNum})`,
    );
  if (num < unit.LastReleasedRevisionNum)
    throw new Conflict(
      `the release tag of '${co.Slug}' cannot move before what is released (revision ${unit.LastReleasedRevisionNum})`,
    );
  const rev = await deps.store.getRevision(unit.UnitID, num);
  if (rev && Object.keys(rev.ValidationErrors ?? {}).length)
    throw new Conflict(
      `revision ${num} of unit '${unit.Slug}' has validation errors: ${Object.values(rev.ValidationErrors!).join('; ')}`,
    );
  // Read by the ChangeOrder: the few Releases made at it in this Space, not the Space's history of Releases.
  const released = (await deps.store.releasesAtChangeOrder(space.SpaceID, co.ChangeOrderID)).find((r) => r.Published);
  if (released)
    throw new Conflict(
      `release ${released.ReleaseNum} of space '${space.Slug}' was published at change order '${co.Slug}': its release tag there is fixed`,
    );
  if (publish.RevisionNum !== num)
    await deps.store.transact([
      { op: 'put', kind: 'Mark', item: { ...publish, RevisionNum: num, UpdatedAt: deps.now().toISOString() } },
    ]);
  return {
    TagID: co.PublishTagID,
    TagSlug: `${co.Slug}-co-publish`,
    UnitID: unit.UnitID,
    SpaceID: space.SpaceID,
    RevisionNum: num,
  };
}

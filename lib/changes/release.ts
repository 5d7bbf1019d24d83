import type { Caller, ChangeOrder, Space } from '../model/entities.ts';
import { publish, type PublishResult } from '../releases/publish.ts';
import { findInSpace } from '../variants/lookup.ts';
import { Conflict } from '../model/errors.ts';
import { refuseIfHeld } from './holds.ts';
import { checkReleaseGates, recordRelease } from './progress.ts';
import type { ChangeDeps } from './ports.ts';

const CHANGE_ORDER = 'ChangeOrder:';

/**
 * A Space the change has only partly landed in (a promotion stopped part-way: some of its Units carry
 * the change, the Space is not recorded as having taken it) is not released as the change: a rerun of
 * the promotion finishes it first.
 */
async function refusePartial(deps: ChangeDeps, co: ChangeOrder, space: Space): Promise<void> {
  if (space.SpaceID === co.SpaceID || !co.InScopeSpaceIDs.includes(space.SpaceID)) return;
  // The Space's own progress, read by key (not the ChangeOrder's progress in every Space).
  if ((await deps.store.progressAt(co.ChangeOrderID, space.SpaceID))?.ResolvedAt) return;
  const marked = (await deps.store.marksOfTag(co.EndTagID)).filter((m) => m.SpaceID === space.SpaceID);
  if (marked.length) {
    throw new Conflict(
      `change order '${co.Slug}' has only partly landed in space '${space.Slug}' (${marked.length} of its Units carry it, the space has not taken it): promote it again to finish before releasing it (cub variant promote ${space.Slug} --change-order ${(await deps.store.getSpace(co.OrganizationID, co.SpaceID))?.Slug ?? co.SpaceID}/${co.Slug})`,
    );
  }
}

/**
 * Publishes a Release of a Space. At `ChangeOrder:<co>` it is a Release of that ChangeOrder: its Stage's
 * release gates must hold first. A Release made is recorded on every ChangeOrder of the Space it carries.
 */
export async function publishRelease(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  o: { revision?: string | number; dryRun?: boolean; description?: string },
): Promise<{ made: boolean; result: PublishResult }> {
  let changeOrderId: string | undefined;
  let co: ChangeOrder | undefined;
  if (typeof o.revision === 'string' && o.revision.startsWith(CHANGE_ORDER))
    ({ item: co } = await findInSpace<ChangeOrder>(
      deps,
      caller,
      space,
      'ChangeOrder',
      o.revision.slice(CHANGE_ORDER.length),
    ));
  // A hold blocking publish in the Space (its own, its ChangeOrder's workflow's, the organization's) refuses it.
  if (!o.dryRun)
    await refuseIfHeld(
      deps,
      caller,
      { action: 'publish', spaceIds: [space.SpaceID], changeWorkflowId: co?.ChangeWorkflowID },
      `publish a release in space '${space.Slug}'`,
    );
  if (co) {
    await refusePartial(deps, co, space);
    await checkReleaseGates(deps, caller, co, space);
    changeOrderId = co.ChangeOrderID;
  }
  const result = await publish(deps, caller, space, {
    revision: o.revision,
    dryRun: o.dryRun,
    description: o.description,
    changeOrderId,
  });
  const made = !!result.Release && !result.Message && !result.DryRun;
  if (made) await recordRelease(deps, caller, space, result.Release!);
  return { made, result };
}

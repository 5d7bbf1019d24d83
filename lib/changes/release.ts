import type { Caller, ChangeOrder, Space } from '../model/entities.ts';
import { publish, type PublishResult } from '../releases/publish.ts';
import { findInSpace } from '../variants/lookup.ts';
import type { Deps } from '../ports/deps.ts';
import { checkReleaseGates, recordRelease } from './progress.ts';

const CHANGE_ORDER = 'ChangeOrder:';

/**
 * Publishes a Release of a Space. At `ChangeOrder:<co>` it is a Release of that ChangeOrder: its Stage's
 * release gates must hold first. A Release made is recorded on every ChangeOrder of the Space it carries.
 */
export async function publishRelease(deps: Deps, caller: Caller, space: Space, o: { revision?: string | number; dryRun?: boolean; description?: string }): Promise<{ made: boolean; result: PublishResult }> {
  let changeOrderId: string | undefined;
  if (typeof o.revision === 'string' && o.revision.startsWith(CHANGE_ORDER)) {
    const { item: co } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', o.revision.slice(CHANGE_ORDER.length));
    await checkReleaseGates(deps, caller, co, space);
    changeOrderId = co.ChangeOrderID;
  }
  const result = await publish(deps, caller, space, { revision: o.revision, dryRun: o.dryRun, description: o.description, changeOrderId });
  const made = !!result.Release && !result.Message && !result.DryRun;
  if (made) await recordRelease(deps, caller, space, result.Release!);
  return { made, result };
}

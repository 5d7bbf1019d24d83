import type { ChangeOrder } from '../../model/entities.ts';
import { Invalid } from '../../model/errors.ts';
import { applyConflicts, dismissConflicts } from '../../variants/conflicts.ts';
import { restoreUnit, revertUnit } from '../../variants/history.ts';
import { findInSpace } from '../../variants/lookup.ts';
import { mergeFromSource, upgradeUnit } from '../../variants/merge.ts';
import { resolveLinks } from '../../variants/resolve.ts';
import { pathUnit, withSpace } from '../resolve.ts';
import { route } from '../route.ts';
import { NoQuery, ResolveConflicts, ResolveLinks, RestoreUnit, RevertUnit, UpgradeUnit } from '../schemas.ts';
import { upgradeUnitWithChangeOrder } from '../../changes/promote/unit.ts';

const unitPath = '/space/{space_id}/unit/{unit_id}';

/** A Unit's history moved on purpose: upgrade or merge from upstream, restore, revert, resolve conflicts. */
export const unitHistoryRoutes = [
  route({
    method: 'POST',
    path: `${unitPath}/resolve`,
    name: 'ResolveLinks',
    query: NoQuery,
    body: ResolveLinks,
    async handle({ deps, caller, params, body, space }) {
      const unit = await pathUnit(deps, space, params);
      return {
        body: await resolveLinks(deps, caller, space, unit, {
          which: body.Resolve,
          mergeEnd: body.MergeEndRevisionNum,
          dryRun: body.DryRun,
          description: body.ChangeDescription,
        }),
      };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/upgrade`,
    name: 'UpgradeUnit',
    query: NoQuery,
    body: UpgradeUnit,
    async handle({ deps, caller, params, body, space }) {
      const unit = await pathUnit(deps, space, params);
      if (body.ChangeOrderID) {
        const { item: co } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', body.ChangeOrderID);
        return {
          body: await upgradeUnitWithChangeOrder(deps, caller, co, space, unit, {
            dryRun: body.DryRun,
            priorRevisions: body.PriorRevisions,
          }),
        };
      }
      if (!body.MergeSourceID) {
        if (body.MergeBaseRevisionNum !== undefined || body.MergeEndRevisionNum !== undefined)
          throw new Invalid('MergeBaseRevisionNum and MergeEndRevisionNum need MergeSourceID');
        return { body: await upgradeUnit(deps, caller, space, unit, { squash: body.Squash, dryRun: body.DryRun }) };
      }
      return {
        body: await mergeFromSource(deps, caller, space, unit, {
          source: body.MergeSourceID,
          base: body.MergeBaseRevisionNum,
          end: body.MergeEndRevisionNum,
          squash: body.Squash,
          dryRun: body.DryRun,
        }),
      };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/restore`,
    name: 'RestoreUnit',
    query: NoQuery,
    body: RestoreUnit,
    async handle({ deps, caller, params, body, space }) {
      const unit = await pathUnit(deps, space, params);
      const r = await restoreUnit(deps, caller, space, unit, body.Revision, body.ChangeDescription);
      return { body: { ...withSpace(r.unit, space), RestoredRevisionNum: r.RestoredRevisionNum, Changed: r.Changed } };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/revert`,
    name: 'RevertUnit',
    query: NoQuery,
    body: RevertUnit,
    async handle({ deps, caller, params, body, space }) {
      const unit = await pathUnit(deps, space, params);
      const r = await revertUnit(deps, caller, space, unit, body.Range, body.ChangeDescription);
      return { body: { ...withSpace(r.unit, space), Changed: r.Changed } };
    },
  }),
  route({
    method: 'POST',
    path: `${unitPath}/conflicts`,
    name: 'ResolveConflicts',
    query: NoQuery,
    body: ResolveConflicts,
    async handle({ deps, caller, params, body, space }) {
      const unit = await pathUnit(deps, space, params);
      const r =
        body.Action === 'Apply'
          ? await applyConflicts(deps, caller, space, unit, !!body.DryRun)
          : await dismissConflicts(deps, unit, !!body.DryRun);
      return { body: { ...r, unit: withSpace(r.unit, space) } };
    },
  }),
];

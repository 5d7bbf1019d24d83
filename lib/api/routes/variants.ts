import {
  answered,
  ChangeOrderPromotion,
  DemoteAnswer,
  Promotion,
  SpacePromotion,
  UploadAnswer,
  VariantAnswer,
} from '../answers.ts';
import { accepted } from './jobs.ts';
import { findInSpace, findSpace } from '../../variants/lookup.ts';
import { UnitAction } from '../../variants/merge.ts';
import { createVariant, promoteVariant, uploadVariant } from '../../variants/variant.ts';
import { requireVerb, type ChangeOrder } from '../../model/entities.ts';
import { Invalid } from '../../model/errors.ts';
import { withSpace } from '../resolve.ts';
import { route } from '../route.ts';
import { CreateVariant, NoQuery, UploadVariant } from '../schemas.ts';
import { Demote, Promote } from '../change-schemas.ts';
import { demote } from '../../changes/demote.ts';
import { refuseIfHeld } from '../../changes/holds.ts';
import { refuseIfWindowed } from '../../changes/windows.ts';
import { promoteChangeOrder } from '../../changes/promote/request.ts';

/** Variants: upload a base, create a variant of a Space, promote one (from its upstream, or a ChangeOrder into a Stage). */
export const variantRoutes = [
  route({
    method: 'POST',
    path: '/demote',
    name: 'Demote',
    query: NoQuery,
    body: Demote,
    answer: DemoteAnswer,
    runsAsJob: true,
    // A dry run reads; a demote needs Edit in the Space (checked by the operation).
    access: 'Anyone',
    async handle({ deps, caller, body }) {
      const { item: co } = await findInSpace<ChangeOrder>(deps, caller, undefined, 'ChangeOrder', body.ChangeOrderID);
      if (body.Async && body.DryRun)
        throw new Invalid('Async does not apply to a dry run: it writes nothing and is answered in the request');
      const r = await demote(deps, caller, co, await findSpace(deps, caller, body.Space), {
        changeDesc: body.ChangeDescription,
        dryRun: body.DryRun,
        async: body.Async,
      });
      if ('job' in r) return accepted(r.job);
      return { status: r.Units.some((u) => u.Action === 'Failed') ? 207 : 200, body: answered(DemoteAnswer, r) };
    },
  }),
  route({
    method: 'POST',
    path: '/variant/upload',
    name: 'UploadVariant',
    query: NoQuery,
    body: UploadVariant,
    answer: UploadAnswer,
    async handle({ deps, caller, body }) {
      const r = await uploadVariant(deps, caller, body);
      return { status: 201, body: answered(UploadAnswer, { ...r, Units: r.Units.map((u) => withSpace(u, r.Space)) }) };
    },
  }),
  route({
    method: 'POST',
    path: '/variant',
    name: 'CreateVariant',
    query: NoQuery,
    body: CreateVariant,
    answer: VariantAnswer,
    async handle({ deps, caller, body }) {
      const r = await createVariant(deps, caller, body);
      return {
        status: r.Units.some((u) => u.Action === UnitAction.Failed) ? 207 : 201,
        body: answered(VariantAnswer, r),
      };
    },
  }),
  route({
    method: 'POST',
    path: '/promote',
    name: 'Promote',
    query: NoQuery,
    body: Promote,
    answer: Promotion,
    runsAsJob: true,
    async handle({ deps, caller, body }) {
      if (body.ChangeOrderID) {
        if (body.Squash)
          throw new Invalid(
            'Squash does not apply to a change order promotion: its range is replayed as the change made it',
          );
        if (body.Async && body.DryRun)
          throw new Invalid('Async does not apply to a dry run: it writes nothing and is answered in the request');
        const { item: co, space: base } = await findInSpace<ChangeOrder>(
          deps,
          caller,
          undefined,
          'ChangeOrder',
          body.ChangeOrderID,
        );
        const done = await promoteChangeOrder(deps, caller, co, base, {
          targetStage: body.TargetStage,
          spaces: [...(body.Spaces ?? []), ...(body.Space ? [body.Space] : [])],
          whereSpace: body.WhereSpace,
          dryRun: body.DryRun,
          priorRevisions: body.PriorRevisions,
          force: body.Force,
          forceReason: body.ForceReason,
          protect: body.Protect,
          async: body.Async,
        });
        if (done.outcome === 'Accepted') return accepted(done.job);
        return { status: done.outcome === 'Partial' ? 207 : 200, body: answered(ChangeOrderPromotion, done.result) };
      }
      if (!body.Space) throw new Invalid('name the Space to promote, or a ChangeOrderID');
      for (const k of [
        'TargetStage',
        'Spaces',
        'WhereSpace',
        'PriorRevisions',
        'Force',
        'ForceReason',
        'Protect',
        'Async',
      ] as const) {
        if (body[k] !== undefined) throw new Invalid(`${k} applies only to a change order promotion`);
      }
      const space = await findSpace(deps, caller, body.Space);
      if (!body.DryRun) requireVerb(caller, [space], 'Edit', 'promote it');
      if (!body.DryRun)
        await refuseIfHeld(
          deps,
          caller,
          { action: 'promote', spaceIds: [space.SpaceID] },
          `promote space '${space.Slug}'`,
        );
      if (!body.DryRun)
        await refuseIfWindowed(deps, caller, 'promote', `promote space '${space.Slug}'`, async () => [space]);
      const r = await promoteVariant(deps, caller, space, { dryRun: body.DryRun, squash: body.Squash });
      const failures = r.Units.filter((u) => u.Action === UnitAction.Failed).length;
      return { status: failures ? (failures === r.Units.length ? 409 : 207) : 200, body: answered(SpacePromotion, r) };
    },
  }),
];

import type { Release } from '../../model/entities.ts';
import { NotFound, Unprocessable } from '../../model/errors.ts';
import { findChangeOrder, recordRelease, releaseGateRefusal } from '../changeorders.ts';
import { DetailType, HOOK_SOURCE } from '../../events/contracts.ts';
import { listQueries, page } from '../lists.ts';
import { findSpace } from '../resolve.ts';
import { listReply, patchMap, route } from '../route.ts';
import { HookBody, ListQuery, NoBody, NoQuery, PublishRelease, UpdateRelease } from '../schemas.ts';
import { bundle, findRelease, publish, releasesOf, withdraw, writeLiveStatus } from '../releases.ts';

const one = '/space/{space_id}/release/{release_id}';

/** An ingest route: the tool's body goes on the bus unchanged, with the caller's organization. */
function hook(path: string, name: string, detailType: DetailType) {
  return route({
    method: 'POST',
    path,
    name,
    query: NoQuery,
    body: HookBody,
    async handle({ deps, caller, body }) {
      await deps.bus.put([{ source: HOOK_SOURCE, detailType, detail: { OrganizationID: caller.OrganizationID, ReceivedAt: deps.now().toISOString(), Payload: body } }]);
      return { status: 202, body: { Accepted: true } };
    },
  });
}

export const releaseRoutes = [
  route({
    method: 'POST',
    path: '/space/{space_id}/release',
    name: 'PublishRelease',
    query: NoQuery,
    body: PublishRelease,
    async handle({ deps, caller, params, body }) {
      const space = await findSpace(deps, caller, params.space_id!);
      let changeOrderId: string | undefined;
      if (typeof body.Revision === 'string' && body.Revision.startsWith('ChangeOrder:')) {
        // A Release at the ChangeOrder's release Tag is one for the ChangeOrder: its Stage's release gates apply.
        const { co } = await findChangeOrder(deps, caller, space, body.Revision.slice('ChangeOrder:'.length));
        const refused = await releaseGateRefusal(deps, caller, co, space);
        if (refused) throw new Unprocessable(refused);
        changeOrderId = co.ChangeOrderID;
      }
      const r = await publish(deps, caller, space, { revision: body.Revision, dryRun: body.DryRun, description: body.Description, changeOrderId });
      const made = r.Release && !r.Message && !r.DryRun;
      if (made) await recordRelease(deps, caller, space, r.Release!);
      return { status: made ? 201 : 200, body: r };
    },
  }),
  route({
    method: 'GET',
    path: '/space/{space_id}/release',
    name: 'ListReleases',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const queries = await listQueries(deps, caller, 'Release', query, space);
      const p = await page(await releasesOf(deps, space), queries, query);
      // Newest first reads best for releases; paging stays by slug.
      return listReply({ ...p, items: p.items.sort((a: Release, b: Release) => b.ReleaseNum - a.ReleaseNum) });
    },
  }),
  route({
    method: 'GET',
    path: '/release',
    name: 'ListAllReleases',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      const queries = await listQueries(deps, caller, 'Release', query);
      const spaces = await deps.store.listSpaces(caller.OrganizationID);
      const all = (await Promise.all(spaces.map((s) => releasesOf(deps, s)))).flat();
      const p = await page(all.map((r) => ({ ...r, Slug: `${r.SpaceSlug}/${r.Slug}` })), queries, query);
      return listReply(p);
    },
  }),
  route({
    method: 'GET',
    path: one,
    name: 'GetRelease',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await findSpace(deps, caller, params.space_id!);
      return { body: await findRelease(deps, space, params.release_id!) };
    },
  }),
  route({
    method: 'GET',
    path: `${one}/data`,
    name: 'GetReleaseData',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const release = await findRelease(deps, space, params.release_id!);
      const units = await Promise.all(
        release.Units.map(async (u) => {
          const unit = await deps.store.getUnit(space.SpaceID, u.UnitID);
          if (!unit) throw new NotFound(`unit '${u.Slug}' of release ${release.ReleaseNum} has been deleted, and its revisions with it`);
          return { unit, rev: u.RevisionNum };
        }),
      );
      return { text: await bundle(deps, units), contentType: 'application/yaml', headers: { 'x-digest': release.Digest } };
    },
  }),
  route({
    method: 'PATCH',
    path: one,
    name: 'UpdateRelease',
    query: NoQuery,
    body: UpdateRelease,
    async handle({ deps, caller, params, body }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const release = await findRelease(deps, space, params.release_id!);
      const written = await writeLiveStatus(
        deps,
        space,
        release,
        { LiveStatus: body.LiveStatus, Labels: patchMap(release.Labels, body.Labels), Annotations: patchMap(release.Annotations, body.Annotations) },
        body.Version ?? release.Version,
      );
      return { body: written };
    },
  }),
  route({
    method: 'POST',
    path: `${one}/withdraw`,
    name: 'WithdrawRelease',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await findSpace(deps, caller, params.space_id!);
      return { body: await withdraw(deps, space, await findRelease(deps, space, params.release_id!)) };
    },
  }),
  hook('/hooks/argocd', 'ArgoCdHook', DetailType.ArgoCd),
  hook('/hooks/flux', 'FluxHook', DetailType.Flux),
];

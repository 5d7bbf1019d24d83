import { bearerSecret, signatureMatches } from '../auth.ts';
import { Unauthorized } from '../../model/errors.ts';
import { requireVerb } from '../../model/entities.ts';
import { visible } from '../access.ts';
import { patchMap, type Release } from '../../model/entities.ts';
import { DetailType, HOOK_SOURCE, HookDetail } from '../../events/contracts.ts';
import { publishRelease } from '../../changes/release.ts';
import { findRelease, releaseData, releasesOf } from '../../releases/bundle.ts';
import { withdraw, writeLiveStatus } from '../../releases/live-status.ts';
import { keyedPage, listQueries, page } from '../lists.ts';
import { pathSpace, withSpace } from '../resolve.ts';
import { listReply, MAX_HOOK_BODY, route } from '../route.ts';
import { HookBody, ListQuery, NoBody, NoQuery, PublishRelease, UpdateRelease } from '../schemas.ts';

const one = '/space/{space_id}/release/{release_id}';

/** An ingest route: the tool's body goes on the bus unchanged, with the caller's organization. */
function hook(path: string, name: string, detailType: DetailType) {
  return route({
    method: 'POST',
    path,
    name,
    query: NoQuery,
    body: HookBody,
    access: 'ReportStatus',
    maxBody: MAX_HOOK_BODY,
    async handle({ deps, caller, body, raw }) {
      // A token made to require it (Flux's generic-hmac provider) sends each body signed with the token itself.
      if (caller.Service?.RequireSignature && !signatureMatches(raw.body, bearerSecret(raw.headers.authorization ?? raw.headers.Authorization), raw.headers['x-signature'] ?? raw.headers['X-Signature'])) {
        throw new Unauthorized('the X-Signature header does not match the body: this token requires hooks signed with HMAC-SHA256 (sha256=<hex>) keyed by the token');
      }
      // The consumer checks ReportStatus in the Space the event names, as the caller.
      // Nothing is written with it, so it goes straight on the bus (no outbox), checked against its contract like every event.
      const detail = HookDetail.parse({ EventID: deps.newId(), OrganizationID: caller.OrganizationID, ReceivedAt: deps.now().toISOString(), Payload: body, Caller: caller });
      await deps.bus.put([{ source: HOOK_SOURCE, detailType, detail }]);
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
      const space = await pathSpace(deps, caller, params);
      const { made, result } = await publishRelease(deps, caller, space, { revision: body.Revision, dryRun: body.DryRun, description: body.Description });
      return { status: made ? 201 : 200, body: { ...result, Release: result.Release && withSpace(result.Release, space) } };
    },
  }),
  route({
    method: 'GET',
    path: '/space/{space_id}/release',
    name: 'ListReleases',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const space = await pathSpace(deps, caller, params);
      const queries = await listQueries(deps, caller, 'Release', query, space);
      // Newest first. Asked for a page, read with DynamoDB's cursor over the Space's Releases in that order.
      if (query.limit === undefined && query.continue === undefined) {
        return listReply(await page((await releasesOf(deps, space)).map((r) => withSpace(r, space)), queries, query).then((p) => ({ ...p, items: p.items.sort((a: Release, b: Release) => b.ReleaseNum - a.ReleaseNum) })));
      }
      const read = async (want: number, after?: string) => {
        const p = await deps.store.releasePage(space.SpaceID, want, after);
        return { items: p.items.map((x) => ({ item: withSpace(x.release, space), cursor: x.cursor })), next: p.next };
      };
      return listReply(await keyedPage(read, queries, query));
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
      const spaces = visible(caller, await deps.store.listSpaces(caller.OrganizationID));
      const all = (await Promise.all(spaces.map(async (s) => (await releasesOf(deps, s)).map((r) => withSpace(r, s))))).flat();
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
      const space = await pathSpace(deps, caller, params);
      return { body: withSpace(await findRelease(deps, space, params.release_id!), space) };
    },
  }),
  route({
    method: 'GET',
    path: `${one}/data`,
    name: 'GetReleaseData',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await pathSpace(deps, caller, params);
      const release = await findRelease(deps, space, params.release_id!);
      return { text: await releaseData(deps, space, release), contentType: 'application/yaml', headers: { 'x-digest': release.Digest } };
    },
  }),
  route({
    method: 'PATCH',
    path: one,
    name: 'UpdateRelease',
    query: NoQuery,
    body: UpdateRelease,
    access: 'ReportStatus',
    async handle({ deps, caller, params, body }) {
      const space = await pathSpace(deps, caller, params);
      // Live status needs ReportStatus (checked before); labels and annotations are an edit.
      if (body.Labels !== undefined || body.Annotations !== undefined || body.LiveStatus === undefined) requireVerb(caller, [space], 'Edit', 'change the labels of its releases');
      const release = await findRelease(deps, space, params.release_id!);
      const written = await writeLiveStatus(
        deps,
        space,
        release,
        { LiveStatus: body.LiveStatus, Labels: patchMap(release.Labels, body.Labels), Annotations: patchMap(release.Annotations, body.Annotations) },
        body.Version ?? release.Version,
      );
      return { body: withSpace(written, space) };
    },
  }),
  route({
    method: 'POST',
    path: `${one}/withdraw`,
    name: 'WithdrawRelease',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await pathSpace(deps, caller, params);
      return { body: withSpace(await withdraw(deps, await findRelease(deps, space, params.release_id!)), space) };
    },
  }),
  hook('/hooks/argocd', 'ArgoCdHook', DetailType.ArgoCd),
  hook('/hooks/flux', 'FluxHook', DetailType.Flux),
];

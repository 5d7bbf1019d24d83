import { answered, PublishAnswer } from '../answers.ts';
import { bearerSecret, signatureMatches } from '../auth.ts';
import { Unauthorized } from '../../model/errors.ts';
import { requireVerb } from '../../model/entities.ts';
import { visible } from '../access.ts';
import { patchMap, type Release } from '../../model/entities.ts';
import { applyDeployToolReport, type DeployTool } from '../../releases/deploy-events.ts';
import { publishRelease } from '../../changes/release.ts';
import { findRelease, releaseData, releasesOf } from '../../releases/bundle.ts';
import { withdraw, writeLiveStatus } from '../../releases/live-status.ts';
import { acrossSpaces, keyedPage, listQueries, matchingAll, page } from '../lists.ts';
import { withSpace } from '../resolve.ts';
import { listReply, MAX_HOOK_BODY, route } from '../route.ts';
import { HookBody, ListQuery, NoBody, NoQuery, PublishRelease, UpdateRelease } from '../schemas.ts';

const one = '/space/{space_id}/release/{release_id}';

/** A Space's Releases newest first, as a page has them: by number, then (two Targets' of one number) by ID. */
const newestFirst = <R extends Release>(rs: R[]): R[] =>
  [...rs].sort((a, b) => b.ReleaseNum - a.ReleaseNum || (a.ReleaseID < b.ReleaseID ? 1 : -1));

/**
 * A deploy tool's hook: its body, as the tool sends it, applied to the Release it is about before the
 * answer (200 with the Release and its LiveStatus, Changed false for a repeat), or refused naming why
 * (4xx, nothing written): a sender always knows whether Baton took its report.
 */
function hook(path: string, name: string, tool: DeployTool) {
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
      if (
        caller.Service?.RequireSignature &&
        !signatureMatches(
          raw.body,
          bearerSecret(raw.headers.authorization ?? raw.headers.Authorization),
          raw.headers['x-signature'] ?? raw.headers['X-Signature'],
        )
      ) {
        throw new Unauthorized(
          'the X-Signature header does not match the body: this token requires hooks signed with HMAC-SHA256 (sha256=<hex>) keyed by the token',
        );
      }
      return {
        body: await applyDeployToolReport(deps, tool, body, deps.now().toISOString(), caller.OrganizationID, caller),
      };
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
    answer: PublishAnswer,
    async handle({ deps, caller, body, space }) {
      const { made, result } = await publishRelease(deps, caller, space, {
        revision: body.Revision,
        dryRun: body.DryRun,
        description: body.Description,
      });
      return {
        status: made ? 201 : 200,
        body: answered(PublishAnswer, { ...result, Release: result.Release && withSpace(result.Release, space) }),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/space/{space_id}/release',
    name: 'ListReleases',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query, space }) {
      const queries = await listQueries(deps, caller, 'Release', query, space);
      // Newest first. Asked for a page, read with DynamoDB's cursor over the Space's Releases in that order.
      if (query.limit === undefined && query.continue === undefined) {
        return listReply(
          await page(
            (await releasesOf(deps, space)).map((r) => withSpace(r, space)),
            queries,
            query,
          ).then((p) => ({ ...p, items: newestFirst(p.items) })),
        );
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
      // Space by Space in slug order, each Space's newest first. Asked for a page, only the Spaces it walks are read, with DynamoDB's cursor.
      if (query.limit === undefined && query.continue === undefined) {
        const bySpace = [...spaces].sort((a, b) => (a.Slug < b.Slug ? -1 : a.Slug > b.Slug ? 1 : 0));
        const all = (
          await Promise.all(
            bySpace.map(async (s) => newestFirst(await releasesOf(deps, s)).map((r) => withSpace(r, s))),
          )
        ).flat();
        return listReply({ items: all.filter(matchingAll(queries)) });
      }
      const read = acrossSpaces<Release>('releases', spaces, async (space, want, after) => {
        const p = await deps.store.releasePage(space.SpaceID, want, after);
        return { items: p.items.map((x) => ({ item: withSpace(x.release, space), cursor: x.cursor })), next: p.next };
      });
      return listReply(await keyedPage(read, queries, query));
    },
  }),
  route({
    method: 'GET',
    path: one,
    name: 'GetRelease',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, params, space }) {
      return { body: withSpace(await findRelease(deps, space, params.release_id!), space) };
    },
  }),
  route({
    method: 'GET',
    path: `${one}/data`,
    name: 'GetReleaseData',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, params, space }) {
      const release = await findRelease(deps, space, params.release_id!);
      return {
        text: await releaseData(deps, space, release),
        contentType: 'application/yaml',
        headers: { 'x-digest': release.Digest },
      };
    },
  }),
  route({
    method: 'PATCH',
    path: one,
    name: 'UpdateRelease',
    query: NoQuery,
    body: UpdateRelease,
    access: 'ReportStatus',
    async handle({ deps, caller, params, body, space }) {
      // Live status needs ReportStatus (checked before); labels and annotations are an edit.
      if (body.Labels !== undefined || body.Annotations !== undefined || body.LiveStatus === undefined)
        requireVerb(caller, [space], 'Edit', 'change the labels of its releases');
      const release = await findRelease(deps, space, params.release_id!);
      const written = await writeLiveStatus(
        deps,
        space,
        release,
        {
          LiveStatus: body.LiveStatus,
          Labels: patchMap(release.Labels, body.Labels),
          Annotations: patchMap(release.Annotations, body.Annotations),
        },
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
    async handle({ deps, params, space }) {
      return { body: withSpace(await withdraw(deps, await findRelease(deps, space, params.release_id!)), space) };
    },
  }),
  hook('/hooks/argocd', 'ArgoCdHook', 'argocd'),
  hook('/hooks/flux', 'FluxHook', 'flux'),
];

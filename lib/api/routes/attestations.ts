import { answered, ApproveAnswer } from '../answers.ts';
import { accepted } from './jobs.ts';
import { Invalid } from '../../model/errors.ts';
import { approve, createAttestation } from '../../changes/attest.ts';
import { listAttestations, revokeAttestation } from '../../changes/attestations.ts';
import { NotFound } from '../../model/errors.ts';
import { keyedPage, listQueries, page } from '../lists.ts';
import { listReply, route } from '../route.ts';
import { ListQuery, NoBody, NoQuery } from '../schemas.ts';
import { Approve, CreateAttestation, RevokeAttestation } from '../change-schemas.ts';

const inSpace = '/space/{space_id}/attestation';

/** Attestations: approvals and other records about revisions, immutable, revoked by another record. */
export const attestationRoutes = [
  route({
    method: 'POST',
    path: '/attest',
    name: 'Approve',
    query: NoQuery,
    body: Approve,
    answer: ApproveAnswer,
    runsAsJob: true,
    // Any role may ask (a dry run reads); recording needs Approve in every Space, checked by the operation.
    access: 'Anyone',
    async handle({ deps, caller, body }) {
      if (body.Async && body.DryRun)
        throw new Invalid('Async does not apply to a dry run: it writes nothing and is answered in the request');
      const r = await approve(deps, caller, body);
      if ('job' in r) return accepted(r.job);
      return { status: r.DryRun || !r.Attestations.length ? 200 : 201, body: answered(ApproveAnswer, r) };
    },
  }),
  route({
    method: 'POST',
    path: inSpace,
    name: 'CreateAttestation',
    query: NoQuery,
    body: CreateAttestation,
    answer: ApproveAnswer,
    access: 'Approve',
    async handle({ deps, caller, body, space }) {
      const r = await createAttestation(deps, caller, space, body);
      return { status: r.DryRun || !r.Attestations.length ? 200 : 201, body: answered(ApproveAnswer, r) };
    },
  }),
  route({
    method: 'GET',
    path: inSpace,
    name: 'ListAttestations',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query, space }) {
      const queries = await listQueries(deps, caller, 'Attestation', query, space);
      if (query.limit === undefined && query.continue === undefined) {
        const all = (await listAttestations(deps, space)).map((a) => ({ ...a, SpaceSlug: space.Slug }));
        const p = await page(all, queries, query);
        // Newest first, as they were listed before paging.
        return listReply({
          ...p,
          items: p.items.sort((a, b) =>
            a.CreatedAt < b.CreatedAt ? 1 : a.CreatedAt > b.CreatedAt ? -1 : a.AttestationID < b.AttestationID ? 1 : -1,
          ),
        });
      }
      // A page: newest first, with DynamoDB's cursor over the Space's attestations in that order.
      const read = async (want: number, after?: string) => {
        const p = await deps.store.attestationPage(space.SpaceID, want, after);
        return {
          items: p.items.map((x) => ({ item: { ...x.attestation, SpaceSlug: space.Slug }, cursor: x.cursor })),
          next: p.next,
        };
      };
      return listReply(await keyedPage(read, queries, query));
    },
  }),
  route({
    method: 'GET',
    path: `${inSpace}/{attestation_id}`,
    name: 'GetAttestation',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, params, space }) {
      const a = await deps.store.attestationById(space.SpaceID, params.attestation_id!.toLowerCase());
      if (!a) throw new NotFound(`attestation '${params.attestation_id}' not found in space '${space.Slug}'`);
      return { body: { ...a, SpaceSlug: space.Slug } };
    },
  }),
  route({
    method: 'POST',
    path: `${inSpace}/{attestation_id}/revoke`,
    name: 'RevokeAttestation',
    query: NoQuery,
    body: RevokeAttestation,
    // Its author may revoke it; anyone else needs Manage (checked by the operation).
    access: 'View',
    async handle({ deps, caller, params, body, space }) {
      return {
        status: 201,
        body: {
          ...(await revokeAttestation(deps, caller, space, params.attestation_id!, body.Note)),
          SpaceSlug: space.Slug,
        },
      };
    },
  }),
];

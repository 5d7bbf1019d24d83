import { createHold, findHold, holdReader, liftHold, listHolds, viewHolds } from '../../changes/holds.ts';
import { keyedPage } from '../lists.ts';
import { listReply, route } from '../route.ts';
import { NoBody, NoQuery, PageQuery } from '../schemas.ts';
import { CreateHold, LiftHold } from '../change-schemas.ts';

/** Holds: promotions (or publishes) into a Space, a workflow's ChangeOrders or the organization wait while one is in force. */
export const holdRoutes = [
  route({
    method: 'POST',
    path: '/hold',
    name: 'CreateHold',
    query: NoQuery,
    body: CreateHold,
    // Who may place which hold is the operation's to check: Edit in the Space (or the workflow's), an Admin for the organization.
    access: 'Member',
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createHold(deps, caller, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/hold',
    name: 'ListHolds',
    query: PageQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      // By slug. Asked for a page, read with DynamoDB's cursor over the holds' slugs.
      if (query.limit === undefined && query.continue === undefined) return { body: await listHolds(deps, caller) };
      return listReply(await keyedPage(holdReader(deps, caller), [], query));
    },
  }),
  route({
    method: 'GET',
    path: '/hold/{hold_id}',
    name: 'GetHold',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      return { body: (await viewHolds(deps, caller, [await findHold(deps, caller, params.hold_id!)]))[0] };
    },
  }),
  route({
    method: 'POST',
    path: '/hold/{hold_id}/lift',
    name: 'LiftHold',
    query: NoQuery,
    body: LiftHold,
    // Its owner or an Admin (checked by the operation).
    access: 'Member',
    async handle({ deps, caller, params, body }) {
      return { body: await liftHold(deps, caller, params.hold_id!, body.Note) };
    },
  }),
];

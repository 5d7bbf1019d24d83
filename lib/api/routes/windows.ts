import {
  approveOverride,
  createWindow,
  deleteWindow,
  findWindow,
  listWindows,
  viewWindows,
} from '../../changes/windows.ts';
import { derive } from '../../changes/progress.ts';
import type { ChangeOrder } from '../../model/entities.ts';
import { findInSpace } from '../../variants/lookup.ts';
import { withSpace } from '../resolve.ts';
import { route } from '../route.ts';
import { NoBody, NoQuery } from '../schemas.ts';
import { ApproveOverride, CreateWindow, DemoteEverywhere } from '../change-schemas.ts';
import { takeBack } from '../../changes/recall.ts';

/** Deploy windows (promotions into what one covers go while it is open; a Deny window: not while it is in force), and taking a change back out of everywhere. */
export const windowRoutes = [
  route({
    method: 'POST',
    path: '/window',
    name: 'CreateWindow',
    query: NoQuery,
    body: CreateWindow,
    // Who may make which window is the operation's to check: Edit in the Space (or the workflow's), an Admin for a where.
    access: 'Member',
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createWindow(deps, caller, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/window',
    name: 'ListWindows',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller }) {
      return { body: await listWindows(deps, caller) };
    },
  }),
  route({
    method: 'GET',
    path: '/window/{window_id}',
    name: 'GetWindow',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      return { body: (await viewWindows(deps, caller, [await findWindow(deps, caller, params.window_id!)]))[0] };
    },
  }),
  route({
    method: 'DELETE',
    path: '/window/{window_id}',
    name: 'DeleteWindow',
    query: NoQuery,
    body: NoBody,
    // Its owner or an Admin (checked by the operation).
    access: 'Member',
    async handle({ deps, caller, params }) {
      return { body: await deleteWindow(deps, caller, params.window_id!) };
    },
  }),
  route({
    method: 'POST',
    path: '/space/{space_id}/change_order/{change_order_id}/override_approval',
    name: 'ApproveWindowOverride',
    query: NoQuery,
    body: ApproveOverride,
    // Approve in the ChangeOrder's Space: approving is not promoting.
    access: 'Approve',
    async handle({ deps, caller, params, body, space }) {
      const { item: co, space: home } = await findInSpace<ChangeOrder>(
        deps,
        caller,
        space,
        'ChangeOrder',
        params.change_order_id!,
      );
      const next = await approveOverride(deps, caller, home, co, body);
      return { status: 201, body: withSpace(await derive(deps, caller, next, { completed: true }), home) };
    },
  }),
  route({
    method: 'POST',
    path: '/space/{space_id}/change_order/{change_order_id}/demote',
    name: 'DemoteChangeOrderEverywhere',
    query: NoQuery,
    body: DemoteEverywhere,
    // Aborts it (if it is not), then demotes every Space that took it, latest Stage first; Edit in each (checked per Space).
    async handle({ deps, caller, params, body, space }) {
      const { item: co, space: home } = await findInSpace<ChangeOrder>(
        deps,
        caller,
        space,
        'ChangeOrder',
        params.change_order_id!,
      );
      const record = await takeBack(deps, caller, home, co, body.Reason);
      return { status: record.Spaces.every((s) => s.Restored) ? 200 : 207, body: record };
    },
  }),
];

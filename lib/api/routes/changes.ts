import { rolloutOf } from '../../changes/rollout.ts';
import { timelineOf } from '../../changes/timeline.ts';
import { deliveryReport } from '../../changes/delivery.ts';
import { visible } from '../access.ts';
import type { ChangeOrder, ChangeWorkflow, Space } from '../../model/entities.ts';
import { createChangeOrder } from '../../changes/create.ts';
import { storedFilters } from '../../changes/state.ts';
import { cloneWorkflow, createWorkflow, updateChangeOrder, updateWorkflow } from '../../changes/workflows.ts';
import { findInSpace } from '../../variants/lookup.ts';
import { cursorPage, keyedPage, listQueries, page } from '../lists.ts';
import { withSpace } from '../resolve.ts';
import { listReply, route } from '../route.ts';
import { ListQuery, NoBody, NoQuery } from '../schemas.ts';
import {
  CloneChangeWorkflow,
  CreateChangeOrder,
  CreateChangeWorkflow,
  UpdateChangeOrder,
  UpdateChangeWorkflow,
  ExplainQuery,
  DeliveryQuery,
} from '../change-schemas.ts';
import { derive } from '../../changes/progress.ts';
import { explainPromotion } from '../../changes/promote/explain.ts';

const wfPath = '/space/{space_id}/change_workflow';
const coPath = '/space/{space_id}/change_order';

export const changeRoutes = [
  route({
    method: 'GET',
    path: wfPath,
    name: 'ListChangeWorkflows',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query, space }) {
      const queries = await listQueries(deps, caller, 'ChangeWorkflow', query, space);
      const src = {
        all: () => deps.store.listInSpace<ChangeWorkflow>('ChangeWorkflow', space.SpaceID),
        some: (ids: string[]) => deps.store.getMany<ChangeWorkflow>('ChangeWorkflow', space.SpaceID, ids),
        idOf: (w: ChangeWorkflow) => w.ChangeWorkflowID,
        show: (w: ChangeWorkflow) => withSpace(w, space),
      };
      return listReply(
        await cursorPage(deps, { scope: { spaceId: space.SpaceID }, kind: 'ChangeWorkflow' }, src, queries, query),
      );
    },
  }),
  route({
    method: 'POST',
    path: wfPath,
    name: 'CreateChangeWorkflow',
    query: NoQuery,
    body: CreateChangeWorkflow,
    async handle({ deps, caller, body, space }) {
      return { status: 201, body: withSpace(await createWorkflow(deps, caller, space, body), space) };
    },
  }),
  route({
    method: 'POST',
    path: `${wfPath}/clone`,
    name: 'CloneChangeWorkflow',
    query: NoQuery,
    body: CloneChangeWorkflow,
    async handle({ deps, caller, body, space: dest }) {
      return { status: 201, body: withSpace(await cloneWorkflow(deps, caller, dest, body.Source, body.Slug), dest) };
    },
  }),
  route({
    method: 'GET',
    path: `${wfPath}/{change_workflow_id}`,
    name: 'GetChangeWorkflow',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params, space }) {
      const { item, space: home } = await findInSpace<ChangeWorkflow>(
        deps,
        caller,
        space,
        'ChangeWorkflow',
        params.change_workflow_id!,
      );
      return { body: withSpace(item, home) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${wfPath}/{change_workflow_id}`,
    name: 'UpdateChangeWorkflow',
    query: NoQuery,
    body: UpdateChangeWorkflow,
    async handle({ deps, caller, params, body, space }) {
      const { item } = await findInSpace<ChangeWorkflow>(
        deps,
        caller,
        space,
        'ChangeWorkflow',
        params.change_workflow_id!,
      );
      return { body: withSpace(await updateWorkflow(deps, caller, item, body), space) };
    },
  }),
  route({
    method: 'DELETE',
    path: `${wfPath}/{change_workflow_id}`,
    name: 'DeleteChangeWorkflow',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params, space }) {
      const { item } = await findInSpace<ChangeWorkflow>(
        deps,
        caller,
        space,
        'ChangeWorkflow',
        params.change_workflow_id!,
      );
      await deps.store.deleteInSpace('ChangeWorkflow', item);
      return { status: 204 };
    },
  }),
  route({
    method: 'POST',
    path: coPath,
    name: 'CreateChangeOrder',
    query: NoQuery,
    body: CreateChangeOrder,
    async handle({ deps, caller, body, space: base }) {
      const { co, existed } = await createChangeOrder(deps, caller, base, body);
      return { status: existed ? 200 : 201, body: withSpace(await derive(deps, caller, co), base) };
    },
  }),
  route({
    method: 'GET',
    path: coPath,
    name: 'ListChangeOrders',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query, space }) {
      const queries = await listQueries(deps, caller, 'ChangeOrder', query, space);
      const spaces = new Map(
        (await deps.store.listSpaces(caller.OrganizationID)).map((s): [string, Space] => [s.SpaceID, s]),
      );
      const src = {
        all: () => deps.store.listInSpace<ChangeOrder>('ChangeOrder', space.SpaceID),
        some: (ids: string[]) => deps.store.getMany<ChangeOrder>('ChangeOrder', space.SpaceID, ids),
        idOf: (c: ChangeOrder) => c.ChangeOrderID,
        show: async (c: ChangeOrder) => withSpace(await derive(deps, caller, c, { spaces }), space),
      };
      return listReply(
        await cursorPage(deps, { scope: { spaceId: space.SpaceID }, kind: 'ChangeOrder' }, src, queries, query),
      );
    },
  }),
  route({
    method: 'GET',
    path: '/change_order',
    name: 'ListAllChangeOrders',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, query }) {
      const queries = await listQueries(deps, caller, 'ChangeOrder', query);
      const all = await deps.store.listSpaces(caller.OrganizationID);
      const spaces = new Map(all.map((s): [string, Space] => [s.SpaceID, s]));
      const seen = new Set(visible(caller, all).map((s) => s.SpaceID));
      // What the where rules out on the stored ChangeOrder (Completed, aborted) is left out by the database, not derived and dropped.
      const stored = storedFilters(queries);
      const shown = async (c: ChangeOrder) => ({
        ...(await derive(deps, caller, c, { spaces })),
        SpaceSlug: spaces.get(c.SpaceID)?.Slug,
      });
      if (query.limit === undefined && query.continue === undefined) {
        // In slug order, then by ID (two Spaces may use one slug), as a page is.
        const cos = (await deps.store.changeOrdersOf(caller.OrganizationID, stored))
          .filter((c) => seen.has(c.SpaceID))
          .sort((a, b) => (a.ChangeOrderID < b.ChangeOrderID ? -1 : 1));
        return listReply(await page(await Promise.all(cos.map(shown)), queries, query));
      }
      // A page: with DynamoDB's cursor over the organization's ChangeOrders in that order; only the page's are derived.
      const read = async (want: number, after?: string) => {
        const p = await deps.store.changeOrderPage(caller.OrganizationID, want, after, stored);
        return {
          items: await Promise.all(
            p.items
              .filter((x) => seen.has(x.changeOrder.SpaceID))
              .map(async (x) => ({ item: await shown(x.changeOrder), cursor: x.cursor })),
          ),
          next: p.next,
        };
      };
      return listReply(await keyedPage(read, queries, query));
    },
  }),
  route({
    method: 'GET',
    path: `${coPath}/{change_order_id}/explain`,
    name: 'ExplainChangeOrder',
    query: ExplainQuery,
    body: NoBody,
    // Why the next promotion would or would not go ahead: every gate, what it read, what would open it. Reads only.
    async handle({ deps, caller, params, query, space }) {
      const { item: co, space: home } = await findInSpace<ChangeOrder>(
        deps,
        caller,
        space,
        'ChangeOrder',
        params.change_order_id!,
      );
      return {
        body: await explainPromotion(deps, caller, co, home, {
          targetStage: query.target_stage,
          spaces: query.space ? query.space.split(',').filter(Boolean) : undefined,
          whereSpace: query.where_space,
        }),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/report/delivery',
    name: 'GetDeliveryReport',
    query: DeliveryQuery,
    body: NoBody,
    // The four DORA figures per workflow over the ChangeOrders made in the period. Reads only.
    async handle({ deps, caller, query }) {
      return { body: await deliveryReport(deps, caller, query) };
    },
  }),
  route({
    method: 'GET',
    path: `${coPath}/{change_order_id}/timeline`,
    name: 'GetChangeOrderTimeline',
    query: NoQuery,
    body: NoBody,
    // Per Stage: when it could start, was entered and left, and how long each kind of gate held it; the last Stage's ETA. Reads only.
    async handle({ deps, caller, params, space }) {
      const { item: co } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', params.change_order_id!);
      return { body: await timelineOf(deps, caller, co) };
    },
  }),
  route({
    method: 'GET',
    path: `${coPath}/{change_order_id}/rollout`,
    name: 'GetChangeOrderRollout',
    query: NoQuery,
    body: NoBody,
    // The rollout page's picture: every Stage's Spaces with progress, Release, live status, approvals, failures; the next promotion explained; holds. Reads only.
    async handle({ deps, caller, params, space }) {
      const { item: co, space: home } = await findInSpace<ChangeOrder>(
        deps,
        caller,
        space,
        'ChangeOrder',
        params.change_order_id!,
      );
      return { body: await rolloutOf(deps, caller, co, home) };
    },
  }),
  route({
    method: 'GET',
    path: `${coPath}/{change_order_id}`,
    name: 'GetChangeOrder',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params, space }) {
      const { item: co, space: home } = await findInSpace<ChangeOrder>(
        deps,
        caller,
        space,
        'ChangeOrder',
        params.change_order_id!,
      );
      return { body: withSpace(await derive(deps, caller, co, { completed: true }), home) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${coPath}/{change_order_id}`,
    name: 'UpdateChangeOrder',
    query: NoQuery,
    body: UpdateChangeOrder,
    async handle({ deps, caller, params, body, space }) {
      const { item: co } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', params.change_order_id!);
      return { body: withSpace(await updateChangeOrder(deps, caller, space, co, body), space) };
    },
  }),
];

import { newEntity, patchMap, type ChangeOrder, type ChangeWorkflow, type Space, type WorkflowDefinition } from '../../model/entities.ts';
import { expectVersion } from '../../model/errors.ts';
import { validateWorkflow } from '../../changes/workflow.ts';
import { createChangeOrder, refreshScope } from '../../changes/create.ts';
import { advanceStage, derive } from '../../changes/progress.ts';
import { findInSpace } from '../../variants/lookup.ts';
import { listQueries, page } from '../lists.ts';
import { pathSpace, withSpace } from '../resolve.ts';
import { listReply, route } from '../route.ts';
import { CloneChangeWorkflow, CreateChangeOrder, CreateChangeWorkflow, ListQuery, NoBody, NoQuery, UpdateChangeOrder, UpdateChangeWorkflow } from '../schemas.ts';

const wfPath = '/space/{space_id}/change_workflow';
const coPath = '/space/{space_id}/change_order';

function definition(w: WorkflowDefinition): WorkflowDefinition {
  return { Stages: w.Stages, Final: w.Final, CustomPrerequisites: w.CustomPrerequisites, AttestationPrerequisites: w.AttestationPrerequisites };
}

export const changeRoutes = [
  route({
    method: 'GET',
    path: wfPath,
    name: 'ListChangeWorkflows',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const space = await pathSpace(deps, caller, params);
      const queries = await listQueries(deps, caller, 'ChangeWorkflow', query, space);
      return listReply(await page((await deps.store.listInSpace<ChangeWorkflow>('ChangeWorkflow', space.SpaceID)).map((w) => withSpace(w, space)), queries, query));
    },
  }),
  route({
    method: 'POST',
    path: wfPath,
    name: 'CreateChangeWorkflow',
    query: NoQuery,
    body: CreateChangeWorkflow,
    async handle({ deps, caller, params, body }) {
      const space = await pathSpace(deps, caller, params);
      validateWorkflow(body);
      const wf: ChangeWorkflow = { ...newEntity(deps, caller.OrganizationID, body), SpaceID: space.SpaceID, ChangeWorkflowID: deps.newId(), ...definition(body) };
      await deps.store.createInSpace('ChangeWorkflow', wf);
      return { status: 201, body: withSpace(wf, space) };
    },
  }),
  route({
    method: 'POST',
    path: `${wfPath}/clone`,
    name: 'CloneChangeWorkflow',
    query: NoQuery,
    body: CloneChangeWorkflow,
    async handle({ deps, caller, params, body }) {
      const dest = await pathSpace(deps, caller, params);
      const { item: src } = await findInSpace<ChangeWorkflow>(deps, caller, dest, 'ChangeWorkflow', body.Source);
      const now = deps.now().toISOString();
      const wf: ChangeWorkflow = { ...src, ...definition(src), SpaceID: dest.SpaceID, ChangeWorkflowID: deps.newId(), Slug: body.Slug ?? src.Slug, DisplayName: body.Slug ?? src.DisplayName, CreatedAt: now, UpdatedAt: now, Version: 1 };
      await deps.store.createInSpace('ChangeWorkflow', wf);
      return { status: 201, body: withSpace(wf, dest) };
    },
  }),
  route({
    method: 'GET',
    path: `${wfPath}/{change_workflow_id}`,
    name: 'GetChangeWorkflow',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await pathSpace(deps, caller, params);
      const { item, space: home } = await findInSpace<ChangeWorkflow>(deps, caller, space, 'ChangeWorkflow', params.change_workflow_id!);
      return { body: withSpace(item, home) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${wfPath}/{change_workflow_id}`,
    name: 'UpdateChangeWorkflow',
    query: NoQuery,
    body: UpdateChangeWorkflow,
    async handle({ deps, caller, params, body }) {
      const space = await pathSpace(deps, caller, params);
      const { item } = await findInSpace<ChangeWorkflow>(deps, caller, space, 'ChangeWorkflow', params.change_workflow_id!);
      expectVersion(`change workflow '${item.Slug}'`, item.Version, body.Version);
      const next: ChangeWorkflow = {
        ...item,
        Slug: body.Slug ?? item.Slug,
        DisplayName: body.DisplayName ?? item.DisplayName,
        Labels: patchMap(item.Labels, body.Labels),
        Annotations: patchMap(item.Annotations, body.Annotations),
        Stages: body.Stages ?? item.Stages,
        Final: body.Final ?? item.Final,
        CustomPrerequisites: body.CustomPrerequisites ?? item.CustomPrerequisites,
        AttestationPrerequisites: body.AttestationPrerequisites ?? item.AttestationPrerequisites,
        UpdatedAt: deps.now().toISOString(),
        Version: item.Version + 1,
      };
      validateWorkflow(next);
      await deps.store.updateInSpace('ChangeWorkflow', next, item.Version, item.Slug);
      return { body: withSpace(next, space) };
    },
  }),
  route({
    method: 'DELETE',
    path: `${wfPath}/{change_workflow_id}`,
    name: 'DeleteChangeWorkflow',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await pathSpace(deps, caller, params);
      const { item } = await findInSpace<ChangeWorkflow>(deps, caller, space, 'ChangeWorkflow', params.change_workflow_id!);
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
    async handle({ deps, caller, params, body }) {
      const base = await pathSpace(deps, caller, params);
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
    async handle({ deps, caller, params, query }) {
      const space = await pathSpace(deps, caller, params);
      const queries = await listQueries(deps, caller, 'ChangeOrder', query, space);
      const spaces = new Map((await deps.store.listSpaces(caller.OrganizationID)).map((s): [string, Space] => [s.SpaceID, s]));
      const cos = await Promise.all((await deps.store.listInSpace<ChangeOrder>('ChangeOrder', space.SpaceID)).map(async (c) => withSpace(await derive(deps, caller, c, { spaces }), space)));
      return listReply(await page(cos, queries, query));
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
      const spaces = new Map((await deps.store.listSpaces(caller.OrganizationID)).map((s): [string, Space] => [s.SpaceID, s]));
      const cos = await Promise.all((await deps.store.changeOrdersOf(caller.OrganizationID)).map(async (c) => ({ ...(await derive(deps, caller, c, { spaces })), SpaceSlug: spaces.get(c.SpaceID)?.Slug })));
      return listReply(await page(cos, queries, query));
    },
  }),
  route({
    method: 'GET',
    path: `${coPath}/{change_order_id}`,
    name: 'GetChangeOrder',
    query: NoQuery,
    body: NoBody,
    async handle({ deps, caller, params }) {
      const space = await pathSpace(deps, caller, params);
      const { item: co, space: home } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', params.change_order_id!);
      return { body: withSpace(await derive(deps, caller, co, { completed: true }), home) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${coPath}/{change_order_id}`,
    name: 'UpdateChangeOrder',
    query: NoQuery,
    body: UpdateChangeOrder,
    async handle({ deps, caller, params, body }) {
      const space = await pathSpace(deps, caller, params);
      const { item: co } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', params.change_order_id!);
      expectVersion(`change order '${co.Slug}'`, co.Version, body.Version);
      const next: ChangeOrder = {
        ...co,
        Description: body.Description ?? co.Description,
        Labels: patchMap(co.Labels, body.Labels),
        InScopeSpaceIDs: body.RefreshSpaces ? await refreshScope(deps, caller, space, co) : co.InScopeSpaceIDs,
        AbortedReason: body.AbortedReason ?? co.AbortedReason,
        UpdatedAt: deps.now().toISOString(),
        Version: co.Version + 1,
      };
      await deps.store.transact([{ op: 'update', kind: 'ChangeOrder', item: next, expectedVersion: co.Version }]);
      await advanceStage(deps, caller, next);
      const fresh = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', space.SpaceID, co.ChangeOrderID))!;
      return { body: withSpace(await derive(deps, caller, fresh, { completed: true }), space) };
    },
  }),
];

import type { ChangeOrder, ChangeWorkflow, Space, WorkflowDefinition } from '../../model/entities.ts';
import { Conflict, Invalid } from '../../model/errors.ts';
import { validateWorkflow } from '../../changes/workflow.ts';
import { matches, parseWhere } from '../../where/index.ts';
import { advanceStage, checkNoSkips, createChangeOrder, derive, findChangeOrder, orgSpaces } from '../changeorders.ts';
import { listQueries, page } from '../lists.ts';
import { findInSpace, findSpace, withSpace } from '../resolve.ts';
import { expectVersion, listReply, newEntity, patchMap, route } from '../route.ts';
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
      const space = await findSpace(deps, caller, params.space_id!);
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
      const space = await findSpace(deps, caller, params.space_id!);
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
      const dest = await findSpace(deps, caller, params.space_id!);
      const { item: src } = await findInSpace<ChangeWorkflow>(deps, caller, dest, 'ChangeWorkflow', body.Source);
      const now = deps.now().toISOString();
      const wf: ChangeWorkflow = { ...src, ...definition(src), SpaceID: dest.SpaceID, ChangeWorkflowID: deps.newId(), Slug: body.Slug ?? src.Slug, DisplayName: body.Slug ?? src.DisplayName, CreatedAt: now, UpdatedAt: now, Version: 1 };
      delete wf.SpaceSlug;
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
      const space = await findSpace(deps, caller, params.space_id!);
      return { body: (await findInSpace<ChangeWorkflow>(deps, caller, space, 'ChangeWorkflow', params.change_workflow_id!)).item };
    },
  }),
  route({
    method: 'PATCH',
    path: `${wfPath}/{change_workflow_id}`,
    name: 'UpdateChangeWorkflow',
    query: NoQuery,
    body: UpdateChangeWorkflow,
    async handle({ deps, caller, params, body }) {
      const space = await findSpace(deps, caller, params.space_id!);
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
      delete next.SpaceSlug;
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
      const space = await findSpace(deps, caller, params.space_id!);
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
      const base = await findSpace(deps, caller, params.space_id!);
      const { co, existed } = await createChangeOrder(deps, caller, base, body);
      return { status: existed ? 200 : 201, body: await derive(deps, caller, co) };
    },
  }),
  route({
    method: 'GET',
    path: coPath,
    name: 'ListChangeOrders',
    query: ListQuery,
    body: NoBody,
    async handle({ deps, caller, params, query }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const queries = await listQueries(deps, caller, 'ChangeOrder', query, space);
      const spaces = new Map((await deps.store.listSpaces(caller.OrganizationID)).map((s): [string, Space] => [s.SpaceID, s]));
      const cos = await Promise.all((await deps.store.listInSpace<ChangeOrder>('ChangeOrder', space.SpaceID)).map((c) => derive(deps, caller, withSpace(c, space), { spaces })));
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
      const cos = await Promise.all((await deps.store.changeOrdersOf(caller.OrganizationID)).map((c) => derive(deps, caller, { ...c, SpaceSlug: spaces.get(c.SpaceID)?.Slug }, { spaces })));
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
      const space = await findSpace(deps, caller, params.space_id!);
      const { co } = await findChangeOrder(deps, caller, space, params.change_order_id!);
      return { body: await derive(deps, caller, withSpace(co, space), { completed: true }) };
    },
  }),
  route({
    method: 'PATCH',
    path: `${coPath}/{change_order_id}`,
    name: 'UpdateChangeOrder',
    query: NoQuery,
    body: UpdateChangeOrder,
    async handle({ deps, caller, params, body }) {
      const space = await findSpace(deps, caller, params.space_id!);
      const { co } = await findChangeOrder(deps, caller, space, params.change_order_id!);
      expectVersion(`change order '${co.Slug}'`, co.Version, body.Version);
      let scope = co.InScopeSpaceIDs;
      if (body.RefreshSpaces) {
        if (!co.WhereSpace) throw new Invalid(`change order '${co.Slug}' has no selection to evaluate again: its spaces were listed`);
        if (co.AbortedReason) throw new Conflict(`change order '${co.Slug}' was aborted`);
        const q = parseWhere(co.WhereSpace, 'Space');
        const spaces = await orgSpaces(deps, caller, [q]);
        scope = spaces.filter((s) => s.SpaceID !== space.SpaceID && matches(q, s)).sort((a, b) => (a.Slug < b.Slug ? -1 : 1)).map((s) => s.SpaceID);
        checkNoSkips(space, scope, new Map(spaces.map((s): [string, Space] => [s.SpaceID, s])), co.UpdateType);
      }
      const next: ChangeOrder = {
        ...co,
        Description: body.Description ?? co.Description,
        Labels: patchMap(co.Labels, body.Labels),
        InScopeSpaceIDs: scope,
        AbortedReason: body.AbortedReason ?? co.AbortedReason,
        UpdatedAt: deps.now().toISOString(),
        Version: co.Version + 1,
      };
      delete next.SpaceSlug;
      await deps.store.transact([{ op: 'update', kind: 'ChangeOrder', item: next, expectedVersion: co.Version }]);
      await advanceStage(deps, caller, next);
      const fresh = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', space.SpaceID, co.ChangeOrderID))!;
      return { body: await derive(deps, caller, withSpace(fresh, space), { completed: true }) };
    },
  }),
];

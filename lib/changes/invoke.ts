/**
 * Invoke ChangeOrders: a routine operation (a saved Invocation with parameter values) run in each
 * Space a promotion reaches, instead of a change merged from a base. The Invocation, its values and
 * the Unit selection are copied when the ChangeOrder is created, so every Space gets the same change
 * however far apart in time it is promoted. Nothing is cloned; a Space took the change when every Unit
 * the selection picks there carries its end mark, asked again on every read.
 */
import { render, checkParameterValues } from '../config/invocations.ts';
import { diffData } from '../config/diff.ts';
import { runFunction } from '../config/functions.ts';
import { chunk } from '../util/chunk.ts';
import {
  DESCRIBING_TOOLCHAIN,
  type Caller,
  type ChangeOrder,
  type ChangeWorkflow,
  type Filter,
  type Invocation,
  type Space,
} from '../model/entities.ts';
import { BatonError, Conflict, Invalid } from '../model/errors.ts';
import { parseWhere } from '../where/index.ts';
import { bySlug, findInSpace } from '../variants/lookup.ts';
import { advance, dataAt } from '../variants/revisions.ts';
import { UnitAction } from '../variants/merge.ts';
import { createdEvent, intervalMarks, newChangeOrder, type CoMarks, MARK_OPS_PER_TRANSACTION } from './marks.ts';
import type { ChangeDeps } from './ports.ts';
import { askedScope } from './stages.ts';
import { selectScope } from './scope.ts';
import { selectedUnits } from './selection.ts';
import type { PromotedUnit } from './promote/types.ts';

/** What an Invoke ChangeOrder is made with. */
export interface InvokeInput {
  Slug: string;
  Description?: string;
  Labels?: Record<string, string>;
  ChangeWorkflowID?: string;
  InScopeSpaceIDs?: string[];
  ComponentID?: string;
  WhereSpace?: string;
  SpaceFilterID?: string;
  EndTagID?: string;
  PriorRevisions: ChangeOrder['PriorRevisions'];
  InvocationID?: string;
  Parameters?: Record<string, string>;
  WhereUnit?: string;
  UnitFilterID?: string;
}

/** Creates an Invoke ChangeOrder: nothing is changed or marked yet; the Spaces in scope are its Component's, unless named. */
export async function createInvokeChangeOrder(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  body: InvokeInput,
): Promise<ChangeOrder> {
  if (!body.InvocationID)
    throw new Invalid('an Invoke change order runs an Invocation: give --invocation <space>/<invocation>');
  if (body.EndTagID)
    throw new Invalid('--end-tag does not apply to an Invoke change order: it is made in each Space when promoted');
  const { item: inv } = await findInSpace<Invocation>(deps, caller, base, 'Invocation', body.InvocationID);
  const values = checkParameterValues(inv.Parameters, body.Parameters ?? {});
  let filter: Filter | undefined;
  if (body.UnitFilterID) {
    filter = (await findInSpace<Filter>(deps, caller, base, 'Filter', body.UnitFilterID)).item;
    if (filter.From !== 'Unit') throw new Invalid(`filter '${body.UnitFilterID}' selects ${filter.From}, not Unit`);
  }
  const whereUnit = [body.WhereUnit, filter?.Where].filter((x): x is string => !!x).join(' AND ') || undefined;
  if (whereUnit) parseWhere(whereUnit, 'Unit');
  const workflow = body.ChangeWorkflowID
    ? (await findInSpace<ChangeWorkflow>(deps, caller, base, 'ChangeWorkflow', body.ChangeWorkflowID)).item
    : undefined;
  const { scope, componentId } = await invokeScope(deps, caller, base, body);
  const {
    co,
    tags: [start, end, publish],
  } = newChangeOrder(deps, caller, base, {
    Slug: body.Slug,
    Labels: body.Labels,
    Description: body.Description,
    UpdateType: 'Invoke',
    workflow,
    InScopeSpaceIDs: scope,
    ComponentID: componentId,
    WhereSpace: body.WhereSpace,
    SpaceFilterID: body.SpaceFilterID,
    InvocationID: inv.InvocationID,
    Invocation: { Slug: inv.Slug, ToolchainType: inv.ToolchainType, FunctionInvocations: inv.FunctionInvocations },
    Parameters: values,
    WhereUnit: whereUnit,
    UnitFilterID: filter?.FilterID,
    PriorRevisions: body.PriorRevisions,
  });

  // The ChangeOrder and its Tags land together; the change is made in no Space yet, the base included.
  await deps.store.transact([
    { op: 'create', kind: 'ChangeOrder', item: co },
    ...[start, end, publish].map((t) => ({ op: 'create' as const, kind: 'Tag' as const, item: t })),
    ...createdEvent(deps, caller, co),
  ]);
  return co;
}

/** The Spaces in scope: named and/or selected (ANDed), or, with neither, every other Space of the base's Component. */
export async function invokeScope(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  body: Pick<InvokeInput, 'WhereSpace' | 'ComponentID' | 'SpaceFilterID' | 'InScopeSpaceIDs'>,
): Promise<{ scope: string[]; componentId?: string }> {
  const { queries, listed, spaces, componentId } = await askedScope(deps, caller, base, body);
  if (listed || queries.length)
    return {
      scope: selectScope({ base, spaces, updateType: 'Invoke', linkSpaces: new Set(), listed, queries }),
      componentId,
    };
  if (!base.ComponentID)
    throw new Invalid(
      `space '${base.Slug}' belongs to no Component: name the Spaces an Invoke change order runs in (--in-scope-space, --component, --where-space-field or --space-filter)`,
    );
  return {
    scope: spaces
      .filter((s) => s.ComponentID === base.ComponentID && s.SpaceID !== base.SpaceID)
      .sort(bySlug)
      .map((s) => s.SpaceID),
    componentId: base.ComponentID,
  };
}

/** One Unit's part of an Invoke promotion (or of one of the Links' type): what `-o mutations` prints of it too. */
export type InvokedUnit = PromotedUnit;

/**
 * Runs the ChangeOrder's Invocation on each selected Unit of the Space that lacks the end mark: a new
 * revision where it changes something (start mark on the head before, end and publish on the new one,
 * with the write), marks alone where it does not. `protect` protects the paths it writes.
 */
export async function promoteInvokeSpace(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  marks: CoMarks,
  space: Space,
  o: { dryRun: boolean; protect?: boolean },
): Promise<{ units: InvokedUnit[]; taken: boolean }> {
  const all = await deps.store.listUnits(space.SpaceID);
  const units = selectedUnits(co, space, all);
  const now = deps.now().toISOString();
  const out: InvokedUnit[] = [];
  for (const unit of units) {
    const r: InvokedUnit = {
      UnitID: unit.UnitID,
      UnitSlug: unit.Slug,
      SpaceID: space.SpaceID,
      Action: UnitAction.Unchanged,
    };
    out.push(r);
    if (marks.end.has(unit.UnitID)) {
      r.Reason = 'AlreadyTaken';
      continue;
    }
    try {
      const head = await dataAt(deps, unit, unit.HeadRevisionNum);
      let data = head;
      const written: { Resource: string; Path: string }[] = [];
      const calls = (co.Invocation?.FunctionInvocations ?? []).map((f) => ({
        FunctionName: f.FunctionName,
        Arguments: render(f.Arguments, co.Parameters ?? {}),
      }));
      for (const call of calls) {
        const res = runFunction(call.FunctionName, call.Arguments, data);
        data = res.data;
        written.push(...res.written);
      }
      if (data === head) {
        r.Action = 'Mark';
        r.Reason = 'NoChange';
        if (!o.dryRun)
          await deps.store.transact(intervalMarks(co, unit, unit.HeadRevisionNum, unit.HeadRevisionNum, now));
        continue;
      }
      r.Action = 'Invoke';
      r.RevisionNums = [unit.HeadRevisionNum + 1];
      r.Changes = diffData(unit.ToolchainType, head, data);
      if (o.dryRun) continue;
      const step = advance(
        deps,
        caller,
        { ...unit, ProtectedPaths: o.protect ? mergePaths(unit.ProtectedPaths, written) : unit.ProtectedPaths },
        head,
        data,
        {
          source: 'FunctionInvocation',
          description: co.Description ?? `change order ${co.Slug}`,
          functionInvocation: calls[0],
        },
      );
      await deps.store.transact([
        {
          op: 'update',
          kind: 'Unit',
          item: { ...step.unit, Version: unit.Version + 1 },
          expectedVersion: unit.Version,
        },
        ...step.ops,
        ...intervalMarks(co, unit, unit.HeadRevisionNum, step.unit.HeadRevisionNum, now),
      ]);
    } catch (e) {
      if (!(e instanceof BatonError)) throw e;
      r.Action = UnitAction.Failed;
      r.Error = { Code: e.code, Message: e.message };
    }
  }
  if (!units.length)
    throw new Conflict(
      `change order '${co.Slug}' selects no Unit in space '${space.Slug}'${co.WhereUnit ? ` (where ${co.WhereUnit})` : ''}: nothing to run its Invocation on`,
    );
  // Every other Unit is marked where it rests (its head), as for any ChangeOrder, so a Release of the change bundles the Space whole.
  const picked = new Set(units.map((u) => u.UnitID));
  const rest = all
    .filter((u) => !picked.has(u.UnitID) && u.ToolchainType !== DESCRIBING_TOOLCHAIN && !marks.publish.has(u.UnitID))
    .sort(bySlug);
  for (const unit of rest)
    out.push({
      UnitID: unit.UnitID,
      UnitSlug: unit.Slug,
      SpaceID: space.SpaceID,
      Action: 'Mark',
      Reason: 'NotCovered',
    });
  if (!o.dryRun)
    for (const part of chunk(
      rest.flatMap((u) => intervalMarks(co, u, u.HeadRevisionNum, u.HeadRevisionNum, now)),
      MARK_OPS_PER_TRANSACTION,
    ))
      await deps.store.transact(part);
  return { units: out, taken: out.every((u) => !u.Error) };
}

function mergePaths(
  have: { Resource: string; Path: string }[],
  add: { Resource: string; Path: string }[],
): { Resource: string; Path: string }[] {
  const seen = new Set(have.map((p) => `${p.Resource} ${p.Path}`));
  return [...have, ...add.filter((p) => !seen.has(`${p.Resource} ${p.Path}`) && seen.add(`${p.Resource} ${p.Path}`))];
}

import {
  allows,
  newEntity,
  patched,
  type AttestationPrerequisite,
  type Caller,
  type ChangeOrder,
  type ChangeOrderView,
  type ChangeWorkflow,
  type CommonPatch,
  type Space,
  type WorkflowDefinition,
} from '../model/entities.ts';
import { Conflict, expectVersion, Invalid, NotFound } from '../model/errors.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { findGroup, findUser } from '../people/people.ts';
import { findInSpace, findSpace } from '../variants/lookup.ts';
import { bounded } from '../util/concurrency.ts';
import { orgSpaces } from './stages.ts';
import { refreshScope } from './create.ts';
import { refuseIfWindowed } from './windows.ts';
import { firstStageGatesProblem, validateWorkflow } from './workflow.ts';
import { derive } from './progress.ts';
import { afterWorkflowChange } from './reevaluate.ts';
import type { ChangeDeps } from './ports.ts';

/** The definition alone, as a ChangeOrder copies it. */
function definition(w: WorkflowDefinition): WorkflowDefinition {
  return {
    Stages: w.Stages,
    Final: w.Final,
    CustomPrerequisites: w.CustomPrerequisites,
    AttestationPrerequisites: w.AttestationPrerequisites,
  };
}

/** Attestation requirements with their users and groups named by ID: a slug is looked up now (unknown → 400). */
async function resolvePeople(
  deps: ChangeDeps,
  caller: Caller,
  reqs: AttestationPrerequisite[] | undefined,
): Promise<AttestationPrerequisite[] | undefined> {
  if (!reqs) return reqs;
  const one = async <T>(what: string, find: () => Promise<T>): Promise<T> => {
    try {
      return await find();
    } catch (e) {
      if (e instanceof NotFound) throw new Invalid(`${what}: ${e.message}`);
      throw e;
    }
  };
  return Promise.all(
    reqs.map(async (r) => ({
      ...r,
      ...(r.FromUserIDs
        ? {
            FromUserIDs: await Promise.all(
              r.FromUserIDs.map(
                async (u) =>
                  (await one(`attestation prerequisite '${r.Name}' FromUserIDs`, () => findUser(deps, caller, u)))
                    .UserID,
              ),
            ),
          }
        : {}),
      ...(r.FromGroupIDs
        ? {
            FromGroupIDs: await Promise.all(
              r.FromGroupIDs.map(
                async (g) =>
                  (await one(`attestation prerequisite '${r.Name}' FromGroupIDs`, () => findGroup(deps, caller, g)))
                    .GroupID,
              ),
            ),
          }
        : {}),
    })),
  );
}

/** Creates a ChangeWorkflow, checked when written. */
export async function createWorkflow(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  input: WorkflowDefinition & {
    Slug: string;
    DisplayName?: string;
    Labels?: Record<string, string>;
    Annotations?: Record<string, string>;
  },
): Promise<ChangeWorkflow> {
  validateWorkflow(input);
  const body = {
    ...input,
    AttestationPrerequisites: await resolvePeople(deps, caller, input.AttestationPrerequisites),
  };
  const wf: ChangeWorkflow = {
    ...newEntity(deps, caller.OrganizationID, body),
    SpaceID: space.SpaceID,
    ChangeWorkflowID: deps.newId(),
    ...definition(body),
  };
  await deps.store.createInSpace('ChangeWorkflow', wf);
  return wf;
}

/**
 * The workflow a clone copies: `space/slug`, or a bare slug — in the destination if it is there, else the
 * one workflow of that name the caller can see in the organization (several is a 409 naming them).
 */
async function cloneSource(deps: ChangeDeps, caller: Caller, dest: Space, source: string): Promise<ChangeWorkflow> {
  if (source.includes('/') || (await deps.store.idInSpace(dest.SpaceID, 'ChangeWorkflow', source)))
    return (await findInSpace<ChangeWorkflow>(deps, caller, dest, 'ChangeWorkflow', source)).item;
  const spaces = (await orgSpaces(deps, caller, [])).filter((s) => allows(caller, s, 'View'));
  const found = (
    await bounded(spaces, 8, async (s) => ({ s, id: await deps.store.idInSpace(s.SpaceID, 'ChangeWorkflow', source) }))
  ).filter((x) => x.id);
  if (!found.length)
    throw new NotFound(`no change workflow '${source}' in any space you can see: name it as <space>/${source}`);
  if (found.length > 1)
    throw new Conflict(
      `change workflow '${source}' is in ${found.length} spaces (${found
        .map((x) => x.s.Slug)
        .sort()
        .join(', ')}): name one as <space>/${source}`,
    );
  return (await deps.store.getInSpace<ChangeWorkflow>('ChangeWorkflow', found[0]!.s.SpaceID, found[0]!.id!))!;
}

/** Copies a ChangeWorkflow (`space/slug` or a slug in `dest`) into `dest`, under its slug or a new one. */
export async function cloneWorkflow(
  deps: ChangeDeps,
  caller: Caller,
  dest: Space,
  source: string,
  slug?: string,
): Promise<ChangeWorkflow> {
  const src = await cloneSource(deps, caller, dest, source);
  const now = deps.now().toISOString();
  const wf: ChangeWorkflow = {
    ...src,
    ...definition(src),
    SpaceID: dest.SpaceID,
    ChangeWorkflowID: deps.newId(),
    Slug: slug ?? src.Slug,
    DisplayName: slug ?? src.DisplayName,
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  await deps.store.createInSpace('ChangeWorkflow', wf);
  return wf;
}

/** Edits a ChangeWorkflow in place, guarded by its Version and checked again; ChangeOrders keep the copy they took. */
export async function updateWorkflow(
  deps: ChangeDeps,
  caller: Caller,
  item: ChangeWorkflow,
  body: CommonPatch & Partial<WorkflowDefinition>,
): Promise<ChangeWorkflow> {
  expectVersion(`change workflow '${item.Slug}'`, item.Version, body.Version);
  const next: ChangeWorkflow = {
    ...patched(item, body, deps),
    Stages: body.Stages ?? item.Stages,
    Final: body.Final ?? item.Final,
    CustomPrerequisites: body.CustomPrerequisites ?? item.CustomPrerequisites,
    AttestationPrerequisites: body.AttestationPrerequisites
      ? await resolvePeople(deps, caller, body.AttestationPrerequisites)
      : item.AttestationPrerequisites,
  };
  validateWorkflow(next);
  // A ChangeOrder in flight that could not follow it (an Invoke or Link type one) keeps the workflow from that change.
  if (next.Stages[0]?.Prerequisites?.length) {
    const using = (await deps.store.changeOrdersOf(item.OrganizationID, { notCompleted: true, notAborted: true })).find(
      (co) => co.ChangeWorkflowID === item.ChangeWorkflowID && firstStageGatesProblem(co.UpdateType, next),
    );
    if (using)
      throw new Invalid(
        `change order '${using.Slug}' follows this workflow: ${firstStageGatesProblem(using.UpdateType, next)}`,
      );
  }
  await deps.store.updateInSpace('ChangeWorkflow', next, item.Version, item.Slug);
  return next;
}

/** What may change on a ChangeOrder: its description and labels, its scope selected again, or an abort. */
export interface UpdateChangeOrderInput {
  Version?: number;
  Description?: string;
  Labels?: Record<string, string | null>;
  RefreshSpaces?: boolean;
  /** Spaces to take out of its scope: ones that have not taken it (or were restored). */
  RemoveSpaces?: string[];
  AbortedReason?: string;
}

/** The Spaces named to leave a ChangeOrder's scope: each in it, and holding none of the change (never taken, or restored). */
async function spacesToRemove(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  co: ChangeOrder,
  refs: string[],
): Promise<Space[]> {
  const progress = new Map((await deps.store.progressOf(co.ChangeOrderID)).map((p) => [p.SpaceID, p]));
  const out: Space[] = [];
  for (const ref of refs) {
    const s = await findSpace(deps, caller, ref);
    if (!co.InScopeSpaceIDs.includes(s.SpaceID))
      throw new Invalid(`space '${s.Slug}' is not in the scope of change order '${co.Slug}'`);
    const p = progress.get(s.SpaceID);
    if (p && !p.RestoredAt)
      throw new Conflict(
        `space '${s.Slug}' has taken change order '${co.Slug}': take it back out first (cub variant demote ${s.Slug} --change-order ${base.Slug}/${co.Slug}), then remove it from the scope`,
      );
    out.push(s);
  }
  return out;
}

/** Updates a ChangeOrder, guarded by its Version; its Stage may then advance. Returns it as read. */
export async function updateChangeOrder(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  co: ChangeOrder,
  body: UpdateChangeOrderInput,
): Promise<ChangeOrderView> {
  expectVersion(`change order '${co.Slug}'`, co.Version, body.Version);
  // "" clears the reason: the abort is undone, as long as nothing has been restored (the spec's way back).
  const clearing = body.AbortedReason === '' && !!co.AbortedReason;
  const aborting = !!body.AbortedReason && body.AbortedReason !== co.AbortedReason;
  if (
    (aborting || clearing) &&
    co.AbortedReason &&
    (await deps.store.progressOf(co.ChangeOrderID)).some((p) => p.RestoredAt)
  ) {
    throw new Conflict(
      `change order '${co.Slug}' has been restored in some spaces, so its abort reason ('${co.AbortedReason}') can no longer ${clearing ? 'be cleared' : 'change'}`,
    );
  }
  // A first abort is refused while a window that says it governs aborts is closed over a Space that took the change.
  if (aborting && !co.AbortedReason)
    await refuseIfWindowed(
      deps,
      caller,
      'abort',
      `abort change order '${co.Slug}'`,
      async () => {
        const taken = new Set((await deps.store.progressOf(co.ChangeOrderID)).map((p) => p.SpaceID));
        return (await deps.store.listSpaces(caller.OrganizationID)).filter((s) => taken.has(s.SpaceID));
      },
      co,
    );
  const now = deps.now().toISOString();
  const removing = body.RemoveSpaces?.length ? await spacesToRemove(deps, caller, base, co, body.RemoveSpaces) : [];
  const removed = [
    ...(co.RemovedSpaces ?? []),
    ...removing.map((s) => ({ SpaceID: s.SpaceID, SpaceSlug: s.Slug, RemovedAt: now, UserID: caller.UserID })),
  ];
  const withRemoved = { ...co, RemovedSpaces: removed };
  const scope = body.RefreshSpaces
    ? await refreshScope(deps, caller, base, withRemoved)
    : co.InScopeSpaceIDs.filter((id) => !removing.some((s) => s.SpaceID === id));
  const next: ChangeOrder = {
    ...patched(co, { Labels: body.Labels }, deps),
    Description: body.Description ?? co.Description,
    InScopeSpaceIDs: scope,
    ...(removing.length ? { RemovedSpaces: removed } : {}),
    AbortedReason: body.AbortedReason || co.AbortedReason,
    // Who aborted it and when: the first abort, or whoever last changed the reason.
    ...(aborting ? { AbortedAt: now, AbortedBy: caller.UserID } : {}),
    ...(clearing ? { AbortedReason: undefined, AbortedAt: undefined, AbortedBy: undefined } : {}),
  };
  const aborted = aborting
    ? eventOps(deps, [
        {
          source: SOURCE,
          detailType: DetailType.ChangeOrderAborted,
          detail: {
            OrganizationID: co.OrganizationID,
            SpaceID: co.SpaceID,
            ChangeOrderID: co.ChangeOrderID,
            Slug: co.Slug,
            AbortedReason: next.AbortedReason!,
            AbortedAt: now,
            AbortedBy: caller.UserID,
          },
        },
      ])
    : [];
  await deps.store.transact([
    { op: 'update', kind: 'ChangeOrder', item: next, expectedVersion: co.Version },
    ...aborted,
  ]);
  await afterWorkflowChange(deps, caller, next);
  const fresh = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', base.SpaceID, co.ChangeOrderID))!;
  return derive(deps, caller, fresh, { completed: true });
}

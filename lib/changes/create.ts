import {
  ChangeSetState,
  type Caller,
  type ChangeOrder,
  type ChangeOrderUpdateType,
  type ChangeSet,
  type ChangeWorkflow,
  type Link,
  type PriorRevisions,
  type Progress,
  type Space,
  type Tag,
} from '../model/entities.ts';
import { Conflict, Invalid, NotFound } from '../model/errors.ts';
import type { StoreOp } from '../ports/store.ts';
import { chunk, TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import { parseWhere } from '../where/index.ts';
import { bySlug, findInSpace } from '../variants/lookup.ts';
import { intervalOf } from './intervals.ts';
import { createdEvent, intervalMarks, newChangeOrder, MARK_OPS_PER_TRANSACTION } from './marks.ts';
import { createInvokeChangeOrder } from './invoke.ts';
import { createLinkChangeOrder } from './link-change.ts';
import type { ChangeDeps } from './ports.ts';
import { selectScope } from './scope.ts';
import { askedScope, orgSpaces } from './stages.ts';

/** What a person gives to name a change made in a base Space; references by slug or ID. */
export interface CreateChangeOrderInput {
  Slug: string;
  Description?: string;
  Labels?: Record<string, string>;
  ChangeWorkflowID?: string;
  UpdateType: ChangeOrderUpdateType;
  InScopeSpaceIDs?: string[];
  ComponentID?: string;
  WhereSpace?: string;
  SpaceFilterID?: string;
  EndTagID?: string;
  /** Include when not given. */
  PriorRevisions?: PriorRevisions;
  AllowExists?: boolean;
  /** Invoke only: the Invocation, its parameter values, and the Units it runs on. */
  InvocationID?: string;
  Parameters?: Record<string, string>;
  WhereUnit?: string;
  UnitFilterID?: string;
}

/** The marks of the ChangeOrder's first transaction leave room for the ChangeOrder, its Tags, progress and their slug claims. */
const FIRST_MARKS = TRANSACTION_MAX_ITEMS - 10;

/** Creates a ChangeOrder: scope, intervals from the merge cursors, its three Tags, every Unit marked. */
export async function createChangeOrder(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  body: CreateChangeOrderInput,
): Promise<{ co: ChangeOrder; existed: boolean }> {
  const existingId = await deps.store.idInSpace(base.SpaceID, 'ChangeOrder', body.Slug);
  if (existingId) {
    const existing = await deps.store.getInSpace<ChangeOrder>('ChangeOrder', base.SpaceID, existingId);
    if (existing && body.AllowExists) return { co: existing, existed: true };
    throw new Conflict(`change order '${body.Slug}' already exists in space '${base.Slug}'`);
  }
  if (body.UpdateType === 'Invoke')
    return {
      co: await createInvokeChangeOrder(deps, caller, base, {
        ...body,
        PriorRevisions: body.PriorRevisions ?? 'Include',
      }),
      existed: false,
    };
  if (body.UpdateType === 'TransformPaths' || body.UpdateType === 'Insert' || body.UpdateType === 'Upsert')
    return { co: await createLinkChangeOrder(deps, caller, base, body), existed: false };
  for (const k of ['InvocationID', 'Parameters', 'WhereUnit', 'UnitFilterID'] as const)
    if (body[k] !== undefined) throw new Invalid(`${k} applies only to an Invoke change order (--update-type Invoke)`);
  const workflow = body.ChangeWorkflowID
    ? (await findInSpace<ChangeWorkflow>(deps, caller, base, 'ChangeWorkflow', body.ChangeWorkflowID)).item
    : undefined;
  const updateType = body.UpdateType;
  const units = (await deps.store.listUnits(base.SpaceID)).sort(bySlug);
  const linksByUnit = new Map(
    await Promise.all(
      units.map(
        async (u) =>
          [u.UnitID, (await deps.store.linksInto(u.UnitID)).filter((l) => l.UpdateType === updateType)] as const,
      ),
    ),
  );

  // Scope: listed and/or selected (ANDed), or wherever the Links reach.
  const { where, componentId, filter, queries, listed, spaces } = await askedScope(deps, caller, base, body);
  const byId = new Map(spaces.map((s) => [s.SpaceID, s]));
  const linkSpaces = new Set([...linksByUnit.values()].flat().map((l) => l.SpaceID));
  const scope = selectScope({ base, spaces, updateType, linkSpaces, listed, queries });

  // Intervals: from the merge cursors of the in-scope Links into each Unit, to head or the end Tag.
  const endTag = body.EndTagID ? await endTagOf(deps, caller, base, body.EndTagID) : undefined;
  const endMarks = endTag
    ? new Map((await deps.store.marksOfTag(endTag.TagID)).map((m) => [m.UnitID, m.RevisionNum]))
    : undefined;
  const inScope = new Set(scope);
  const skipped: Record<string, string> = {};
  const intervals: { unit: (typeof units)[number]; start: number; end: number }[] = [];
  for (const unit of units) {
    const links: Link[] = linksByUnit.get(unit.UnitID)!.filter((l) => inScope.has(l.SpaceID));
    const interval = intervalOf({
      unit,
      updateType,
      links,
      endTagged: endMarks ? { revision: endMarks.get(unit.UnitID) } : undefined,
      prior: body.PriorRevisions ?? 'Include',
      spaceName: (id) => byId.get(id)?.Slug ?? id,
    });
    if ('excluded' in interval) {
      skipped[unit.UnitID] = interval.excluded;
      continue;
    }
    if (unit.ChangeSetID && interval.end > (unit.ChangeSetStartRevisionNum ?? 0)) {
      const cs = await deps.store.getInSpace<ChangeSet>('ChangeSet', base.SpaceID, unit.ChangeSetID);
      throw new Conflict(
        `unit '${unit.Slug}': the change ends inside changeset '${cs?.Slug ?? unit.ChangeSetID}', which is still open; close it first`,
      );
    }
    if (interval.skipped) skipped[unit.UnitID] = interval.skipped;
    intervals.push(interval);
  }

  const now = deps.now().toISOString();
  const {
    co,
    tags: [startTag, endTagOwn, publishTag],
  } = newChangeOrder(deps, caller, base, {
    Slug: body.Slug,
    Labels: body.Labels,
    Description: body.Description,
    UpdateType: updateType,
    workflow,
    InScopeSpaceIDs: scope,
    ComponentID: componentId,
    WhereSpace: [where, filter?.Where].filter(Boolean).join(' AND ') || undefined,
    SpaceFilterID: filter?.FilterID,
    SkippedUnits: skipped,
    PriorRevisions: body.PriorRevisions ?? 'Include',
  });

  const head: StoreOp[] = [
    { op: 'create', kind: 'ChangeOrder', item: co },
    ...[startTag, endTagOwn, publishTag].map((t): StoreOp => ({ op: 'create', kind: 'Tag', item: t })),
    // The base holds the change it was made in.
    {
      op: 'create',
      kind: 'Progress',
      item: {
        ChangeOrderID: co.ChangeOrderID,
        BaseSpaceID: co.SpaceID,
        SpaceID: base.SpaceID,
        ResolvedAt: now,
        Version: 1,
      } satisfies Progress,
    },
    ...createdEvent(deps, caller, co),
  ];
  const marks = intervals.flatMap(({ unit, start, end }) => intervalMarks(co, unit, start, end, now));
  // The ChangeOrder, its Tags and (when they fit) its marks land together; a larger base marks in further transactions.
  const first = marks.splice(0, FIRST_MARKS);
  await deps.store.transact([...head, ...first]);
  for (const part of chunk(marks, MARK_OPS_PER_TRANSACTION)) await deps.store.transact(part);
  return { co, existed: false };
}

/** The Tag `--end-tag` names; an open ChangeSet's end Tag, not minted until it closes, gets the open-ChangeSet reason. */
async function endTagOf(deps: ChangeDeps, caller: Caller, base: Space, ref: string): Promise<Tag> {
  try {
    return (await findInSpace<Tag>(deps, caller, base, 'Tag', ref)).item;
  } catch (e) {
    const m = /^(?:(.+)\/)?(.+)-end$/.exec(ref);
    if (!(e instanceof NotFound) || !m) throw e;
    const cs = await findInSpace<ChangeSet>(deps, caller, base, 'ChangeSet', m[1] ? `${m[1]}/${m[2]}` : m[2]!).catch(
      () => undefined,
    );
    if (cs?.item.State === ChangeSetState.Open)
      throw new Conflict(`the change ends at changeset '${cs.item.Slug}', which is still open; close it first`);
    throw e;
  }
}

/** The ChangeOrder's Spaces selected again by its recorded selection (`--refresh-spaces`), by the same rule create used. */
export async function refreshScope(deps: ChangeDeps, caller: Caller, base: Space, co: ChangeOrder): Promise<string[]> {
  if (!co.WhereSpace)
    throw new Invalid(`change order '${co.Slug}' has no selection to evaluate again: its spaces were listed`);
  if (co.AbortedReason) throw new Conflict(`change order '${co.Slug}' was aborted`);
  const q = parseWhere(co.WhereSpace, 'Space');
  const spaces = await orgSpaces(deps, caller, [q]);
  const removed = new Set((co.RemovedSpaces ?? []).map((r) => r.SpaceID));
  return selectScope({ base, spaces, updateType: co.UpdateType, linkSpaces: new Set(), queries: [q] }).filter(
    (id) => !removed.has(id),
  );
}

/**
 * ChangeOrders of the Links' type (TransformPaths, Insert, Upsert): the change was made in source Units outside the
 * scope (registrybot's image tags), which the Spaces in scope follow by Links of that type. Creating
 * one marks each source (end at its current revision or the end Tag's, start at the oldest revision a
 * Link in scope has taken); promotion resolves each Space's Links at the end revision, never the
 * source's head, so a newer source revision during the rollout reaches no later stage.
 */
import {
  DESCRIBING_TOOLCHAIN,
  LINK_CHANGE_TYPES,
  type Caller,
  type ChangeOrder,
  type ChangeWorkflow,
  type Link,
  type Space,
  type Tag,
  type Unit,
} from '../model/entities.ts';
import { BatonError, Conflict, Invalid, NotFound } from '../model/errors.ts';
import type { StoreOp } from '../ports/store.ts';
import { chunk } from '../util/chunk.ts';
import { matches } from '../where/index.ts';
import { bySlug, findInSpace } from '../variants/lookup.ts';
import { UnitAction } from '../variants/merge.ts';
import { planResolve, writeResolve } from '../variants/resolve.ts';
import { tagMarksOn } from '../variants/revision-refs.ts';
import { type InvokedUnit } from './invoke.ts';
import { selectScope } from './scope.ts';
import { askedScope } from './stages.ts';
import { createdEvent, intervalMarks, newChangeOrder, type CoMarks, MARK_OPS_PER_TRANSACTION } from './marks.ts';
import type { ChangeDeps } from './ports.ts';
import { recordTaken } from './progress.ts';

type LinkChangeType = (typeof LINK_CHANGE_TYPES)[number];

/** What a ChangeOrder of the Links' type is made with. */
export interface LinkChangeInput {
  Slug: string;
  Description?: string;
  Labels?: Record<string, string>;
  ChangeWorkflowID?: string;
  UpdateType: 'TransformPaths' | 'Insert' | 'Upsert' | string;
  InScopeSpaceIDs?: string[];
  ComponentID?: string;
  WhereSpace?: string;
  SpaceFilterID?: string;
  EndTagID?: string;
  PriorRevisions?: string;
}

export async function createLinkChangeOrder(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  body: LinkChangeInput,
): Promise<ChangeOrder> {
  const type = body.UpdateType as LinkChangeType;
  if (!(LINK_CHANGE_TYPES as readonly string[]).includes(type))
    throw new Invalid(`--update-type ${type} is not a Link type: TransformPaths, Insert or Upsert`);
  if (body.PriorRevisions !== undefined)
    throw new Invalid(
      `--prior-revisions does not apply to a ${type} change order: its change was made in the sources its Links follow`,
    );
  if (!body.InScopeSpaceIDs?.length && !body.ComponentID && !body.WhereSpace && !body.SpaceFilterID) {
    throw new Invalid(
      `a ${type} change order needs the Spaces in scope (--component, --in-scope-space, --where-space-field or --space-filter): its Links leave from them, and a Space in scope is a target, never a source`,
    );
  }
  const asked = await askedScope(deps, caller, base, body);
  const others = selectScope({
    base,
    spaces: asked.spaces,
    updateType: type,
    linkSpaces: new Set(),
    listed: asked.listed,
    queries: asked.queries,
  });
  // The base is a target like any other only when the selection picks it and it has Links of the type itself.
  const baseAsked = asked.spaces.find((s) => s.SpaceID === base.SpaceID);
  const baseSelected =
    !!baseAsked &&
    (!asked.listed || asked.listed.includes(base.SpaceID)) &&
    asked.queries.every((q) => matches(q, baseAsked));
  const outside = (l: Link) => l.UpdateType === type && l.ToSpaceID !== base.SpaceID && !others.includes(l.ToSpaceID);
  const baseLinks = baseSelected ? (await deps.store.listInSpace<Link>('Link', base.SpaceID)).filter(outside) : [];
  const scope = baseLinks.length
    ? [...others, base.SpaceID].sort((a, b) =>
        bySlug(
          asked.spaces.find((s) => s.SpaceID === a)!,
          asked.spaces.find((s) => s.SpaceID === b)!,
        ),
      )
    : others;
  // The Links of that type leaving the Spaces in scope for Units outside it: their sources.
  const links = [
    ...(await Promise.all(others.map((id) => deps.store.listInSpace<Link>('Link', id)))).flat().filter(outside),
    ...baseLinks,
  ];
  if (!links.length)
    throw new Invalid(`no ${type} Link leaves the Spaces in scope for a Unit outside it: nothing to carry`);
  const auto = links.find((l) => l.AutoUpdate);
  if (auto)
    throw new Conflict(
      `link '${auto.Slug}' is AutoUpdate: it takes a new source revision the moment it is written, ahead of any gate; turn AutoUpdate off first`,
    );
  const endTag = body.EndTagID ? (await findInSpace<Tag>(deps, caller, base, 'Tag', body.EndTagID)).item : undefined;
  const sources = new Map<string, { unit: Unit; links: Link[] }>();
  for (const l of links) {
    const s = sources.get(l.ToUnitID) ?? { unit: (await deps.store.getUnit(l.ToSpaceID, l.ToUnitID))!, links: [] };
    if (!s.unit) throw new NotFound(`link '${l.Slug}': its source unit no longer exists`);
    s.links.push(l);
    sources.set(l.ToUnitID, s);
  }
  const now = deps.now().toISOString();
  const workflow = body.ChangeWorkflowID
    ? (await findInSpace<ChangeWorkflow>(deps, caller, base, 'ChangeWorkflow', body.ChangeWorkflowID)).item
    : undefined;
  const {
    co,
    tags: [start, end, publish],
  } = newChangeOrder(deps, caller, base, {
    Slug: body.Slug,
    Labels: body.Labels,
    Description: body.Description,
    UpdateType: type,
    workflow,
    InScopeSpaceIDs: scope,
    ComponentID: asked.componentId,
    WhereSpace: body.WhereSpace,
    SpaceFilterID: body.SpaceFilterID,
  });
  // Each source: end where it is now (or where the end Tag marks it), start at the oldest revision a Link in scope has taken.
  const marks: StoreOp[] = [];
  const endOf = new Map<string, number>();
  // The end Tag's marks on the sources, by key in one batch, not each source's marks whole.
  const endMarks = endTag ? await tagMarksOn(deps, endTag, [...sources.keys()]) : undefined;
  for (const { unit, links: ls } of [...sources.values()].sort((a, b) => bySlug(a.unit, b.unit))) {
    let endRev = unit.HeadRevisionNum;
    if (endTag) {
      const m = endMarks!.get(unit.UnitID);
      if (!m) throw new NotFound(`tag '${endTag.Slug}' does not mark source unit '${unit.Slug}'`);
      endRev = m.RevisionNum;
    }
    const past = ls.find((l) => l.UpstreamLastMergedRevisionNum > endRev);
    if (past)
      throw new Conflict(
        `link '${past.Slug}' has already resolved revision ${past.UpstreamLastMergedRevisionNum} of '${unit.Slug}', past the revision ${endRev} this change order would end at: resolving it to the end would take it back`,
      );
    const startRev = Math.min(...ls.map((l) => l.UpstreamLastMergedRevisionNum));
    endOf.set(unit.UnitID, endRev);
    marks.push(...intervalMarks(co, unit, startRev, endRev, now));
  }
  // The base has the change only if its own Links took it already: then its Units are marked where they rest.
  const baseTook =
    baseLinks.length > 0 && baseLinks.every((l) => l.UpstreamLastMergedRevisionNum === endOf.get(l.ToUnitID));
  if (baseTook)
    for (const u of (await deps.store.listUnits(base.SpaceID)).filter((x) => x.ToolchainType !== DESCRIBING_TOOLCHAIN))
      marks.push(...intervalMarks(co, u, u.HeadRevisionNum, u.HeadRevisionNum, now));
  await deps.store.transact([
    { op: 'create', kind: 'ChangeOrder', item: co },
    ...[start, end, publish].map((t) => ({ op: 'create' as const, kind: 'Tag' as const, item: t })),
    ...createdEvent(deps, caller, co),
  ]);
  for (const part of chunk(marks, MARK_OPS_PER_TRANSACTION)) await deps.store.transact(part);
  if (baseTook) await recordTaken(deps, co, base, now);
  return co;
}

/**
 * Promotes a ChangeOrder of the Links' type into one Space: each Unit with Links of that type to its
 * sources resolves them at the end revision (a new revision where that changes something, marked with
 * the write); every other Unit is marked where it rests. No Space waits for another.
 */
export async function promoteLinkSpace(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  marks: CoMarks,
  space: Space,
  o: { dryRun: boolean },
): Promise<{ units: InvokedUnit[] }> {
  const [all, links] = await Promise.all([
    deps.store.listUnits(space.SpaceID),
    deps.store.listInSpace<Link>('Link', space.SpaceID),
  ]);
  const ours = links.filter((l) => l.UpdateType === co.UpdateType && marks.end.has(l.ToUnitID));
  const now = deps.now().toISOString();
  const out: InvokedUnit[] = [];
  for (const unit of all.filter((u) => u.ToolchainType !== DESCRIBING_TOOLCHAIN).sort(bySlug)) {
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
    const mine = ours.filter((l) => l.FromUnitID === unit.UnitID);
    try {
      if (!mine.length) {
        r.Action = 'Mark';
        r.Reason = 'NotCovered';
        if (!o.dryRun)
          await deps.store.transact(intervalMarks(co, unit, unit.HeadRevisionNum, unit.HeadRevisionNum, now));
        continue;
      }
      const plan = await planResolve(
        deps,
        caller,
        unit,
        mine,
        (l) => marks.end.get(l.ToUnitID)?.RevisionNum,
        co.Description ?? `change order ${co.Slug}`,
      );
      r.Action = plan.result.Changed ? 'Resolve' : 'Mark';
      if (plan.result.Changed) {
        r.RevisionNums = [plan.unit.HeadRevisionNum];
        r.Changes = plan.changes;
      } else r.Reason = 'NoChange';
      if (o.dryRun) continue;
      await writeResolve(deps, unit, [
        ...plan.ops,
        ...intervalMarks(co, unit, unit.HeadRevisionNum, plan.unit.HeadRevisionNum, now),
      ]);
    } catch (e) {
      if (!(e instanceof BatonError)) throw e;
      r.Action = UnitAction.Failed;
      r.Error = { Code: e.code, Message: e.message };
    }
  }
  return { units: out };
}

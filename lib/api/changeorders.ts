import type { z } from 'zod';
import type { ChangeOrder, ChangeWorkflow, Caller, Filter, GateResult, Link, Mark, PriorRevisions, Progress, Release, Space, Tag, Unit } from '../model/entities.ts';
import { BatonError, Conflict, Invalid, NotFound } from '../model/errors.ts';
import { evaluateGates, evaluatePrerequisite, refusal, type GateChangeOrder, type SpaceGateState } from '../gates/prerequisites.ts';
import { matches, parseWhere, relationsUsed, type Query } from '../where/index.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import type { Deps } from './deps.ts';
import type { StoreOp } from './ports.ts';
import { findInSpace, findSpace, withSpace } from './resolve.ts';
import { newEntity } from './route.ts';
import { releasesOf } from './releases.ts';
import type { CreateChangeOrder } from './schemas.ts';
import { bounded, cachedReader, cloneOps, mergeInto, type UnitResult, type UpstreamReader } from './variants.ts';

/** Spaces of one Stage promoted at once. */
export const PROMOTE_CONCURRENCY = 16;

/** A ChangeOrder's marks: where each Unit's interval starts and ends, and what a Release of it bundles. */
export interface CoMarks {
  start: Map<string, Mark>;
  end: Map<string, Mark>;
  publish: Map<string, Mark>;
}

export async function marksOf(deps: Deps, co: ChangeOrder): Promise<CoMarks> {
  const [s, e, p] = await Promise.all([deps.store.marksOfTag(co.StartTagID), deps.store.marksOfTag(co.EndTagID), deps.store.marksOfTag(co.PublishTagID)]);
  const by = (l: Mark[]) => new Map(l.map((m) => [m.UnitID, m]));
  return { start: by(s), end: by(e), publish: by(p) };
}

/** A ChangeOrder named `slug` in `space`, or `space/slug`. */
export async function findChangeOrder(deps: Deps, caller: Caller, space: Space | undefined, ref: string): Promise<{ co: ChangeOrder; base: Space }> {
  const { item, space: base } = await findInSpace<ChangeOrder>(deps, caller, space, 'ChangeOrder', ref);
  return { co: item, base };
}

const markOp = (co: ChangeOrder, role: 'start' | 'end' | 'publish', unit: Unit, rev: number, now: string, move = false): StoreOp => {
  const tagId = role === 'start' ? co.StartTagID : role === 'end' ? co.EndTagID : co.PublishTagID;
  return { op: move ? 'put' : 'create', kind: 'Mark', item: { TagID: tagId, UnitID: unit.UnitID, SpaceID: unit.SpaceID, RevisionNum: rev, UpdatedAt: now, ChangeOrderID: co.ChangeOrderID, Role: role } } as StoreOp;
};

/** Every org Space, with `Component` attached when a query reads it. */
export async function orgSpaces(deps: Deps, caller: Caller, queries: Query[]): Promise<Space[]> {
  const spaces = await deps.store.listSpaces(caller.OrganizationID);
  if (!queries.some((q) => relationsUsed(q).has('Component'))) return spaces;
  const comps = new Map((await deps.store.listComponents(caller.OrganizationID)).map((c) => [c.ComponentID, c]));
  return spaces.map((s) => ({ ...s, Component: s.ComponentID ? comps.get(s.ComponentID) : undefined }) as Space);
}

/** Spaces downstream of the base, hop by hop: those cloned from it (UpstreamSpaceID), transitively, and those its Links reach. */
function downstreamOf(base: Space, spaces: Space[], linkSpaces: Set<string>): Set<string> {
  const out = new Set<string>(linkSpaces);
  let frontier = new Set([base.SpaceID, ...linkSpaces]);
  while (frontier.size) {
    const next = new Set<string>();
    for (const s of spaces) if (s.UpstreamSpaceID && frontier.has(s.UpstreamSpaceID) && !out.has(s.SpaceID) && s.SpaceID !== base.SpaceID) next.add(s.SpaceID);
    for (const id of next) out.add(id);
    frontier = next;
  }
  return out;
}

/** Creates a ChangeOrder: scope, intervals from the merge cursors, its three Tags, every Unit marked. */
export async function createChangeOrder(deps: Deps, caller: Caller, base: Space, body: z.output<typeof CreateChangeOrder>): Promise<{ co: ChangeOrder; existed: boolean }> {
  const existingId = await deps.store.resolveSlug(`SPACE#${base.SpaceID}`, 'changeorder', body.Slug);
  if (existingId) {
    const existing = await deps.store.getInSpace<ChangeOrder>('ChangeOrder', base.SpaceID, existingId);
    if (existing && body.AllowExists) return { co: withSpace(existing, base), existed: true };
    throw new Conflict(`change order '${body.Slug}' already exists in space '${base.Slug}'`);
  }
  let workflow: ChangeWorkflow | undefined;
  if (body.ChangeWorkflowID) workflow = (await findInSpace<ChangeWorkflow>(deps, caller, base, 'ChangeWorkflow', body.ChangeWorkflowID)).item;
  const updateType = body.UpdateType;
  const followType = updateType;
  const units = (await deps.store.listUnits(base.SpaceID)).sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
  const linksByUnit = new Map(await Promise.all(units.map(async (u) => [u.UnitID, (await deps.store.linksInto(u.UnitID)).filter((l) => l.UpdateType === followType)] as const)));
  const linkSpaces = new Set([...linksByUnit.values()].flat().map((l) => l.SpaceID));

  // Scope: listed and/or selected (ANDed), or wherever the Links reach.
  const where = [body.WhereSpace, body.ComponentID ? `ComponentID = '${(await findComponentId(deps, caller, body.ComponentID))}'` : undefined].filter((x): x is string => !!x).join(' AND ');
  const queries: Query[] = where ? [parseWhere(where, 'Space')] : [];
  let filter: Filter | undefined;
  if (body.SpaceFilterID) {
    filter = (await findInSpace<Filter>(deps, caller, base, 'Filter', body.SpaceFilterID)).item;
    if (filter.From !== 'Space') throw new Invalid(`filter '${body.SpaceFilterID}' selects ${filter.From}, not Space`);
    queries.push(parseWhere(filter.Where, 'Space'));
  }
  const spaces = await orgSpaces(deps, caller, queries);
  const byId = new Map(spaces.map((s) => [s.SpaceID, s]));
  // UpgradeUnit changes travel the clone lineage; MergeUnits changes only where MergeUnits Links reach.
  const reach = updateType === 'UpgradeUnit' ? downstreamOf(base, spaces, linkSpaces) : linkSpaces;
  let scope: string[];
  if (body.InScopeSpaceIDs?.length) {
    scope = [];
    for (const ref of body.InScopeSpaceIDs) scope.push((await findSpace(deps, caller, ref)).SpaceID);
    scope = scope.filter((id) => queries.every((q) => matches(q, byId.get(id)!)));
  } else if (queries.length) {
    scope = spaces.filter((s) => s.SpaceID !== base.SpaceID && queries.every((q) => matches(q, s))).map((s) => s.SpaceID);
  } else scope = [...reach];
  scope = [...new Set(scope)].filter((id) => id !== base.SpaceID).sort((a, b) => (byId.get(a)!.Slug < byId.get(b)!.Slug ? -1 : 1));
  checkNoSkips(base, scope, byId, updateType);

  // Intervals: from the merge cursors of the in-scope Links into each Unit, to head or the end Tag.
  let endTag: Tag | undefined;
  if (body.EndTagID) endTag = (await findInSpace<Tag>(deps, caller, base, 'Tag', body.EndTagID)).item;
  const endMarks = endTag ? new Map((await deps.store.marksOfTag(endTag.TagID)).map((m) => [m.UnitID, m.RevisionNum])) : undefined;
  const inScope = new Set(scope);
  const prior = body.PriorRevisions;
  const skipped: Record<string, string> = {};
  const intervals: { unit: Unit; start: number; end: number }[] = [];
  for (const u of units) {
    if (u.ToolchainType === 'ConfigHub/YAML') {
      skipped[u.UnitID] = 'ConfigHub/YAML units are not promoted';
      continue;
    }
    const links = linksByUnit.get(u.UnitID)!.filter((l) => inScope.has(l.SpaceID));
    if (updateType === 'MergeUnits' && !links.length) {
      skipped[u.UnitID] = 'nothing follows it by a MergeUnits link';
      continue;
    }
    const cursors = [...new Set(links.map((l) => l.UpstreamLastMergedRevisionNum))];
    if (cursors.length > 1) {
      throw new Conflict(
        `unit '${u.Slug}': the links pointing at it disagree on where the change starts: ${links
          .map((l) => `${byId.get(l.SpaceID)?.Slug ?? l.SpaceID} has merged to revision ${l.UpstreamLastMergedRevisionNum}`)
          .sort()
          .join(', ')}`,
      );
    }
    const start = cursors[0] ?? (u.LastReleasedRevisionNum || u.HeadRevisionNum);
    let end = endMarks ? (endMarks.get(u.UnitID) ?? (prior === 'All' ? u.HeadRevisionNum : start)) : u.HeadRevisionNum;
    if (!links.length && !endMarks) end = prior === 'All' ? u.HeadRevisionNum : start;
    if (end < start) throw new Conflict(`unit '${u.Slug}': the downstream spaces have merged to revision ${start}, past the end of the change (${end})`);
    if (u.ChangeSetID && end > (u.ChangeSetStartRevisionNum ?? 0)) {
      const cs = await deps.store.getInSpace<{ Slug: string }>('ChangeSet', base.SpaceID, u.ChangeSetID);
      throw new Conflict(`unit '${u.Slug}': the change ends inside changeset '${cs?.Slug ?? u.ChangeSetID}', which is still open; close it first`);
    }
    if (start === end) skipped[u.UnitID] = links.length ? `no change: the spaces that follow it have revision ${start}` : `no change: nothing follows it; marked at revision ${start}`;
    intervals.push({ unit: u, start, end });
  }

  const now = deps.now().toISOString();
  const tag = (suffix: string): Tag => ({ ...newEntity(deps, caller.OrganizationID, { Slug: `${body.Slug}-co-${suffix}` }), SpaceID: base.SpaceID, TagID: deps.newId() });
  const [startTag, endTagOwn, publishTag] = [tag('start'), tag('end'), tag('publish')];
  const co: ChangeOrder = {
    OrganizationID: caller.OrganizationID,
    SpaceID: base.SpaceID,
    ChangeOrderID: deps.newId(),
    Slug: body.Slug,
    DisplayName: body.Slug,
    Labels: body.Labels ?? {},
    Annotations: {},
    Description: body.Description,
    UpdateType: updateType,
    ChangeWorkflowID: workflow?.ChangeWorkflowID,
    ChangeWorkflow: workflow ? { Stages: workflow.Stages, Final: workflow.Final, CustomPrerequisites: workflow.CustomPrerequisites, AttestationPrerequisites: workflow.AttestationPrerequisites } : undefined,
    InScopeSpaceIDs: scope,
    WhereSpace: [where, filter?.Where].filter(Boolean).join(' AND ') || undefined,
    SpaceFilterID: filter?.FilterID,
    StartTagID: startTag.TagID,
    EndTagID: endTagOwn.TagID,
    PublishTagID: publishTag.TagID,
    SkippedUnits: skipped,
    PriorRevisions: prior,
    Promotions: [],
    PromotionFailures: [],
    PromotionOverrides: [],
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  for (const t of [startTag, endTagOwn, publishTag]) t.ChangeOrderID = co.ChangeOrderID;
  const head: StoreOp[] = [
    { op: 'create', kind: 'ChangeOrder', item: co },
    ...[startTag, endTagOwn, publishTag].map((t): StoreOp => ({ op: 'create', kind: 'Tag', item: t })),
    // The base holds the change it was made in.
    { op: 'create', kind: 'Progress', item: { ChangeOrderID: co.ChangeOrderID, SpaceID: base.SpaceID, ResolvedAt: now, Version: 1 } },
  ];
  const marks = intervals.flatMap(({ unit, start, end }) => [markOp(co, 'start', unit, start, now), markOp(co, 'end', unit, end, now), markOp(co, 'publish', unit, end, now)]);
  // The ChangeOrder, its Tags and (when they fit) its marks land together; a larger base marks in further transactions.
  const first = marks.splice(0, Math.max(0, 90 - head.length * 2));
  await deps.store.transact([...head, ...first]);
  for (let i = 0; i < marks.length; i += 90) await deps.store.transact(marks.slice(i, i + 90));
  return { co: withSpace(co, base), existed: false };
}

async function findComponentId(deps: Deps, caller: Caller, ref: string): Promise<string> {
  const id = /^[0-9a-f-]{36}$/i.test(ref) ? ref : await deps.store.resolveSlug(`ORG#${caller.OrganizationID}`, 'component', ref);
  if (!id || !(await deps.store.getComponent(caller.OrganizationID, id))) throw new NotFound(`component '${ref}' not found`);
  return id;
}

/** A change moves hop by hop: every Space between the base and a Space in scope must be in scope too. */
export function checkNoSkips(base: Space, scope: string[], byId: Map<string, Space>, updateType: string): void {
  if (updateType !== 'UpgradeUnit') return;
  const inScope = new Set(scope);
  for (const id of scope) {
    const chain: Space[] = [];
    let s = byId.get(id);
    const seen = new Set<string>();
    while (s && s.UpstreamSpaceID && s.UpstreamSpaceID !== base.SpaceID && !seen.has(s.SpaceID)) {
      seen.add(s.SpaceID);
      s = byId.get(s.UpstreamSpaceID);
      if (s) chain.push(s);
    }
    if (!s || s.UpstreamSpaceID !== base.SpaceID) throw new Invalid(`space '${byId.get(id)?.Slug ?? id}' is not downstream of '${base.Slug}'; a change order moves along links from its base`);
    const skippedSpace = chain.find((c) => !inScope.has(c.SpaceID));
    if (skippedSpace) throw new Invalid(`the selection skips space '${skippedSpace.Slug}', which lies between '${base.Slug}' and '${byId.get(id)!.Slug}'; every space between the base and a space in scope must be in scope`);
  }
}

/** The Spaces of each Stage: those its WhereSpace selects among the ChangeOrder's in-scope Spaces. */
export async function stagesOf(deps: Deps, caller: Caller, co: ChangeOrder): Promise<{ name: string; spaces: Space[]; prerequisites: string[]; release: string[] }[]> {
  const wf = co.ChangeWorkflow;
  if (!wf) return [];
  const queries = wf.Stages.map((s) => parseWhere(s.WhereSpace, 'Space'));
  const spaces = (await orgSpaces(deps, caller, queries)).filter((s) => co.InScopeSpaceIDs.includes(s.SpaceID));
  return wf.Stages.map((st, i) => ({
    name: st.Name,
    spaces: spaces.filter((s) => matches(queries[i]!, s)).sort((a, b) => (a.Slug < b.Slug ? -1 : 1)),
    prerequisites: st.Prerequisites ?? [],
    release: st.ReleasePrerequisites ?? [],
  }));
}

/** What the gates read about one Space, read now. */
export async function gateState(deps: Deps, co: ChangeOrder, marks: CoMarks, progress: Map<string, Progress>, space: Space): Promise<SpaceGateState> {
  const published = (await releasesOf(deps, space)).filter((r) => r.Published);
  const changedMarks = [...marks.end.values()].filter((m) => m.SpaceID === space.SpaceID && marks.start.get(m.UnitID)?.RevisionNum !== m.RevisionNum);
  const units = new Map((await deps.store.listUnits(space.SpaceID)).map((u) => [u.UnitID, u]));
  const changed = await Promise.all(
    changedMarks.map(async (m) => {
      const rev = marks.publish.get(m.UnitID)?.RevisionNum ?? m.RevisionNum;
      const r = await deps.store.getRevision(m.UnitID, rev);
      return { slug: units.get(m.UnitID)?.Slug ?? m.UnitID, revision: rev, validationErrors: r?.ValidationErrors ?? {}, unitId: m.UnitID, end: m.RevisionNum };
    }),
  );
  const carries = (r: Release) => r.ChangeOrderID === co.ChangeOrderID || changed.every((c) => (r.Units.find((u) => u.UnitID === c.unitId)?.RevisionNum ?? 0) >= c.end);
  return { space, taken: progress.has(space.SpaceID), published, carries, changed };
}

export function gateView(co: ChangeOrder): GateChangeOrder {
  return { json: co as unknown as Record<string, unknown>, slug: co.Slug, workflow: co.ChangeWorkflow ?? { Stages: [] } };
}

/** Derives State and the Space sets from progress; Completed from Final over the last Stage when asked. */
export async function derive(deps: Deps, caller: Caller, co: ChangeOrder, opts: { completed?: boolean; spaces?: Map<string, Space> } = {}): Promise<ChangeOrder> {
  const progress = await deps.store.progressOf(co.ChangeOrderID);
  const resolved = progress.filter((p) => p.ResolvedAt).map((p) => p.SpaceID);
  const released = progress.filter((p) => p.ReleaseID);
  // A list derives many ChangeOrders from one reading of the organization's Spaces.
  const spaces = opts.spaces ?? new Map((await deps.store.listSpaces(caller.OrganizationID)).map((s) => [s.SpaceID, s]));
  const inScope = co.InScopeSpaceIDs;
  const taken = inScope.filter((id) => resolved.includes(id));
  const needRelease = inScope.filter((id) => spaces.get(id)?.ReleaseTargetID);
  let state: string;
  if (co.AbortedReason) state = 'Aborted';
  else if (!taken.length) state = 'New';
  else if (taken.length < inScope.length) state = 'InProgress';
  else if (needRelease.every((id) => released.some((p) => p.SpaceID === id))) state = needRelease.length ? 'Released' : 'Resolved';
  else state = 'Resolved';
  const out: ChangeOrder = {
    ...co,
    State: state,
    ResolvedSpaceIDs: resolved,
    ReleasedSpaceIDs: released.map((p) => p.SpaceID),
    Releases: released.map((p) => ({ ReleaseID: p.ReleaseID!, ReleaseNum: p.ReleaseNum ?? 0, SpaceID: p.SpaceID })),
    Completed: co.Stage === 'Completed',
  };
  if (opts.completed && co.ChangeWorkflow && co.Stage !== 'Completed') out.Completed = (await computeStage(deps, caller, co)).stage === 'Completed';
  return out;
}

/** The latest Stage every Space of which took the change, or Completed once the last also satisfies Final. */
export async function computeStage(deps: Deps, caller: Caller, co: ChangeOrder): Promise<{ stage?: string; index: number }> {
  const stages = await stagesOf(deps, caller, co);
  const progress = new Map((await deps.store.progressOf(co.ChangeOrderID)).map((p) => [p.SpaceID, p]));
  let index = -1;
  for (const [i, st] of stages.entries()) {
    if (!st.spaces.length || !st.spaces.every((s) => progress.has(s.SpaceID))) break;
    index = i;
  }
  if (index < 0) return { index };
  if (index === stages.length - 1) {
    const final = co.ChangeWorkflow?.Final?.Prerequisites ?? [];
    const marks = await marksOf(deps, co);
    const states = await Promise.all(stages[index]!.spaces.map((s) => gateState(deps, co, marks, progress, s)));
    if (evaluateGates(final, gateView(co), states).every((g) => g.Satisfied)) return { stage: 'Completed', index: stages.length };
  }
  return { stage: stages[index]!.name, index };
}

/** Records the Stage the change has reached, if later than the recorded one: it never moves back. */
export async function advanceStage(deps: Deps, caller: Caller, coRef: { SpaceID: string; ChangeOrderID: string }): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const co = await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID);
    if (!co?.ChangeWorkflow) return;
    const { stage, index } = await computeStage(deps, caller, co);
    const names = co.ChangeWorkflow.Stages.map((s) => s.Name);
    const current = co.Stage === 'Completed' ? names.length : co.Stage ? names.indexOf(co.Stage) : -1;
    if (!stage || index <= current) return;
    try {
      await deps.store.transact([{ op: 'update', kind: 'ChangeOrder', item: { ...co, Stage: stage, UpdatedAt: deps.now().toISOString(), Version: co.Version + 1 }, expectedVersion: co.Version }]);
      const detail = { OrganizationID: co.OrganizationID, SpaceID: co.SpaceID, ChangeOrderID: co.ChangeOrderID, Slug: co.Slug, Stage: stage, PreviousStage: co.Stage };
      await deps.bus.put([
        { source: SOURCE, detailType: DetailType.ChangeOrderStageAdvanced, detail },
        ...(stage === 'Completed' ? [{ source: SOURCE, detailType: DetailType.ChangeOrderCompleted, detail }] : []),
      ]);
      return;
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
    }
  }
}

/** Applies a change to the ChangeOrder record (failures, overrides, promotions), retrying a lost race. */
export async function recordOn(deps: Deps, coRef: ChangeOrder, change: (co: ChangeOrder) => Partial<ChangeOrder>): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const co = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', coRef.SpaceID, coRef.ChangeOrderID))!;
    try {
      await deps.store.transact([{ op: 'update', kind: 'ChangeOrder', item: { ...co, ...change(co), UpdatedAt: deps.now().toISOString(), Version: co.Version + 1 }, expectedVersion: co.Version }]);
      return;
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
    }
  }
  throw new Conflict('the change order kept changing; retry');
}

/** The result of promoting one Space. */
export interface SpaceResult {
  SpaceID: string;
  SpaceSlug: string;
  Action: 'Promote' | 'Unchanged' | 'Skipped' | 'Blocked' | 'Failed';
  Error?: string;
  Units: (UnitResult & { Reason?: string })[];
}

interface PromoteContext {
  co: ChangeOrder;
  marks: CoMarks;
  prior: PriorRevisions;
  dryRun: boolean;
  read: UpstreamReader;
  upstreamUnits: Map<string, Unit>;
  /** The Units of each upstream Space, listed once per promotion however many Spaces clone from it. */
  upstreamLists?: Map<string, Promise<Unit[]>>;
}

/**
 * Promotes one Space: clones what the change carries that it lacks (at the start, then replays), upgrades
 * each Unit behind over the ChangeOrder's range (marks written with each Unit's merge), marks every other
 * Unit, then records the Space's progress. A Unit that already carries the end mark took the change.
 */
export async function promoteSpace(deps: Deps, caller: Caller, ctx: PromoteContext, space: Space): Promise<SpaceResult> {
  const { co, marks } = ctx;
  const res: SpaceResult = { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: 'Promote', Units: [] };
  const [unitsList, links] = await Promise.all([deps.store.listUnits(space.SpaceID), deps.store.listInSpace<Link>('Link', space.SpaceID)]);
  const now = deps.now().toISOString();
  const followType = co.UpdateType;
  const linkOf = new Map(links.filter((l) => l.UpdateType === followType).map((l) => [l.FromUnitID, l]));
  const units = unitsList.filter((u) => u.ToolchainType !== 'ConfigHub/YAML');
  if (units.length && units.every((u) => marks.end.has(u.UnitID))) {
    // Every Unit took the change (a repair, or a run that stopped after its writes): record that the Space did.
    res.Units = units.map((u) => ({ UnitID: u.UnitID, UnitSlug: u.Slug, SpaceID: space.SpaceID, Action: 'Unchanged', Reason: 'AlreadyTaken' }));
    if (!ctx.dryRun) await recordTaken(deps, co, space, now);
    return res;
  }
  const markOnly: StoreOp[] = [];
  // 1. Clone what the change carries that this Space lacks, at the start revision; the replay below brings it up.
  const work: { unit: Unit; link?: Link; fresh?: boolean }[] = units.map((u) => ({ unit: u, link: linkOf.get(u.UnitID) }));
  if (co.UpdateType === 'UpgradeUnit' && space.UpstreamSpaceID) {
    const have = new Set(units.map((u) => u.UpstreamUnitID));
    ctx.upstreamLists ??= new Map();
    let listing = ctx.upstreamLists.get(space.UpstreamSpaceID);
    if (!listing) ctx.upstreamLists.set(space.UpstreamSpaceID, (listing = deps.store.listUnits(space.UpstreamSpaceID)));
    const upstream = await listing;
    for (const u of upstream) if (!ctx.upstreamUnits.has(u.UnitID)) ctx.upstreamUnits.set(u.UnitID, u);
    for (const up of upstream.filter((x) => !have.has(x.UnitID) && x.ToolchainType !== 'ConfigHub/YAML')) {
      const s = marks.start.get(up.UnitID);
      const e = marks.end.get(up.UnitID);
      if (!s || !e) {
        res.Units.push({ UnitID: up.UnitID, UnitSlug: up.Slug, SpaceID: space.SpaceID, Action: 'Unchanged', Reason: 'CreatedAfterChangeOrder' });
        continue;
      }
      if (s.RevisionNum === e.RevisionNum && ctx.prior !== 'All') {
        res.Units.push({ UnitID: up.UnitID, UnitSlug: up.Slug, SpaceID: space.SpaceID, Action: 'Unchanged', Reason: 'NotCovered' });
        continue;
      }
      if (s.RevisionNum === 0) continue;
      const clone = await cloneOps(deps, caller, space, up, { revision: s.RevisionNum, namespace: space.Labels.Namespace, targetId: space.ReleaseTargetID });
      if (!ctx.dryRun) await deps.store.transact(clone.ops);
      res.Units.push({ UnitID: clone.unit.UnitID, UnitSlug: clone.unit.Slug, SpaceID: space.SpaceID, Action: 'Clone', RevisionNums: [clone.unit.HeadRevisionNum] });
      work.push({ unit: { ...clone.unit, Version: 1 }, link: clone.link, fresh: true });
    }
  }
  // 2. and 3. Upgrade each Unit behind over the ChangeOrder's range, marking start and end with its write.
  for (const { unit, link, fresh } of work) {
    const r = await promoteUnit(deps, caller, ctx, space, unit, link, !!fresh, now);
    if (r.marks) markOnly.push(...r.marks);
    res.Units.push(r.result);
  }
  const failed = res.Units.filter((u) => u.Error);
  if (failed.length) {
    res.Action = 'Failed';
    res.Error = failed.map((u) => `${u.UnitSlug}: ${u.Error!.Message}`).join('; ');
    return res;
  }
  if (ctx.dryRun) return res;
  // 4. Mark every other Unit, then record that this Space took the change.
  for (let i = 0; i < markOnly.length; i += 90) await deps.store.transact(markOnly.slice(i, i + 90));
  await recordTaken(deps, co, space, now);
  return res;
}

/** Records that a Space took the ChangeOrder (once; a rerun finds it there). */
async function recordTaken(deps: Deps, co: ChangeOrder, space: Space, now: string): Promise<void> {
  try {
    await deps.store.transact([{ op: 'create', kind: 'Progress', item: { ChangeOrderID: co.ChangeOrderID, SpaceID: space.SpaceID, ResolvedAt: now, Version: 1 } }]);
  } catch (e) {
    if (!(e instanceof Conflict)) throw e;
  }
}

/** One Unit's part of a promotion (also `cub unit update --upgrade --change-order`): merge the range with its marks, or say why not. */
export async function promoteUnit(
  deps: Deps,
  caller: Caller,
  ctx: PromoteContext,
  space: Space,
  unit: Unit,
  link: Link | undefined,
  fresh: boolean,
  now: string,
): Promise<{ result: UnitResult & { Reason?: string }; marks?: StoreOp[] }> {
  const { co, marks } = ctx;
  const r: UnitResult & { Reason?: string } = { UnitID: unit.UnitID, UnitSlug: unit.Slug, SpaceID: space.SpaceID, Action: 'Unchanged' };
  try {
    if (marks.end.has(unit.UnitID)) {
      r.Reason = 'AlreadyTaken';
      return { result: r };
    }
    const s = link ? marks.start.get(link.ToUnitID) : undefined;
    const e = link ? marks.end.get(link.ToUnitID) : undefined;
    if (!link || !s || !e) {
      // A Unit the change does not cover: made here, or upstream after the ChangeOrder. Both marks on its head.
      r.Action = 'Mark';
      r.Reason = link ? 'NotCovered' : 'CreatedInSpace';
      return { result: r, marks: (['start', 'end', 'publish'] as const).map((role) => markOp(co, role, unit, unit.HeadRevisionNum, now)) };
    }
    let source = ctx.upstreamUnits.get(link.ToUnitID);
    if (!source) {
      source = await deps.store.getUnit(link.ToSpaceID, link.ToUnitID);
      if (source) ctx.upstreamUnits.set(source.UnitID, source);
    }
    if (!source) throw new NotFound(`upstream unit of '${unit.Slug}' no longer exists`);
    let current = unit;
    let cursorLink = link;
    const start = s.RevisionNum;
    const end = e.RevisionNum;
    const cursor = fresh ? start : link.UpstreamLastMergedRevisionNum;
    if (cursor > start) {
      throw new Conflict(`unit '${unit.Slug}' has already merged past the change order's start (revision ${start} of '${source.Slug}'): it took revisions ${start + 1}..${cursor}`);
    }
    if (cursor < start) {
      if (ctx.prior === 'Error') {
        const descs = await Promise.all(Array.from({ length: start - cursor }, (_, i) => ctx.read(source!, cursor + 1 + i)));
        throw new Conflict(
          `unit '${unit.Slug}' has revisions before the change order's start not yet merged through link '${link.Slug}': ${descs.map((d, i) => `revision ${cursor + 1 + i} of '${source!.Slug}' (${d.description || 'no description'})`).join(', ')}`,
        );
      }
      if (ctx.prior === 'Include' || ctx.prior === 'All') {
        const pre = await mergeInto(deps, caller, space, current, { source, base: cursor, end: start, link, dryRun: ctx.dryRun, readUpstream: ctx.read });
        r.RevisionNums = pre.RevisionNums;
        r.Changes = pre.Changes;
        if (!ctx.dryRun) {
          current = (await deps.store.getUnit(space.SpaceID, unit.UnitID))!;
          cursorLink = (await deps.store.getInSpace<Link>('Link', space.SpaceID, link.LinkID))!;
        }
      }
    }
    const merged = await mergeInto(deps, caller, space, current, {
      source,
      base: start,
      end,
      link: cursorLink,
      dryRun: ctx.dryRun,
      readUpstream: ctx.read,
      marks: (before, after) => [markOp(co, 'start', current, before, now), markOp(co, 'end', current, after, now), markOp(co, 'publish', current, after, now)],
    });
    r.Action = merged.RevisionNums!.length ? 'Upgrade' : 'Mark';
    if (!merged.RevisionNums!.length) r.Reason = 'AlreadyTaken';
    r.RevisionNums = [...(r.RevisionNums ?? []), ...merged.RevisionNums!];
    r.Changes = [...(r.Changes ?? []), ...merged.Changes!];
    r.Conflicts = merged.Conflicts;
  } catch (err) {
    if (!(err instanceof BatonError)) throw err;
    r.Action = 'Failed';
    r.Error = { Code: err.code, Message: err.message };
  }
  return { result: r };
}

/** Upgrades one Unit with a ChangeOrder's range: a repair, not a promotion, so it is not gated and clones nothing. */
export async function upgradeUnitWithChangeOrder(deps: Deps, caller: Caller, co: ChangeOrder, space: Space, unit: Unit, o: { dryRun?: boolean; priorRevisions?: PriorRevisions }): Promise<UnitResult & { Reason?: string }> {
  if (co.AbortedReason) throw new Conflict(`change order '${co.Slug}' was aborted (${co.AbortedReason})`);
  const link = (await deps.store.listInSpace<Link>('Link', space.SpaceID)).find((l) => l.FromUnitID === unit.UnitID && l.UpdateType === co.UpdateType);
  if (!link) throw new Invalid(`unit '${unit.Slug}' has no ${co.UpdateType} link for change order '${co.Slug}' to follow`);
  const ctx: PromoteContext = { co, marks: await marksOf(deps, co), prior: o.priorRevisions ?? co.PriorRevisions, dryRun: !!o.dryRun, read: cachedReader(deps), upstreamUnits: new Map() };
  if (!ctx.marks.end.has(link.ToUnitID)) throw new Conflict(`the upstream of unit '${unit.Slug}' has not taken change order '${co.Slug}'`);
  const { result, marks } = await promoteUnit(deps, caller, ctx, space, unit, link, false, deps.now().toISOString());
  if (result.Error) throw new Conflict(result.Error.Message);
  if (marks?.length && !o.dryRun) await deps.store.transact(marks);
  return result;
}

/** Orders target Spaces so each comes after the target Spaces its MergeUnits Links merge from (a cycle lands in one last wave). */
async function mergeWaves(deps: Deps, targets: Space[]): Promise<Space[][]> {
  const ids = new Set(targets.map((t) => t.SpaceID));
  const after = new Map(
    await Promise.all(
      targets.map(async (t) => [t.SpaceID, new Set((await deps.store.listInSpace<Link>('Link', t.SpaceID)).filter((l) => l.UpdateType === 'MergeUnits' && ids.has(l.ToSpaceID) && l.ToSpaceID !== t.SpaceID).map((l) => l.ToSpaceID))] as const),
    ),
  );
  const waves: Space[][] = [];
  let left = targets;
  const done = new Set<string>();
  while (left.length) {
    const ready = left.filter((t) => [...after.get(t.SpaceID)!].every((d) => done.has(d)));
    const wave = ready.length ? ready : left;
    waves.push(wave);
    for (const t of wave) done.add(t.SpaceID);
    left = left.filter((t) => !done.has(t.SpaceID));
  }
  return waves;
}

/** What one promotion did. */
export interface PromoteResult {
  ChangeOrderID: string;
  Stage?: string;
  DryRun: boolean;
  Forced: boolean;
  Gates: GateResult[];
  Spaces: SpaceResult[];
  Landed: number;
  Total: number;
  Message?: string;
}

/** Options of a promotion with a ChangeOrder. */
export interface PromoteOptions {
  targetStage?: string;
  spaces?: string[];
  whereSpace?: string;
  dryRun?: boolean;
  priorRevisions?: PriorRevisions;
  force?: boolean;
  forceReason?: string;
}

/**
 * Promotes a ChangeOrder into a Stage (the next by default) or into named Spaces. The Stage's gates are
 * evaluated once, over every Space of the Stage before (the base for the first), before anything is
 * written; naming a later Stage does not skip an earlier one that has not taken the change.
 */
export async function promoteChangeOrder(deps: Deps, caller: Caller, co: ChangeOrder, base: Space, o: PromoteOptions): Promise<{ status: number; body: PromoteResult }> {
  if (co.AbortedReason) throw new Conflict(`change order '${co.Slug}' was aborted (${co.AbortedReason}); promote a new one`);
  if (o.force && !o.forceReason) throw new Invalid('--force needs --force-reason, which the change order records');
  const [marks, progressList] = await Promise.all([marksOf(deps, co), deps.store.progressOf(co.ChangeOrderID)]);
  const progress = new Map(progressList.map((p) => [p.SpaceID, p]));
  const stages = await stagesOf(deps, caller, co);
  let targets: Space[];
  let stageIndex: number;
  if (o.spaces?.length || o.whereSpace) {
    const named: Space[] = [];
    for (const ref of o.spaces ?? []) named.push(await findSpace(deps, caller, ref));
    if (o.whereSpace) {
      const q = parseWhere(o.whereSpace, 'Space');
      named.push(...(await orgSpaces(deps, caller, [q])).filter((s) => co.InScopeSpaceIDs.includes(s.SpaceID) && matches(q, s)));
    }
    for (const s of named) if (!co.InScopeSpaceIDs.includes(s.SpaceID)) throw new Invalid(`space '${s.Slug}' is not in the scope of change order '${co.Slug}'`);
    targets = [...new Map(named.map((s) => [s.SpaceID, s])).values()];
    stageIndex = stages.length ? Math.max(...targets.map((t) => stages.findIndex((st) => st.spaces.some((s) => s.SpaceID === t.SpaceID)))) : -1;
  } else if (!stages.length) {
    throw new Invalid(`change order '${co.Slug}' has no workflow: name the spaces to promote`);
  } else {
    stageIndex = o.targetStage ? stages.findIndex((s) => s.name === o.targetStage) : stages.findIndex((s) => s.spaces.some((x) => !progress.has(x.SpaceID)));
    if (o.targetStage && stageIndex < 0) throw new Invalid(`the workflow of change order '${co.Slug}' has no stage '${o.targetStage}'; stages: ${stages.map((s) => s.name).join(', ')}`);
    if (stageIndex < 0) {
      return { status: 200, body: { ChangeOrderID: co.ChangeOrderID, DryRun: !!o.dryRun, Forced: false, Gates: [], Spaces: [], Landed: 0, Total: 0, Message: `change order '${co.Slug}' has reached every stage` } };
    }
    targets = stages[stageIndex]!.spaces;
  }
  const stageName = stageIndex >= 0 ? stages[stageIndex]?.name : undefined;
  // Gates: every earlier Stage must have taken the change; the target Stage's prerequisites hold over the Stage before.
  const view = gateView(co);
  const gates: GateResult[] = [];
  if (stageIndex >= 0) {
    const earlier = stages.slice(0, stageIndex).flatMap((s) => s.spaces);
    const before = stageIndex === 0 ? [base] : stages[stageIndex - 1]!.spaces;
    const earlierOnly = earlier.filter((s) => !before.some((b) => b.SpaceID === s.SpaceID));
    const prereqs = stages[stageIndex]!.prerequisites;
    // "Taken" needs only progress; Releases, Units and revisions are read only for the prerequisites that use them.
    const light = (s: Space): SpaceGateState => ({ space: s, taken: progress.has(s.SpaceID), published: [], carries: () => false, changed: [] });
    const states = [...earlierOnly.map(light), ...(await Promise.all(before.map((s) => (prereqs.length ? gateState(deps, co, marks, progress, s) : light(s)))))];
    gates.push(...states.slice(0, earlierOnly.length).map((s) => evaluateGates([], view, [s])).flat());
    const beforeStates = states.slice(earlierOnly.length);
    if (stageIndex === 0) gates.push(...beforeStates.flatMap((s) => prereqs.map((p) => evaluatePrerequisite(p, view, s))));
    else gates.push(...evaluateGates(prereqs, view, beforeStates));
  }
  const failedGates = gates.filter((g) => !g.Satisfied);
  const spaceNames = new Map([...stages.flatMap((s) => s.spaces), base].map((s) => [s.SpaceID, s]));
  const result: PromoteResult = { ChangeOrderID: co.ChangeOrderID, Stage: stageName, DryRun: !!o.dryRun, Forced: false, Gates: gates, Spaces: [], Landed: 0, Total: targets.length };
  if (failedGates.length && !o.force) {
    result.Message = refusal(stageName ?? targets.map((t) => t.Slug).join(', '), failedGates, spaceNames);
    result.Spaces = targets.map((t) => ({ SpaceID: t.SpaceID, SpaceSlug: t.Slug, Action: 'Blocked', Units: [] }));
    return { status: 409, body: result };
  }
  result.Forced = failedGates.length > 0;
  const ctx: PromoteContext = { co, marks, prior: o.priorRevisions ?? co.PriorRevisions, dryRun: !!o.dryRun, read: cachedReader(deps), upstreamUnits: new Map() };
  const promoteOne = async (space: Space): Promise<SpaceResult> => {
    if (progress.has(space.SpaceID)) return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: 'Unchanged', Units: [] } as SpaceResult;
    if (co.UpdateType === 'UpgradeUnit' && space.UpstreamSpaceID && space.UpstreamSpaceID !== base.SpaceID && !progress.has(space.UpstreamSpaceID)) {
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: 'Blocked', Error: `its upstream space has not taken change order '${co.Slug}'`, Units: [] } as SpaceResult;
    }
    try {
      return await promoteSpace(deps, caller, ctx, space);
    } catch (e) {
      if (!(e instanceof BatonError)) throw e;
      return { SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: 'Failed', Error: e.message, Units: [] } as SpaceResult;
    }
  };
  // Spaces of a wave are independent; MergeUnits waves put a Space after any target Space it merges from.
  const waves = co.UpdateType === 'MergeUnits' ? await mergeWaves(deps, targets) : [targets];
  for (const [i, wave] of waves.entries()) {
    // A later wave merges from Units the earlier one just marked: read the marks again.
    if (i > 0 && !o.dryRun) ctx.marks = await marksOf(deps, co);
    result.Spaces.push(...(await bounded(wave, PROMOTE_CONCURRENCY, promoteOne)));
  }
  result.Landed = result.Spaces.filter((s) => s.Action === 'Promote' || s.Action === 'Unchanged').length;
  const failures = result.Spaces.filter((s) => s.Action === 'Failed' || s.Action === 'Blocked');
  if (o.dryRun) return { status: failures.length ? 207 : 200, body: result };
  const now = deps.now().toISOString();
  const promoted = result.Spaces.filter((s) => s.Action === 'Promote').map((s) => s.SpaceID);
  await recordOn(deps, co, (c) => ({
    Promotions: promoted.length ? [...c.Promotions, { PromotedAt: now, SpaceIDs: promoted, Stage: stageName, UserID: caller.UserID }] : c.Promotions,
    PromotionOverrides: result.Forced ? [...c.PromotionOverrides, { FailedGates: failedGates, OverriddenAt: now, Reason: o.forceReason!, SpaceIDs: targets.map((t) => t.SpaceID), Stage: stageName, UserID: caller.UserID }] : c.PromotionOverrides,
    PromotionFailures: failures.length
      ? [
          ...c.PromotionFailures,
          {
            FailedAt: now,
            UserID: caller.UserID,
            Stage: stageName,
            Spaces: failures.map((f) => ({ SpaceID: f.SpaceID, SpaceSlug: f.SpaceSlug, Action: f.Action, Error: f.Error, Units: f.Units.filter((u) => u.Error).map((u) => ({ UnitID: u.UnitID, UnitSlug: u.UnitSlug, Error: u.Error!.Message })) })),
          },
        ]
      : c.PromotionFailures,
  }));
  if (failures.length) {
    await deps.bus.put([
      { source: SOURCE, detailType: DetailType.PromotionFailed, detail: { OrganizationID: co.OrganizationID, ChangeOrderID: co.ChangeOrderID, Slug: co.Slug, Stage: stageName, SpaceIDs: failures.map((f) => f.SpaceID) } },
    ]);
  }
  await advanceStage(deps, caller, co);
  if (failures.length) result.Message = `${result.Landed} of ${result.Total} space(s) took change order '${co.Slug}'; ${failures.map((f) => `'${f.SpaceSlug}': ${f.Error}`).join('; ')}`;
  return { status: failures.length ? 207 : 200, body: result };
}

/**
 * After a Release is published in a Space: each ChangeOrder the Space took and had not released yet
 * is released there when this Release carries it; then its Stage may advance.
 */
export async function recordRelease(deps: Deps, caller: Caller, space: Space, release: Release): Promise<void> {
  const cos = (await deps.store.changeOrdersOf(caller.OrganizationID)).filter((c) => c.InScopeSpaceIDs.includes(space.SpaceID) || c.SpaceID === space.SpaceID);
  for (const co of cos) {
    const progress = (await deps.store.progressOf(co.ChangeOrderID)).find((p) => p.SpaceID === space.SpaceID);
    if (!progress || progress.ReleaseID) continue;
    const marks = await marksOf(deps, co);
    const state = await gateState(deps, co, marks, new Map([[space.SpaceID, progress]]), space);
    if (!state.carries(release)) continue;
    const next: Progress = { ...progress, ReleaseID: release.ReleaseID, ReleaseNum: release.ReleaseNum, ReleasedAt: release.PublishedAt, Version: progress.Version + 1 };
    try {
      await deps.store.transact([{ op: 'update', kind: 'Progress', item: next, expectedVersion: progress.Version }]);
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
    }
    await advanceStage(deps, caller, co);
  }
}

/** After a live-status change: the Stages of the ChangeOrders that Space took may advance (to Completed, say). */
export async function reevaluateFor(deps: Deps, caller: Caller, spaceId: string): Promise<void> {
  const cos = (await deps.store.changeOrdersOf(caller.OrganizationID)).filter((c) => c.InScopeSpaceIDs.includes(spaceId) && !c.AbortedReason && c.Stage !== 'Completed');
  for (const co of cos) await advanceStage(deps, caller, co);
}

/** A Stage's release gates for a Release of the ChangeOrder in one of its Spaces: a refusal message, or none. */
export async function releaseGateRefusal(deps: Deps, caller: Caller, co: ChangeOrder, space: Space): Promise<string | undefined> {
  const stages = await stagesOf(deps, caller, co);
  const stage = stages.find((s) => s.spaces.some((x) => x.SpaceID === space.SpaceID));
  if (!stage?.release.length) return undefined;
  const progress = new Map((await deps.store.progressOf(co.ChangeOrderID)).map((p) => [p.SpaceID, p]));
  const state = await gateState(deps, co, await marksOf(deps, co), progress, space);
  const failed = stage.release.map((p) => evaluatePrerequisite(p, gateView(co), state)).filter((g) => !g.Satisfied);
  return failed.length ? `unable to publish a release of change order '${co.Slug}' in stage '${stage.name}': ${failed.map((g) => g.Message).join('; ')}` : undefined;
}

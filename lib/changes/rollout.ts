import {
  COMPLETED,
  type Caller,
  type ChangeOrder,
  type DeployWindow,
  type GateResult,
  type Progress,
  type Space,
} from '../model/entities.ts';
import type { Rollout, RolloutSpace, RolloutStage } from '../model/rollout.ts';
import { evaluatePrerequisite } from '../gates/prerequisites.ts';
import { holdsOn } from '../gates/holds.ts';
import { newestPublished } from '../releases/bundle.ts';
import { bounded } from '../util/concurrency.ts';
import { marksOf } from './marks.ts';
import { viewHolds } from './holds.ts';
import { viewWindows, windowsOver } from './windows.ts';
import {
  gateContext,
  gateState,
  peopleOnce,
  readsAttestations,
  readsChanged,
  stateKey,
  type Known,
  type People,
} from './stages.ts';
import { reachedStage } from './state.ts';
import { derive } from './progress.ts';
import { explainPromotion } from './promote/explain.ts';
import { computeStage } from './reevaluate.ts';
import type { ChangeDeps } from './ports.ts';

/** How many Spaces' state the rollout reads at once. */
const ROLLOUT_CONCURRENCY = 16;

/** The attestation requirements among a Space's gates, summed up: who counted on every changed Unit, and how many more are needed. */
export function approvalsOf(co: ChangeOrder, gates: GateResult[]): RolloutSpace['Approvals'] {
  const reqs = new Map((co.ChangeWorkflow?.AttestationPrerequisites ?? []).map((a) => [a.Name, a]));
  return gates
    .filter((g) => reqs.has(g.Prerequisite))
    .map((g) => {
      const ev = (g.Evidence ?? {}) as { Type?: string; Count?: number; Units?: { Counted: string[] }[] };
      // One person counts once, however many of their approvals a Unit has.
      const units = (ev.Units ?? []).map((u) => ({ Counted: [...new Set(u.Counted)] }));
      const count = ev.Count ?? reqs.get(g.Prerequisite)!.Count ?? 1;
      // A person counts for the Space when they count for every Unit the change wrote there.
      const counted = units.length ? units.map((u) => u.Counted).reduce((a, b) => a.filter((x) => b.includes(x))) : [];
      const have = units.length ? Math.min(...units.map((u) => u.Counted.length)) : count;
      return {
        Name: g.Prerequisite,
        Type: ev.Type ?? 'Approval',
        Count: count,
        Counted: counted,
        Missing: Math.max(0, count - have),
      };
    });
}

/** One Space's cell: progress, latest Release and live status, the gates it must meet before the change goes on, failures and overrides. */
async function spaceCell(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  known: Known,
  space: Space,
  guards: string[],
  people: () => Promise<People>,
): Promise<RolloutSpace> {
  const ctx = known.context;
  const progress: Progress | undefined = ctx.progress.get(space.SpaceID);
  const taken = !!progress;
  let gates: GateResult[] = [];
  let latest: RolloutSpace['Release'];
  if (taken) {
    const read = {
      attest: readsAttestations(co, guards) ? caller : undefined,
      changed: readsChanged(co, guards),
      people,
    };
    // Kept for the next promotion's explanation, whose gates over this Stage read the same.
    const pending = gateState(deps, co, known.marks, ctx.progress, space, read);
    known.states.set(stateKey(space.SpaceID, read), pending);
    const state = await pending;
    gates = guards.map((p) => evaluatePrerequisite(p, ctx.view, { ...state, explain: true }));
    const r = state.published[0];
    if (r)
      latest = {
        ReleaseNum: r.ReleaseNum,
        Digest: r.Digest,
        PublishedAt: r.PublishedAt,
        CarriesChange: state.carries(r),
        LiveStatus: r.LiveStatus ?? {},
      };
  } else if (space.ReleaseTargetID) {
    // Not taken: no Release of it carries the change.
    const [r] = await newestPublished(deps, space, (read) => read.length > 0);
    if (r)
      latest = {
        ReleaseNum: r.ReleaseNum,
        Digest: r.Digest,
        PublishedAt: r.PublishedAt,
        CarriesChange: false,
        LiveStatus: r.LiveStatus ?? {},
      };
  }
  const failure = co.PromotionFailures.flatMap((f) =>
    f.Spaces.filter((s) => s.SpaceID === space.SpaceID).map((s) => ({
      FailedAt: f.FailedAt,
      Action: s.Action,
      ...(s.Error ? { Error: s.Error } : {}),
      Units: s.Units.map((u) => ({ UnitSlug: u.UnitSlug, Error: u.Error })),
    })),
  ).at(-1);
  const halted = (co.PromotionHalts ?? []).at(-1)?.NotStartedSpaceIDs.includes(space.SpaceID);
  return {
    SpaceID: space.SpaceID,
    SpaceSlug: space.Slug,
    Taken: taken,
    ...(progress ? { TakenAt: progress.ResolvedAt } : {}),
    ...(progress?.RestoredAt ? { RestoredAt: progress.RestoredAt } : {}),
    HasTarget: !!space.ReleaseTargetID,
    ...(latest ? { Release: latest } : {}),
    Gates: gates,
    Approvals: approvalsOf(co, gates),
    // A failure is shown until the Space takes the change.
    ...(failure && !taken ? { Failure: failure } : {}),
    Overrides: co.PromotionOverrides.filter((o) => o.SpaceIDs.includes(space.SpaceID)).map((o) => ({
      OverriddenAt: o.OverriddenAt,
      Reason: o.Reason,
      UserID: o.UserID,
      Gates: [...new Set(o.FailedGates.map((g) => g.Prerequisite))],
    })),
    ...(halted && !taken ? { NotStarted: true } : {}),
  };
}

/**
 * Where a ChangeOrder has got to, Space by Space and Stage by Stage, with what each Space must meet
 * before the change goes on, the next promotion explained, holds in force and a running job. Reads only.
 */
export async function rolloutOf(deps: ChangeDeps, caller: Caller, co: ChangeOrder, base: Space): Promise<Rollout> {
  const now = deps.now();
  // The organization's Spaces and the progress are read once: the cells, Completed and the view share them.
  const [ctx, marks, holds, windows] = await Promise.all([
    gateContext(deps, caller, co),
    marksOf(deps, co),
    deps.store.listHolds(caller.OrganizationID, { inForceAt: now }),
    deps.store.listWindows(caller.OrganizationID),
  ]);
  const view = await derive(deps, caller, co, { context: ctx });
  const wf = co.ChangeWorkflow;
  const known: Known = { marks, context: ctx, states: new Map() };
  // Who may attest is read once for every Space whose gates count approvals.
  const people = peopleOnce(deps, caller);
  const cells: { st: (typeof ctx.stages)[number]; guards: string[]; spaces: RolloutSpace[] }[] = [];
  for (const [i, st] of ctx.stages.entries()) {
    const guards = i + 1 < ctx.stages.length ? ctx.stages[i + 1]!.prerequisites : (wf?.Final?.Prerequisites ?? []);
    cells.push({
      st,
      guards,
      spaces: await bounded(st.spaces, ROLLOUT_CONCURRENCY, (s) =>
        spaceCell(deps, caller, co, known, s, guards, people),
      ),
    });
  }
  // Completed as `changeorder get` derives it, from the last Stage's states the cells read.
  if (wf && co.Stage !== COMPLETED)
    view.Completed = (await computeStage(deps, caller, co, undefined, known)).stage === COMPLETED;
  const finished = view.Completed;
  // The explanation reuses what the cells read: the marks, the context, the states over the Stage before.
  const explained =
    co.AbortedReason || finished || !wf ? undefined : await explainPromotion(deps, caller, co, base, {}, known);
  // Every Stage reached (Final still to hold): no next promotion to explain.
  const next = explained?.Targets.length ? explained : undefined;
  const reached = reachedStage(ctx.stages, (id) => ctx.progress.has(id));
  const stages: RolloutStage[] = cells.map(({ st, guards, spaces }, i) => {
    const taken = spaces.filter((s) => s.Taken).length;
    const status =
      st.spaces.length && i <= reached ? 'Reached' : taken ? 'Partial' : next?.Stage === st.name ? 'Next' : 'Waiting';
    return { Name: st.name, Prerequisites: st.prerequisites, Status: status, Guards: guards, Spaces: spaces };
  });
  const scope = [...co.InScopeSpaceIDs, co.SpaceID];
  const found = new Map(
    [
      ...holdsOn(
        holds,
        { action: 'promote', spaceIds: scope, changeWorkflowId: co.ChangeWorkflowID, changeOrderId: co.ChangeOrderID },
        now,
      ),
      ...holdsOn(
        holds,
        { action: 'publish', spaceIds: scope, changeWorkflowId: co.ChangeWorkflowID, changeOrderId: co.ChangeOrderID },
        now,
      ),
    ].map((h) => [h.HoldID, h]),
  );
  // The windows over the Spaces of each Stage (a Stage's window over that Stage's), each with the Spaces it covers.
  const stageOf = new Map(ctx.stages.flatMap((st) => st.spaces.map((s) => [s.SpaceID, st.name] as const)));
  const covering = new Map<string, { w: DeployWindow; spaces: string[] }>();
  for (const { space, windows: ws } of await windowsOver(deps, caller, windows, {
    spaces: ctx.stages.flatMap((st) => st.spaces),
    changeWorkflowId: co.ChangeWorkflowID,
    stageOf: (s) => stageOf.get(s.SpaceID),
  }))
    for (const w of ws) {
      const entry = covering.get(w.WindowID) ?? { w, spaces: [] };
      entry.spaces.push(space.Slug);
      covering.set(w.WindowID, entry);
    }
  const shown = [...covering.values()].sort((a, b) => (a.w.Slug < b.w.Slug ? -1 : 1));
  const windowViews = await viewWindows(
    deps,
    caller,
    shown.map((c) => c.w),
  );
  const lease =
    co.PromotionLease && Date.parse(co.PromotionLease.ExpiresAt) > now.getTime()
      ? await deps.store.getJob(co.PromotionLease.LeaseID)
      : undefined;
  return {
    ChangeOrder: { ...view, SpaceSlug: base.Slug },
    Base: { SpaceID: base.SpaceID, SpaceSlug: base.Slug },
    Stages: stages,
    ...(next ? { Next: next } : {}),
    Holds: await viewHolds(
      deps,
      caller,
      [...found.values()].sort((a, b) => (a.Slug < b.Slug ? -1 : 1)),
    ),
    Windows: windowViews.map((w, i) => ({ ...w, CoveredSpaces: shown[i]!.spaces })),
    ...(lease?.State === 'Running'
      ? { Job: { JobID: lease.JobID, Kind: lease.Kind, Done: lease.SpacesDone, Total: lease.Total } }
      : {}),
    ReadAt: now.toISOString(),
  };
}

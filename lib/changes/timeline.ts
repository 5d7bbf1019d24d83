/**
 * A ChangeOrder's timeline (`cub changeorder timeline`): per Stage, when it could start (the Stage before
 * reached), when its first Space took the change and when its last did, and how long of that wait each kind of
 * gate did not hold — from the records Baton already keeps: progress (taken, released), the change's Releases
 * and their live-status history (healthy, soaked), approvals (attestations), holds (placed, lifted, expired) and
 * the deploy windows' schedules. And an ETA for the last Stage from what is still open: soak remaining and the
 * next window opening, said as unknown where it waits on people or tools.
 */
import type { ChangeDeps } from './ports.ts';
import { gateContext } from './stages.ts';
import { soakDuration } from '../gates/prerequisites.ts';
import { blockingAt, nextClear, windowState } from '../gates/windows.ts';
import { holdCovers } from '../gates/holds.ts';
import { windowsOver } from './windows.ts';
import { bounded } from '../util/concurrency.ts';
import {
  BUILTIN_PREREQUISITES,
  type Attestation,
  type Caller,
  type ChangeOrder,
  type DeployWindow,
  type Progress,
  type Release,
  type Space,
  type Timeline,
  type TimelineStage,
  type WaitKind,
} from '../model/entities.ts';

const READS = 8;
const iso = (t: number) => new Date(t).toISOString();
const seconds = (ms: number) => Math.max(0, Math.round(ms / 1000));

/** When a Release was first Synced and Healthy at or after `from`, and when a run of that lasting `need` ms began; undefined when it has not been. Pure. */
export function healthyTimes(
  release: Release,
  from: number,
  need = 0,
  now = Date.now(),
): { healthy?: number; soaked?: number } {
  const history = [...(release.LiveStatusHistory ?? [])].sort(
    (a, b) => Date.parse(a.ObservedAt) - Date.parse(b.ObservedAt),
  );
  let healthy: number | undefined;
  let run: number | undefined;
  for (const h of history) {
    const t = Math.max(Date.parse(h.ObservedAt), from);
    const ok = h.Sync === 'Synced' && h.Health === 'Healthy';
    if (ok) {
      run ??= t;
      healthy ??= t;
    } else {
      if (run !== undefined && t - run >= need) return { healthy, soaked: run + need };
      run = undefined;
    }
  }
  if (run !== undefined && now - run >= need) return { healthy, soaked: run + need };
  return { healthy };
}

/** The length of [from, to) covered by the union of intervals. Pure. */
export function covered(intervals: [number, number][], from: number, to: number): number {
  const clipped = intervals
    .map(([a, b]) => [Math.max(a, from), Math.min(b, to)] as [number, number])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of clipped) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

/** The stretches of [from, to) the windows block, stepping from edge to edge (at most 500). Pure. */
export function blockedIntervals(ws: DeployWindow[], from: number, to: number): [number, number][] {
  const out: [number, number][] = [];
  let t = from;
  for (let i = 0; i < 500 && t < to; i++) {
    if (blockingAt(ws, t).length) {
      const clear = nextClear(ws, t) ?? to;
      out.push([t, Math.min(clear, to)]);
      t = clear;
    } else {
      const edges = ws.map((w) => windowState(w, t).changesAt).filter((c): c is number => c !== null && c > t);
      if (!edges.length) break;
      t = Math.min(...edges);
    }
  }
  return out;
}

/** The kind of wait a prerequisite is. */
function kindOf(co: ChangeOrder, p: string): WaitKind | undefined {
  if (p === BUILTIN_PREREQUISITES.Released) return 'Release';
  if (p === BUILTIN_PREREQUISITES.Healthy) return 'Health';
  if (soakDuration(p) !== undefined) return 'Soak';
  if (co.ChangeWorkflow?.AttestationPrerequisites?.some((a) => a.Name === p)) return 'Approvals';
  return undefined;
}

/** When a Space's approvals for the change met a requirement of `count` distinct Pass attestations of `type` (not revoked). */
function approvedAt(atts: Attestation[], co: ChangeOrder, type: string, count: number): number | undefined {
  const revoked = new Set(atts.map((a) => a.RevokedAttestationID).filter(Boolean));
  const users = new Map<string, number>();
  for (const a of atts)
    if (a.ChangeOrderID === co.ChangeOrderID && a.Type === type && a.Result === 'Pass' && !revoked.has(a.AttestationID))
      users.set(a.UserID, Math.min(users.get(a.UserID) ?? Infinity, Date.parse(a.CreatedAt)));
  const times = [...users.values()].sort((x, y) => x - y);
  return times.length >= count ? times[count - 1] : undefined;
}

export async function timelineOf(deps: ChangeDeps, caller: Caller, co: ChangeOrder): Promise<Timeline> {
  const now = deps.now().getTime();
  const [ctx, holds, windows] = await Promise.all([
    gateContext(deps, caller, co),
    deps.store.listHolds(caller.OrganizationID),
    deps.store.listWindows(caller.OrganizationID),
  ]);
  const taken = (s: Space) => ctx.progress.get(s.SpaceID);
  const stages = ctx.stages.filter((st) => st.spaces.length);
  const out: TimelineStage[] = [];
  const because: string[] = [];
  let ready = Date.parse(co.CreatedAt);
  let eta: number | null = now;
  let before: Space[] = stages.find((st) => st.spaces.some((s) => s.SpaceID === co.SpaceID))?.spaces ?? [];
  for (const st of stages) {
    const progress = st.spaces.map(taken).filter((p): p is Progress => !!p);
    const entered = progress.length ? Math.min(...progress.map((p) => Date.parse(p.ResolvedAt))) : undefined;
    const left =
      progress.length === st.spaces.length ? Math.max(...progress.map((p) => Date.parse(p.ResolvedAt))) : undefined;
    const end = entered ?? now;
    const waiting: TimelineStage['Waiting'] = {};
    const open = new Set<string>();
    const add = (k: WaitKind, ms: number) => {
      if (ms > 0) waiting[k] = (waiting[k] ?? 0) + seconds(ms);
    };
    // Release → Health → Soak over the Spaces of the Stage before, each from when the one before was satisfied.
    const kinds = new Set(st.prerequisites.map((p) => kindOf(co, p)));
    const soak = Math.max(0, ...st.prerequisites.map((p) => soakDuration(p) ?? 0));
    const prior = before.filter((s) => s.SpaceID !== co.SpaceID);
    let released = ready;
    let healthy = ready;
    let soaked = ready;
    let deployKnown = true;
    if (kinds.has('Release') || kinds.has('Health') || kinds.has('Soak')) {
      const rels = await bounded(prior, READS, async (s) => {
        const p = taken(s);
        return p?.ReleaseID ? deps.store.getInSpace<Release>('Release', s.SpaceID, p.ReleaseID) : undefined;
      });
      prior.forEach((s, i) => {
        const p = taken(s);
        const r = rels[i];
        const rel = p?.ReleasedAt ? Date.parse(p.ReleasedAt) : undefined;
        if (rel === undefined || !r) {
          deployKnown = false;
          released = healthy = soaked = Infinity;
          return;
        }
        released = Math.max(released, rel);
        const times = healthyTimes(r, rel, soak, now);
        healthy = Math.max(healthy, times.healthy ?? Infinity);
        soaked = Math.max(
          soaked,
          times.soaked ?? (times.healthy !== undefined ? Math.max(times.healthy + soak, now) : Infinity),
        );
        if (times.healthy === undefined) deployKnown = false;
      });
      add('Release', Math.min(released, end) - ready);
      if (kinds.has('Health') || kinds.has('Soak')) add('Health', Math.min(healthy, end) - Math.max(released, ready));
      if (kinds.has('Soak')) add('Soak', Math.min(soaked, end) - Math.max(healthy, ready));
      if (entered === undefined) {
        if (released > now) open.add('Release');
        else if (healthy > now) open.add('Health');
        else if (soaked > now) open.add('Soak');
      }
    }
    let approvalsKnown = true;
    const reqs = (co.ChangeWorkflow?.AttestationPrerequisites ?? []).filter((a) => st.prerequisites.includes(a.Name));
    if (reqs.length && prior.length) {
      const atts = await bounded(prior, READS, (s) => deps.store.listInSpace<Attestation>('Attestation', s.SpaceID));
      let at = ready;
      for (const a of reqs)
        for (const list of atts)
          at = Math.max(at, approvedAt(list, co, a.Type ?? 'Approval', a.Count ?? 1) ?? Infinity);
      add('Approvals', Math.min(at, end) - ready);
      if (at > now) {
        approvalsKnown = false;
        if (entered === undefined) open.add('Approvals');
      }
    }
    // Holds over its Spaces while it waited: placed until lifted or expired.
    const subject = {
      action: 'promote' as const,
      spaceIds: st.spaces.map((s) => s.SpaceID),
      changeWorkflowId: co.ChangeWorkflowID,
      changeOrderId: co.ChangeOrderID,
    };
    const over = holds.filter((h) => holdCovers(h, subject)).sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
    const held: [number, number][] = over.map((h) => [
      Date.parse(h.CreatedAt),
      Math.min(h.LiftedAt ? Date.parse(h.LiftedAt) : Infinity, h.ExpiresAt ? Date.parse(h.ExpiresAt) : Infinity),
    ]);
    add('Holds', covered(held, ready, end));
    const holdingNow = over.filter((h, i) => held[i]![0] <= now && now < held[i]![1]);
    if (entered === undefined && holdingNow.length) open.add('Holds');
    // The windows over its Spaces (today's windows: a deleted one is not on record).
    const spacesWindows = await windowsOver(deps, caller, windows, {
      spaces: st.spaces,
      changeWorkflowId: co.ChangeWorkflowID,
      stageOf: () => st.name,
    });
    const ws = [...new Map(spacesWindows.flatMap((c) => c.windows).map((w) => [w.WindowID, w])).values()];
    if (ws.length) add('Windows', covered(blockedIntervals(ws, ready, end), ready, end));
    const stage: TimelineStage = {
      Name: st.name,
      Spaces: st.spaces.map((s) => s.Slug),
      ReadyAt: iso(ready),
      ...(entered !== undefined ? { EnteredAt: iso(entered) } : {}),
      ...(left !== undefined ? { LeftAt: iso(left) } : {}),
      WaitedSeconds: seconds(end - ready),
      Waiting: waiting,
      ...(entered === undefined ? { Open: [...open] } : {}),
    };
    if (entered === undefined) {
      const windowsNow = ws.length ? blockingAt(ws, now).length : 0;
      if (windowsNow) stage.Open = [...(stage.Open ?? []), 'Windows'];
    }
    out.push(stage);
    // The ETA: the earliest the change can go into each Stage still to be left, as far as the clock says.
    if (left === undefined && eta !== null) {
      const reasons = [
        ...(holdingNow.length
          ? [`stage ${st.name} is held (${holdingNow.map((h) => h.Slug).join(', ')}): up to whoever lifts it`]
          : []),
        ...(approvalsKnown ? [] : [`stage ${st.name} waits on approvals: up to people`]),
        ...(deployKnown
          ? []
          : [
              `stage ${st.name} waits on a release of the stage before it and its deploy tool's report: up to a pipeline or a person`,
            ]),
      ];
      let at: number | null = Math.max(eta, Number.isFinite(soaked) ? soaked : eta);
      if (!reasons.length && ws.length) {
        at = nextClear(ws, at);
        if (at === null) reasons.push(`stage ${st.name}'s windows do not open again`);
      }
      if (reasons.length) {
        because.push(...reasons);
        eta = null;
      } else eta = at;
    }
    // The next Stage can start once this one is reached; after one that is not, it has no start yet.
    if (left === undefined) break;
    ready = left;
    before = st.spaces;
  }
  // The Stages after one still waiting: no times yet; the ETA carries on through them as far as the clock can.
  for (const st of stages.slice(out.length)) {
    out.push({ Name: st.name, Spaces: st.spaces.map((s) => s.Slug), Waiting: {}, Open: ['the stages before it'] });
    if (eta === null) continue;
    const people = st.prerequisites.filter((p) => kindOf(co, p));
    if (people.length) {
      because.push(
        `stage ${st.name} waits on ${people.join(', ')} of the stage before it: up to a pipeline, a deploy tool or people`,
      );
      eta = null;
      continue;
    }
    const ws = [
      ...new Map(
        (
          await windowsOver(deps, caller, windows, {
            spaces: st.spaces,
            changeWorkflowId: co.ChangeWorkflowID,
            stageOf: () => st.name,
          })
        )
          .flatMap((c) => c.windows)
          .map((w) => [w.WindowID, w]),
      ).values(),
    ];
    if (ws.length) {
      eta = nextClear(ws, eta);
      if (eta === null) because.push(`stage ${st.name}'s windows do not open again`);
    }
  }
  const last = out.at(-1);
  return {
    ChangeOrderID: co.ChangeOrderID,
    Slug: co.Slug,
    CreatedAt: co.CreatedAt,
    Stages: out,
    ETA: {
      ...(last ? { Stage: last.Name } : {}),
      At: last?.LeftAt ?? (eta === null ? null : iso(eta)),
      Because: last?.LeftAt
        ? ['reached']
        : eta === null
          ? because
          : ['the clock: soak and windows, if each promotion runs as soon as its gates open'],
    },
    ReadAt: iso(now),
  };
}

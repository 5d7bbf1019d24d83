/**
 * The delivery report (`cub report delivery`): the four DORA figures per workflow over the ChangeOrders made
 * in a period — deployment frequency (Spaces of the workflow's last Stage that took a change, per day), lead
 * time (p50/p90 from the change's first revision to each Stage reached), change failure rate (aborted or
 * recalled, of those that left the base) and time to restore (abort to the last Space restored) — from the
 * ChangeOrders, their progress and the base revisions their start marks follow. Reads only.
 */
import type { ChangeDeps } from './ports.ts';
import { marksOf } from './marks.ts';
import { stagesOver } from './stages.ts';
import { bounded } from '../util/concurrency.ts';
import { findInSpace } from '../variants/lookup.ts';
import {
  parseDuration,
  type Caller,
  type ChangeOrder,
  type ChangeWorkflow,
  type DeliveryReport,
  type Progress,
  type Space,
  type WorkflowDelivery,
} from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';

const READS = 8;
const MAX_SINCE_MS = 366 * 86_400_000;

/** The nearest-rank percentile of sorted values (undefined when there are none). Pure. */
export function percentile(sorted: number[], p: number): number | undefined {
  if (!sorted.length) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const secs = (ms: number) => Math.max(0, Math.round(ms / 1000));
const spread = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return { Count: s.length, P50Seconds: secs(percentile(s, 50) ?? 0), P90Seconds: secs(percentile(s, 90) ?? 0) };
};

/** When the change's first revision was made: the earliest base revision after a start mark; the ChangeOrder's creation when it changed no base Unit. */
async function firstRevisionAt(deps: ChangeDeps, co: ChangeOrder): Promise<number> {
  const marks = await marksOf(deps, co, { publish: false });
  const keys = [...marks.start.values()]
    .filter((m) => m.SpaceID === co.SpaceID && (marks.end.get(m.UnitID)?.RevisionNum ?? 0) > m.RevisionNum)
    .map((m) => ({ UnitID: m.UnitID, RevisionNum: m.RevisionNum + 1 }));
  const revs = keys.length ? await deps.store.revisionsAt(keys) : [];
  const times = revs.map((r) => Date.parse(r.CreatedAt)).filter((t) => !Number.isNaN(t));
  return times.length ? Math.min(...times) : Date.parse(co.CreatedAt);
}

/** `GET /report/delivery`: per workflow (or the one named), over the ChangeOrders made in the last `since`. */
export async function deliveryReport(
  deps: ChangeDeps,
  caller: Caller,
  o: { workflow?: string; since?: string },
): Promise<DeliveryReport> {
  const since = o.since ?? '30d';
  const ms = parseDuration(since);
  if (!ms || ms > MAX_SINCE_MS)
    throw new Invalid(`since '${since}' must be a duration from 1m to 366d, such as 30d or 12h`);
  const now = deps.now().getTime();
  const from = now - ms;
  const only = o.workflow
    ? (await findInSpace<ChangeWorkflow>(deps, caller, undefined, 'ChangeWorkflow', o.workflow)).item
    : undefined;
  const cos: ChangeOrder[] = [];
  let after: string | undefined;
  do {
    const page = await deps.store.changeOrderPage(caller.OrganizationID, 100, after);
    for (const { changeOrder: co } of page.items)
      if (Date.parse(co.CreatedAt) >= from && (!only || co.ChangeWorkflowID === only.ChangeWorkflowID)) cos.push(co);
    after = page.next;
  } while (after);
  const spaces = await deps.store.listSpaces(caller.OrganizationID);
  const slugs = new Map(spaces.map((s) => [s.SpaceID, s.Slug]));
  const facts = await bounded(cos, READS, async (co) => ({
    co,
    progress: await deps.store.progressOf(co.ChangeOrderID),
    first: await firstRevisionAt(deps, co),
  }));
  const groups = new Map<string, typeof facts>();
  for (const f of facts) {
    const key = f.co.ChangeWorkflowID ?? '';
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const workflows: WorkflowDelivery[] = [];
  for (const [key, list] of groups) {
    const co0 = list[0]!.co;
    const name = key
      ? `${slugs.get(co0.ChangeWorkflowSpaceID ?? '') ?? co0.ChangeWorkflowSpaceID ?? '?'}/${co0.ChangeWorkflowSlug ?? key}`
      : '(no workflow)';
    const lead = new Map<string, number[]>();
    const stageOrder: string[] = [];
    let deployments = 0;
    let left = 0;
    let failed = 0;
    const restore: number[] = [];
    for (const { co, progress, first } of list) {
      const byId = new Map<string, Progress>(progress.map((p) => [p.SpaceID, p]));
      const stages = stagesOver(co, spaces).filter((st) => st.spaces.length);
      for (const st of stages) if (!stageOrder.includes(st.name)) stageOrder.push(st.name);
      for (const st of stages) {
        const ps = st.spaces.map((s: Space) => byId.get(s.SpaceID));
        if (ps.every((p) => p))
          lead.set(st.name, [
            ...(lead.get(st.name) ?? []),
            Math.max(...ps.map((p) => Date.parse(p!.ResolvedAt))) - first,
          ]);
      }
      const last = stages.at(-1);
      if (last)
        deployments += last.spaces.filter((s) => {
          const p = byId.get(s.SpaceID);
          return p && Date.parse(p.ResolvedAt) >= from;
        }).length;
      const leftBase = progress.some((p) => p.SpaceID !== co.SpaceID);
      if (leftBase) left++;
      if (leftBase && (co.AbortedReason || co.Recall)) failed++;
      const restored = progress.filter((p) => p.RestoredAt).map((p) => Date.parse(p.RestoredAt!));
      if (
        co.AbortedAt &&
        restored.length &&
        restored.length === progress.filter((p) => p.SpaceID !== co.SpaceID).length
      )
        restore.push(Math.max(...restored) - Date.parse(co.AbortedAt));
    }
    const days = ms / 86_400_000;
    workflows.push({
      Workflow: name,
      ChangeOrders: list.length,
      Deployments: deployments,
      DeploymentsPerDay: Math.round((deployments / days) * 100) / 100,
      LeadTime: stageOrder.filter((s) => lead.has(s)).map((s) => ({ Stage: s, ...spread(lead.get(s)!) })),
      Failed: failed,
      ChangeFailureRate: left ? Math.round((failed / left) * 1000) / 1000 : null,
      TimeToRestore: restore.length ? spread(restore) : null,
    });
  }
  workflows.sort((a, b) => (a.Workflow < b.Workflow ? -1 : 1));
  return { Since: since, From: new Date(from).toISOString(), To: new Date(now).toISOString(), Workflows: workflows };
}

/**
 * Recall on failure, and taking a change back out of everywhere. A Stage may declare
 * `Recall: {Within: 30m, On: [Degraded, Failed], Demote: true}`: when a Space of it that took the change
 * reports, for the change's Release, a status in `On` within `Within` of taking it (a live-status change on
 * the bus: an Argo CD or Flux report, or `cub release report`), the ChangeOrder is frozen at once — a hold
 * named after it, owner `baton`, that no promotion of it passes without --force — and `ChangeOrder Recalled`
 * goes out with the evidence. With `Demote`, Baton also aborts it and demotes it from every Space that took
 * it, latest Stage first, as `cub variant demote` would, each Space's outcome recorded (`takeBack`, which
 * `cub changeorder demote` runs too).
 */
import type { ChangeDeps } from './ports.ts';
import {
  parseDuration,
  type Caller,
  type ChangeOrder,
  type DemotionRecord,
  type Hold,
  type Progress,
  type RecallOn,
  type RecallRecord,
  type ReleaseLiveStatus,
  type Space,
} from '../model/entities.ts';
import { Conflict, Invalid } from '../model/errors.ts';
import { DetailType, SOURCE, type BatonEvent } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { retryOnConflict } from '../util/retry.ts';
import { stagesOver } from './stages.ts';
import { demote } from './demote.ts';
import { updateChangeOrder } from './workflows.ts';

/** A live-status change of one Release in one Space, as the bus carries it. */
export interface LiveReport {
  SpaceID: string;
  ReleaseID: string;
  ReleaseNum: number;
  LiveStatus: ReleaseLiveStatus;
}

/** What in a report a recall's `On` matches: its Health, or Failed for a failed operation. Pure. */
export function recallMatch(on: RecallOn[], s: ReleaseLiveStatus): RecallOn | undefined {
  if (s.Health && s.Health !== 'Healthy' && s.Health !== 'Progressing' && on.includes(s.Health)) return s.Health;
  if (s.Operation === 'Failed' && on.includes('Failed')) return 'Failed';
  return undefined;
}

/** The command that takes a recalled change back out, as `changeorder explain` prints it. */
export const takeBackCommand = (base: string, co: ChangeOrder): string =>
  `cub changeorder demote --space ${base} ${co.Slug} --reason 'recalled: ${co.Recall?.SpaceSlug ?? ''} reported ${co.Recall?.Matched ?? ''}'`;

/**
 * After a Release's live status changed: recalls the ChangeOrder whose progress this is if the Space's Stage
 * recalls on what was reported, for the change's own Release, within its window. Once recalled, never again.
 */
export async function recallIfReported(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  progress: Progress,
  report: LiveReport,
): Promise<void> {
  if (co.Recall || co.AbortedReason || !co.ChangeWorkflow?.Stages.some((s) => s.Recall)) return;
  // The change's Release there, not an earlier one, and not after a demote.
  if (progress.ReleaseID !== report.ReleaseID || progress.RestoredAt) return;
  const spaces = await deps.store.listSpaces(caller.OrganizationID);
  const stage = stagesOver(co, spaces).find((st) => st.spaces.some((s) => s.SpaceID === report.SpaceID));
  const recall = stage ? co.ChangeWorkflow.Stages.find((s) => s.Name === stage.name)?.Recall : undefined;
  if (!stage || !recall) return;
  const matched = recallMatch(recall.On, report.LiveStatus);
  if (!matched) return;
  const within = parseDuration(recall.Within) ?? 0;
  const observed = Date.parse(report.LiveStatus.ObservedAt ?? '') || deps.now().getTime();
  if (observed - Date.parse(progress.ResolvedAt) > within) return;
  const space = spaces.find((s) => s.SpaceID === report.SpaceID)!;
  const base = spaces.find((s) => s.SpaceID === co.SpaceID);
  const now = deps.now().toISOString();
  const slug = (await deps.store.idInOrg(caller.OrganizationID, 'Hold', `recall-${co.Slug}`))
    ? `recall-${co.Slug}-${co.ChangeOrderID.slice(0, 8)}`
    : `recall-${co.Slug}`;
  const record: RecallRecord = {
    RecalledAt: now,
    Stage: stage.name,
    SpaceID: space.SpaceID,
    SpaceSlug: space.Slug,
    ReleaseID: report.ReleaseID,
    ReleaseNum: report.ReleaseNum,
    Report: { ...report.LiveStatus },
    Matched: matched,
    TakenAt: progress.ResolvedAt,
    Within: recall.Within,
    Hold: slug,
    Demote: !!recall.Demote,
  };
  const reason = `recalled: ${space.Slug} (stage ${stage.name}) reported ${matched} for release ${report.ReleaseNum} at ${report.LiveStatus.ObservedAt ?? now}, within ${recall.Within} of taking the change${recall.Demote ? '; Baton demotes it from every Space that took it' : `; take it back out: ${takeBackCommand(base?.Slug ?? co.SpaceID, { ...co, Recall: record })}`}`;
  const hold: Hold = {
    HoldID: deps.newId(),
    OrganizationID: co.OrganizationID,
    Slug: slug,
    Reason: reason,
    OwnerID: 'baton',
    Scope: 'ChangeOrder',
    SpaceID: co.SpaceID,
    ChangeOrderID: co.ChangeOrderID,
    Blocks: ['promote'],
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  const events: BatonEvent[] = [
    {
      source: SOURCE,
      detailType: DetailType.HoldPlaced,
      detail: {
        OrganizationID: hold.OrganizationID,
        HoldID: hold.HoldID,
        Slug: hold.Slug,
        Scope: hold.Scope,
        SpaceID: hold.SpaceID,
        ChangeOrderID: hold.ChangeOrderID,
        Blocks: hold.Blocks,
        Reason: hold.Reason,
        OwnerID: hold.OwnerID,
      },
    },
    {
      source: SOURCE,
      detailType: DetailType.ChangeOrderRecalled,
      detail: {
        OrganizationID: co.OrganizationID,
        ChangeOrderID: co.ChangeOrderID,
        Slug: co.Slug,
        SpaceID: co.SpaceID,
        Stage: record.Stage,
        RecalledSpaceID: record.SpaceID,
        RecalledSpaceSlug: record.SpaceSlug,
        ReleaseID: record.ReleaseID,
        ReleaseNum: record.ReleaseNum,
        Report: record.Report,
        Matched: record.Matched,
        TakenAt: record.TakenAt,
        RecalledAt: record.RecalledAt,
        Within: record.Within,
        Hold: record.Hold,
        Demote: record.Demote,
      },
    },
  ];
  // The hold and the record land together, guarded by the ChangeOrder's Version: of two reports racing, one recalls.
  await deps.store.transact([
    { op: 'create', kind: 'Hold', item: hold },
    {
      op: 'update',
      kind: 'ChangeOrder',
      item: { ...co, Recall: record, UpdatedAt: now, Version: co.Version + 1 },
      expectedVersion: co.Version,
    },
    ...eventOps(deps, events),
  ]);
  deps.telemetry?.count('Recalls');
  if (recall.Demote && base) {
    const fresh = await deps.store.getInSpace<ChangeOrder>('ChangeOrder', co.SpaceID, co.ChangeOrderID);
    if (fresh) await takeBack(deps, caller, base, fresh, `recalled: ${space.Slug} reported ${matched}`, true);
  }
}

/**
 * `cub changeorder demote` (and a recall's Demote): aborts the ChangeOrder if it is not aborted, then demotes
 * it from every Space that took it and has not been restored — the latest Stage first, and in a Stage the
 * last to take it first — as `cub variant demote` would. A Space that fails to restore is reported, the rest
 * go on; the ChangeOrder records every Space's outcome.
 */
export async function takeBack(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  co: ChangeOrder,
  reason: string,
  recall = false,
): Promise<DemotionRecord> {
  const started = deps.now().toISOString();
  if (!reason.trim()) throw new Invalid('give the reason the change order records (--reason)');
  let current = co;
  if (!co.AbortedReason) {
    await updateChangeOrder(deps, caller, base, co, { AbortedReason: reason, Version: co.Version });
    current = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', co.SpaceID, co.ChangeOrderID)) ?? co;
  }
  const progress = (await deps.store.progressOf(co.ChangeOrderID)).filter(
    (p) => p.SpaceID !== co.SpaceID && !p.RestoredAt,
  );
  if (!progress.length && !recall)
    throw new Conflict(
      `change order '${co.Slug}' is in no Space to take back out of (none took it, or all were restored)`,
    );
  const spaces = await deps.store.listSpaces(caller.OrganizationID);
  const byId = new Map(spaces.map((s) => [s.SpaceID, s]));
  const stageIndex = new Map(
    stagesOver(current, spaces).flatMap((st, i) => st.spaces.map((s) => [s.SpaceID, i] as const)),
  );
  // Reverse wave order: the latest Stage first; in a Stage, the last Space to take it first.
  const order = progress
    .filter((p) => byId.has(p.SpaceID))
    .sort(
      (a, b) =>
        (stageIndex.get(b.SpaceID) ?? -1) - (stageIndex.get(a.SpaceID) ?? -1) ||
        (a.ResolvedAt < b.ResolvedAt ? 1 : a.ResolvedAt > b.ResolvedAt ? -1 : 0),
    );
  const steps: DemotionRecord['Spaces'] = [];
  for (const p of order) {
    const space = byId.get(p.SpaceID)!;
    try {
      const fresh = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', co.SpaceID, co.ChangeOrderID)) ?? current;
      const r = await demote(deps, caller, fresh, space, { changeDesc: reason, async: false });
      if ('job' in r) throw new Error('the demote was started as a job');
      const failed = r.Units.filter((u) => u.Action === 'Failed');
      steps.push({
        SpaceID: space.SpaceID,
        SpaceSlug: space.Slug,
        Restored: r.Restored,
        ...(r.Error || failed.length
          ? { Error: r.Error ?? failed.map((u) => `${u.UnitSlug}: ${u.Error ?? 'failed'}`).join('; ') }
          : {}),
      });
    } catch (e) {
      steps.push({ SpaceID: space.SpaceID, SpaceSlug: space.Slug, Restored: false, Error: (e as Error).message });
    }
  }
  const record: DemotionRecord = {
    StartedAt: started,
    FinishedAt: deps.now().toISOString(),
    UserID: caller.UserID,
    Reason: reason,
    Recall: recall,
    Spaces: steps,
  };
  await retryOnConflict(async () => {
    const c = await deps.store.getInSpace<ChangeOrder>('ChangeOrder', co.SpaceID, co.ChangeOrderID);
    if (!c) return;
    await deps.store.transact([
      {
        op: 'update',
        kind: 'ChangeOrder',
        item: {
          ...c,
          Demotions: [...(c.Demotions ?? []), record],
          UpdatedAt: record.FinishedAt,
          Version: c.Version + 1,
        },
        expectedVersion: c.Version,
      },
    ]);
  });
  return record;
}

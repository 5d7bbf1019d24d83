/**
 * Taking a change back out of one Space (`cub variant demote`): each Unit the ChangeOrder's start Tag
 * marks there is restored to that revision as one new revision, however many revisions the promotion
 * made, and marked by the ChangeOrder's restore Tag. Only an aborted ChangeOrder is demoted; nothing is
 * promoted or published for you. Idempotent: a Unit already carrying the restore mark is left alone,
 * so a rerun finishes a partial demote and keeps work done on a Unit since it was restored.
 */
import {
  MarkRole,
  newEntity,
  requireVerb,
  type Caller,
  type ChangeOrder,
  type Progress,
  type Space,
  type Tag,
  type Unit,
} from '../model/entities.ts';
import { Conflict, NotFound } from '../model/errors.ts';
import { startJob, type JobHandler } from './jobs.ts';
import type { JobRecord } from '../ports/jobs.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import type { StoreOp } from '../ports/store.ts';
import { takenOp } from './progress.ts';
import { chunk } from '../util/chunk.ts';
import { retryOnConflict } from '../util/retry.ts';
import { bySlug } from '../variants/lookup.ts';
import { advance, dataAt } from '../variants/revisions.ts';
import { marksOf, markOp, type CoMarks } from './marks.ts';
import type { ChangeDeps } from './ports.ts';
import { refuseIfWindowed } from './windows.ts';

/** What a demote did (or would do) to one Unit. */
export interface DemotedUnit {
  UnitID: string;
  UnitSlug: string;
  /** Restore: a new revision with the start's data; Mark: the head already had it; Unchanged: restored before; Failed: see Error. */
  Action: 'Restore' | 'Mark' | 'Unchanged' | 'Failed';
  Reason?: 'AlreadyRestored' | 'NoChange';
  /** The revision restored to (what the start Tag marks). */
  RestoredRevisionNum?: number;
  /** The revision the restore mark is on. */
  RevisionNum?: number;
  /** Revisions after the change ended that the restore drops (a dry run names them before anything is written). */
  Dropped?: { RevisionNum: number; UserID: string; Description?: string }[];
  Error?: string;
}

export interface DemoteResult {
  ChangeOrderID: string;
  SpaceID: string;
  SpaceSlug: string;
  DryRun: boolean;
  /** Every Unit the start Tag marks here now carries the restore mark. */
  Restored: boolean;
  /** Set when a job's worker could not demote the Space at all. */
  Error?: string;
  Units: DemotedUnit[];
}

/** Units restored per transaction: each is its guarded update, a revision, a mutation and a mark. */
const UNITS_PER_TRANSACTION = 24;

/** The ChangeOrder with its restore Tag, made (with the ChangeOrder's update, in one transaction) by the first demote. */
async function withRestoreTag(deps: ChangeDeps, caller: Caller, co: ChangeOrder): Promise<ChangeOrder> {
  if (co.RestoreTagID) return co;
  return retryOnConflict(
    async () => {
      const cur = (await deps.store.getInSpace<ChangeOrder>('ChangeOrder', co.SpaceID, co.ChangeOrderID))!;
      if (cur.RestoreTagID) return cur;
      const tag: Tag = {
        ...newEntity(deps, caller.OrganizationID, { Slug: `${cur.Slug}-co-restore` }),
        SpaceID: cur.SpaceID,
        TagID: deps.newId(),
        ChangeOrderID: cur.ChangeOrderID,
      };
      const next: ChangeOrder = {
        ...cur,
        RestoreTagID: tag.TagID,
        UpdatedAt: deps.now().toISOString(),
        Version: cur.Version + 1,
      };
      await deps.store.transact([
        { op: 'create', kind: 'Tag', item: tag },
        { op: 'update', kind: 'ChangeOrder', item: next, expectedVersion: cur.Version },
      ]);
      return next;
    },
    () => {
      throw new Conflict('the change order kept changing; retry the demote');
    },
  );
}

/** Plans one Unit: what it is restored to, whether it already was, and what the restore drops. */
async function planUnit(
  deps: ChangeDeps,
  co: ChangeOrder,
  marks: CoMarks,
  space: Space,
  unit: Unit,
): Promise<DemotedUnit & { data?: string; head?: string }> {
  const base = { UnitID: unit.UnitID, UnitSlug: unit.Slug };
  const start = marks.start.get(unit.UnitID);
  if (!start || start.SpaceID !== space.SpaceID)
    return {
      ...base,
      Action: 'Failed',
      Error: `change order '${co.Slug}' never marked unit '${unit.Slug}' (its start Tag does not mark it): there is nothing to restore it to`,
    };
  const restored = marks.restore.get(unit.UnitID);
  if (restored)
    return {
      ...base,
      Action: 'Unchanged',
      Reason: 'AlreadyRestored',
      RestoredRevisionNum: start.RevisionNum,
      RevisionNum: restored.RevisionNum,
    };
  if (start.RevisionNum === 0)
    return {
      ...base,
      Action: 'Failed',
      Error: `unit '${unit.Slug}' was created by change order '${co.Slug}' here, so it has no earlier revision to restore; delete it with cub unit delete`,
    };
  const endRev = marks.end.get(unit.UnitID)?.RevisionNum ?? start.RevisionNum;
  // What the restore drops: the revisions past where the change landed, read as one range (not the Unit's history).
  const [data, head, dropped] = await Promise.all([
    dataAt(deps, unit, start.RevisionNum),
    dataAt(deps, unit, unit.HeadRevisionNum),
    deps.store.revisionsBetween(unit.UnitID, endRev, unit.HeadRevisionNum),
  ]);
  const Dropped = dropped.map((r) => ({
    RevisionNum: r.RevisionNum,
    UserID: r.UserID,
    ...(r.Description ? { Description: r.Description } : {}),
  }));
  if (data === head)
    return {
      ...base,
      Action: 'Mark',
      Reason: 'NoChange',
      RestoredRevisionNum: start.RevisionNum,
      RevisionNum: unit.HeadRevisionNum,
      Dropped,
    };
  return {
    ...base,
    Action: 'Restore',
    RestoredRevisionNum: start.RevisionNum,
    RevisionNum: unit.HeadRevisionNum + 1,
    Dropped,
    data,
    head,
  };
}

/** A Space with more Units than this is demoted as a job. */
export const DEMOTE_JOB_UNITS = 500;

/** What a demote job carries to its worker. */
interface DemotePlan {
  ChangeOrderID: string;
  SpaceID: string;
  Options: { changeDesc?: string };
}

/**
 * `POST /demote`: restores the Units of one Space to what the aborted ChangeOrder's start Tag marks
 * there. A Space of more than DEMOTE_JOB_UNITS Units (or when asked) is demoted as a job.
 */
export async function demote(
  deps: ChangeDeps,
  caller: Caller,
  coRef: ChangeOrder,
  space: Space,
  o: { changeDesc?: string; dryRun?: boolean; async?: boolean },
): Promise<DemoteResult | { job: JobRecord }> {
  if (!coRef.AbortedReason)
    throw new Conflict(
      `change order '${coRef.Slug}' is not aborted: abort it first (cub changeorder update --aborted-reason R), so no one is still promoting what you take back out`,
    );
  if (!o.dryRun) requireVerb(caller, [space], 'Edit', `demote change order '${coRef.Slug}' there`);
  // Never blocked by a window, unless the window says it governs demotes.
  await refuseIfWindowed(deps, caller, 'demote', `demote change order '${coRef.Slug}'`, async () => [space], coRef);
  const units = (await deps.store.listUnits(space.SpaceID)).sort(bySlug);
  if (!o.dryRun && deps.jobs && (o.async ?? units.length > DEMOTE_JOB_UNITS)) {
    const plan: DemotePlan = {
      ChangeOrderID: coRef.ChangeOrderID,
      SpaceID: coRef.SpaceID,
      Options: { changeDesc: o.changeDesc },
    };
    return {
      job: await startJob(deps, caller, {
        jobId: deps.newId(),
        kind: 'Demote',
        waves: [[space]],
        plan,
        subject: { ChangeOrderID: coRef.ChangeOrderID, ChangeOrderSlug: coRef.Slug, SpaceID: space.SpaceID },
      }),
    };
  }
  return demoteUnits(deps, caller, coRef, space, units, o);
}

/** A demote as a job: one part, the Space, demoted by the code a request runs (idempotent: a rerun finishes it). */
export const demoteJob: JobHandler<DemotePlan, DemoteResult> = {
  async run(deps, job, plan, _wave, spaces) {
    const co = await deps.store.getInSpace<ChangeOrder>('ChangeOrder', plan.SpaceID, plan.ChangeOrderID);
    if (!co) throw new NotFound('the change order was deleted while it was being demoted');
    const space = spaces[0]!;
    return {
      results: [
        await demoteUnits(
          deps,
          job.Caller as Caller,
          co,
          space,
          (await deps.store.listUnits(space.SpaceID)).sort(bySlug),
          plan.Options,
        ),
      ],
    };
  },
  gaveUp: (spaces, error) =>
    spaces.map((s) => ({
      ChangeOrderID: '',
      SpaceID: s.SpaceID,
      SpaceSlug: s.Slug,
      DryRun: false,
      Restored: false,
      Units: [],
      Error: `the job's worker gave up on it after every attempt (${error}); demote again to finish`,
    })),
  summary: (r) => ({
    SpaceID: r.SpaceID,
    Action: r.Restored ? 'Restored' : r.Error || r.Units.some((u) => u.Action === 'Failed') ? 'Failed' : 'Partial',
    ...(r.Error ? { Error: r.Error } : {}),
  }),
  async finish(deps, _job, _plan, results, end) {
    const r = results[0]!;
    await deps.store.transact(end(r.Error || r.Units.some((u) => u.Action === 'Failed') ? 207 : 200, {}));
  },
  answer: (_head, results) => results[0],
};

async function demoteUnits(
  deps: ChangeDeps,
  caller: Caller,
  coRef: ChangeOrder,
  space: Space,
  units: Unit[],
  o: { changeDesc?: string; dryRun?: boolean },
): Promise<DemoteResult> {
  const co = o.dryRun ? coRef : await withRestoreTag(deps, caller, coRef);
  const marks = await marksOf(deps, co);
  const plans = await Promise.all(units.map((u) => planUnit(deps, co, marks, space, u)));
  const result: DemoteResult = {
    ChangeOrderID: co.ChangeOrderID,
    SpaceID: space.SpaceID,
    SpaceSlug: space.Slug,
    DryRun: !!o.dryRun,
    Restored: false,
    Units: plans.map(({ data: _d, head: _h, ...u }) => u),
  };
  const marked = [...marks.start.values()].filter((m) => m.SpaceID === space.SpaceID);
  if (o.dryRun) {
    result.Restored = marked.length > 0 && marked.every((m) => marks.restore.has(m.UnitID));
    return result;
  }
  const now = deps.now().toISOString();
  const byId = new Map(units.map((u) => [u.UnitID, u]));
  const writes = plans.filter((p) => p.Action === 'Restore' || p.Action === 'Mark');
  for (const part of chunk(writes, UNITS_PER_TRANSACTION)) {
    const ops: StoreOp[] = [];
    for (const p of part) {
      const unit = byId.get(p.UnitID)!;
      if (p.Action === 'Mark') {
        ops.push(markOp(co, MarkRole.restore, unit, unit.HeadRevisionNum, now));
        continue;
      }
      const step = advance(deps, caller, unit, p.head!, p.data!, {
        source: 'Restore',
        description: o.changeDesc ?? `restore revision ${p.RestoredRevisionNum} (demote change order '${co.Slug}')`,
        restoredRevisionNum: p.RestoredRevisionNum,
      });
      ops.push(
        {
          op: 'update',
          kind: 'Unit',
          item: { ...step.unit, Version: unit.Version + 1 },
          expectedVersion: unit.Version,
        },
        ...step.ops,
        markOp(co, MarkRole.restore, unit, step.unit.HeadRevisionNum, now),
      );
    }
    await deps.store.transact(ops);
  }
  // Restored here once every Unit the start Tag marks carries the restore mark.
  const after = await marksOf(deps, co);
  result.Restored = marked.length > 0 && marked.every((m) => after.restore.has(m.UnitID));
  if (result.Restored) await recordRestored(deps, caller, co, space, now, after);
  return result;
}

async function recordRestored(
  deps: ChangeDeps,
  caller: Caller,
  co: ChangeOrder,
  space: Space,
  now: string,
  marks: CoMarks,
): Promise<void> {
  const units = await deps.store.listUnits(space.SpaceID);
  const slugs = new Map(units.map((u) => [u.UnitID, u.Slug]));
  const restored = [...marks.restore.values()]
    .filter((m) => m.SpaceID === space.SpaceID)
    .map((m) => ({ UnitID: m.UnitID, UnitSlug: slugs.get(m.UnitID) ?? m.UnitID, RevisionNum: m.RevisionNum }));
  const event = {
    source: SOURCE,
    detailType: DetailType.ChangeOrderRestored,
    detail: {
      OrganizationID: co.OrganizationID,
      SpaceID: space.SpaceID,
      SpaceSlug: space.Slug,
      ChangeOrderID: co.ChangeOrderID,
      Slug: co.Slug,
      RestoredAt: now,
      UserID: caller.UserID,
      Units: restored,
    },
  };
  // The Space's progress and the event announcing it, in one transaction.
  await retryOnConflict(
    async () => {
      const progress = (await deps.store.progressOf(co.ChangeOrderID)).find((p) => p.SpaceID === space.SpaceID);
      if (progress?.RestoredAt) return;
      const write: StoreOp = progress
        ? {
            op: 'update',
            kind: 'Progress',
            item: { ...progress, RestoredAt: now, Version: progress.Version + 1 } satisfies Progress,
            expectedVersion: progress.Version,
          }
        : takenOp(co, space, now, { restoredAt: now });
      await deps.store.transact([write, ...eventOps(deps, [event])]);
    },
    () => undefined,
  );
}

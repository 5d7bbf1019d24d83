/**
 * Long operations as jobs. A promotion (or an approval over a stage, or a demote) too large for one
 * request is planned and gated in the request, written as a Job, and answered 202; its Spaces are split
 * into waves (run one after another: a MergeUnits wave merges from the one before) of parts of at most
 * JOB_PART_SPACES Spaces, each part a message a worker takes (SQS → worker Lambdas on AWS, an
 * in-process pool locally). A worker runs its part's Spaces with the very code a request runs, then
 * writes the part's result and the job's count in one transaction — once: a part already written is
 * never run again. Whoever writes a wave's last part starts the next wave; whoever writes the job's last
 * part finishes it: the operation's record (the ChangeOrder's promotions, failures, its lease given
 * back) and the job's answer in one transaction. A message delivered twice, a worker that died, a
 * server restarted mid-job: each is taken up again from what the table says (`resumeJob`).
 */
import type { ChangeDeps } from './ports.ts';
import type { Caller, Space } from '../model/entities.ts';
import { Conflict, NotFound, TooLarge } from '../model/errors.ts';
import type { JobMessage } from '../ports/deps.ts';
import type { StoreOp } from '../ports/store.ts';
import type { JobKind, JobPartRecord, JobPlanRecord, JobRecord } from '../ports/jobs.ts';
import { compress, decompress } from '../config/hash.ts';

/**
 * Above this many Spaces a promotion (or an approval) runs as a job unless the request says otherwise
 * (BATON_JOB_THRESHOLD): 100 Spaces of a few Units each promote in well under API Gateway's 29 seconds.
 */
export const DEFAULT_JOB_THRESHOLD = 100;

/** The most Spaces one part (one worker's share) runs. */
export const JOB_PART_SPACES = 20;
/** Attempts a part gets (SQS deliveries, or the local pool's tries); the last failing one writes the part's Spaces as failed. */
export const JOB_ATTEMPTS = 3;
/** How long a finished job is kept (seconds). */
const JOB_KEPT_S = 7 * 24 * 3600;
/**
 * The largest piece a job's plan is kept in (characters of its compressed JSON): under DynamoDB's 400 KB
 * an item. A 6,000-Space promotion's plan measured 449 KB, two pieces; a 100-Space one takes one.
 */
export const JOB_PLAN_CHUNK = 300 * 1024;
/** Pieces written in one transaction (well under its 4 MB). */
const PLAN_CHUNKS_A_WRITE = 8;

/** What a kind of job does with its parts. `P` is its plan, `R` what one Space came to. */
export interface JobHandler<P = unknown, R = unknown> {
  /** Runs a part's Spaces; what each came to, and what to write with the part (in its transaction), if anything. */
  run(
    deps: ChangeDeps,
    job: JobRecord,
    plan: P,
    wave: number,
    spaces: Space[],
  ): Promise<{ results: R[]; ops?: StoreOp[] }>;
  /** What each Space of a part came to when its worker gave up on it. */
  gaveUp(spaces: Space[], error: string): R[];
  /** What a Space's result says, for the job's progress (its action, and the error if any). */
  summary(result: R): { SpaceID: string; Action: string; Error?: string };
  /**
   * Records what the operation came to from every Space's result (in order), with `end(status, head)` —
   * the job's own end — in the same transaction. `head` is the request's answer without what each Space
   * came to (kept once, in the parts): the Job item keeps only it, so a job of any size can end.
   */
  finish(
    deps: ChangeDeps,
    job: JobRecord,
    plan: P,
    results: R[],
    end: (status: number, head: unknown) => StoreOp[],
  ): Promise<void>;
  /** The answer the request would have given: the head `finish` ended with, and every Space's result in order. */
  answer(head: unknown, results: R[]): unknown;
  /** After the job has ended (effects that may run again: e.g. a Stage re-evaluated). */
  after?(deps: ChangeDeps, job: JobRecord, plan: P): Promise<void>;
}

export type JobHandlers = Record<JobKind, JobHandler>;

interface StoredPlan<P> {
  waves: Space[][];
  data: P;
}

const partKey = (wave: number, index: number) => `w${String(wave).padStart(3, '0')}p${String(index).padStart(5, '0')}`;

/** Whether a request of this many Spaces runs as a job (`Async` asks either way; without a queue nothing does). */
export function runsAsJob(deps: ChangeDeps, spaces: number, asked: boolean | undefined): boolean {
  if (!deps.jobs || spaces === 0) return false;
  return asked ?? spaces > deps.jobs.thresholdSpaces;
}

/** Writes a job and sends its first wave's parts. `jobId` may be chosen by the caller (a promotion's lease names it). */
export async function startJob<P>(
  deps: ChangeDeps,
  caller: Caller,
  o: { jobId: string; kind: JobKind; waves: Space[][]; plan: P; subject?: Record<string, unknown> },
): Promise<JobRecord> {
  const waves = o.waves.filter((w) => w.length);
  const partSize = deps.jobs?.partSpaces ?? JOB_PART_SPACES;
  const now = deps.now().toISOString();
  const stored = compress(JSON.stringify({ waves, data: o.plan } satisfies StoredPlan<P>));
  // Kept a day past the week a Job is kept once it ends, so a job that ran for less than a day is read whole until it goes.
  const expires = Math.floor(deps.now().getTime() / 1000) + JOB_KEPT_S + 24 * 3600;
  const pieces: StoreOp[] = [];
  for (let i = 0; i * JOB_PLAN_CHUNK < stored.length; i++)
    pieces.push({
      op: 'create',
      kind: 'JobPlan',
      item: {
        JobID: o.jobId,
        Chunk: i,
        Data: stored.slice(i * JOB_PLAN_CHUNK, (i + 1) * JOB_PLAN_CHUNK),
        ExpiresAtEpoch: expires,
      } satisfies JobPlanRecord,
    });
  const job: JobRecord = {
    JobID: o.jobId,
    OrganizationID: caller.OrganizationID,
    UserID: caller.UserID,
    Kind: o.kind,
    State: 'Running',
    Caller: caller,
    Subject: o.subject,
    PlanChunks: pieces.length,
    Total: waves.reduce((n, w) => n + w.length, 0),
    Parts: waves.map((w) => Math.ceil(w.length / partSize)),
    PartSpaces: partSize,
    Wave: 0,
    PartsDone: 0,
    SpacesDone: 0,
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  // The plan's pieces first, the Job with the last of them: a Job is never read without its whole plan.
  // (A start refused after some pieces were written leaves them to their TTL: no Job names them.)
  const last = pieces.splice(Math.max(0, pieces.length - PLAN_CHUNKS_A_WRITE + 1));
  for (let i = 0; i < pieces.length; i += PLAN_CHUNKS_A_WRITE)
    await deps.store.transact(pieces.slice(i, i + PLAN_CHUNKS_A_WRITE));
  await deps.store.transact([...last, { op: 'create', kind: 'Job', item: job }]);
  await sendWave(deps, job, 0);
  return job;
}

async function sendWave(deps: ChangeDeps, job: JobRecord, wave: number, skip: Set<string> = new Set()): Promise<void> {
  const messages: JobMessage[] = [];
  for (let i = 0; i < (job.Parts[wave] ?? 0); i++)
    if (!skip.has(partKey(wave, i))) messages.push({ JobID: job.JobID, Wave: wave, Part: i });
  if (messages.length) await deps.jobs!.queue.send(messages);
}

const plans = new Map<string, StoredPlan<unknown>>();
/** A job's plan, read and decompressed once per worker process (the last few jobs kept). */
async function planOf<P>(deps: ChangeDeps, job: JobRecord): Promise<StoredPlan<P>> {
  let p = plans.get(job.JobID);
  if (!p) {
    const pieces = await deps.store.jobPlan(job.JobID);
    if (pieces.length !== job.PlanChunks)
      throw new Error(`job ${job.JobID}'s plan has ${pieces.length} of its ${job.PlanChunks} pieces`);
    p = JSON.parse(decompress(pieces.map((c) => c.Data).join(''))) as StoredPlan<unknown>;
    plans.set(job.JobID, p);
    if (plans.size > 8) plans.delete(plans.keys().next().value!);
  }
  return p as StoredPlan<P>;
}

/** The Spaces of one part. */
function partSpaces(job: JobRecord, plan: StoredPlan<unknown>, wave: number, index: number): Space[] {
  const size = job.PartSpaces ?? JOB_PART_SPACES;
  return (plan.waves[wave] ?? []).slice(index * size, (index + 1) * size);
}

/**
 * Runs one part of a job (a worker's message), unless it has run already; then moves the job on.
 * `giveUp` (the last attempt failed): the part's Spaces are written as failed, so the job still ends.
 */
export async function runJobPart(
  deps: ChangeDeps,
  handlers: JobHandlers,
  msg: JobMessage,
  giveUp?: string,
  o: { firstDelivery?: boolean } = {},
): Promise<void> {
  const job = await deps.store.getJob(msg.JobID);
  if (!job || job.State === 'Done') return;
  const key = partKey(msg.Wave, msg.Part);
  // A part delivered again may have run already: then the job is only moved on. A first delivery is not
  // asked (the queue sends a part once; were it run twice, its write would find the part there and stop).
  if (!o.firstDelivery && (await deps.store.jobPartDone(job.JobID, key))) return resumeJob(deps, handlers, job.JobID);
  const handler = handlers[job.Kind];
  const plan = await planOf(deps, job);
  const spaces = partSpaces(job, plan, msg.Wave, msg.Part);
  const { results, ops } =
    giveUp !== undefined
      ? { results: handler.gaveUp(spaces, giveUp), ops: [] }
      : await handler.run(deps, job, plan.data, msg.Wave, spaces);
  const now = deps.now().toISOString();
  const part: JobPartRecord = {
    JobID: job.JobID,
    Part: key,
    Wave: msg.Wave,
    Index: msg.Part,
    Result: compress(JSON.stringify(results)),
    ...(giveUp !== undefined ? { GaveUp: true } : {}),
    CreatedAt: now,
    ExpiresAtEpoch: Math.floor(deps.now().getTime() / 1000) + JOB_KEPT_S,
  };
  // The part and the job's count in one transaction, retried while other parts move the count.
  for (let attempt = 0; ; attempt++) {
    const cur = attempt === 0 ? job : await deps.store.getJob(job.JobID);
    if (!cur || cur.State === 'Done' || (attempt > 0 && (await deps.store.jobPartDone(job.JobID, key)))) return;
    const lastOfWave = cur.PartsDone + 1 === cur.Parts[msg.Wave] && cur.Wave === msg.Wave;
    const next: JobRecord = {
      ...cur,
      SpacesDone: cur.SpacesDone + spaces.length,
      SpacesFailed: (cur.SpacesFailed ?? 0) + results.filter((r) => handler.summary(r).Action === 'Failed').length,
      ...(lastOfWave && msg.Wave + 1 < cur.Parts.length
        ? { Wave: msg.Wave + 1, PartsDone: 0 }
        : { PartsDone: cur.PartsDone + 1 }),
      UpdatedAt: now,
      Version: cur.Version + 1,
    };
    try {
      await deps.store.transact([
        { op: 'create', kind: 'JobPart', item: part },
        { op: 'update', kind: 'Job', item: next, expectedVersion: cur.Version },
        ...(ops ?? []),
      ]);
    } catch (e) {
      if (e instanceof Conflict && attempt < 50) {
        await new Promise((r) => setTimeout(r, Math.min(200, 5 * 2 ** Math.min(attempt, 6)) * Math.random()));
        continue;
      }
      throw e;
    }
    if (lastOfWave) await moveOn(deps, handlers, next);
    return;
  }
}

/** After a wave's last part: the next wave's parts are sent, or the job is finished. */
async function moveOn(deps: ChangeDeps, handlers: JobHandlers, job: JobRecord): Promise<void> {
  const finished = job.Wave === job.Parts.length - 1 && job.PartsDone === job.Parts[job.Wave];
  if (finished) return finishJob(deps, handlers, job);
  if (job.PartsDone === 0) await sendWave(deps, job, job.Wave);
}

/**
 * Takes a job up from what the table says: the current wave's parts not yet written are sent again (a
 * duplicate is harmless: a part runs once), or the job is finished if every part is in. For a restart,
 * and for a message delivered again after its part was written.
 */
export async function resumeJob(deps: ChangeDeps, handlers: JobHandlers, jobId: string): Promise<void> {
  const job = await deps.store.getJob(jobId);
  if (!job || job.State === 'Done') return;
  if (job.Wave === job.Parts.length - 1 && job.PartsDone === job.Parts[job.Wave]) return finishJob(deps, handlers, job);
  const done = new Set((await deps.store.jobParts(jobId)).map((p) => p.Part));
  await sendWave(deps, job, job.Wave, done);
}

async function finishJob(deps: ChangeDeps, handlers: JobHandlers, job: JobRecord): Promise<void> {
  const handler = handlers[job.Kind];
  const plan = await planOf(deps, job);
  const parts = await deps.store.jobParts(job.JobID);
  const results = parts.flatMap((p) => JSON.parse(decompress(p.Result)) as unknown[]);
  const now = deps.now();
  /** The write that ends the job with the answer's status and head. */
  const ended = (status: number, head: unknown): StoreOp => ({
    op: 'update',
    kind: 'Job',
    item: {
      ...job,
      State: 'Done',
      Status: status,
      Result: compress(JSON.stringify(head)),
      FinishedAt: now.toISOString(),
      UpdatedAt: now.toISOString(),
      ExpiresAtEpoch: Math.floor(now.getTime() / 1000) + JOB_KEPT_S,
      Version: job.Version + 1,
    },
    expectedVersion: job.Version,
  });
  try {
    await handler.finish(deps, job, plan.data, results, (status, head) => [ended(status, head)]);
  } catch (e) {
    // Finished by another worker meanwhile (a message delivered twice): nothing to do.
    if (e instanceof Conflict && (await deps.store.getJob(job.JobID))?.State === 'Done') return;
    // The operation's record is too large to store (a ChangeOrder's record of a Stage of ~10,000 Spaces): no retry
    // changes that. The job ends with the 413 the request would have given, its Spaces' results kept, rather than
    // running on with every attempt failing the same way.
    if (!(e instanceof TooLarge)) throw e;
    const message = `every part of the job ran, but its record could not be written: ${e.message}`;
    await deps.store.transact([ended(413, { Code: e.code, Message: message })]);
  }
  plans.delete(job.JobID);
  await handler.after?.(deps, job, plan.data);
}

/** What `GET /job/{id}` answers: where the job stands, per Space, and once done the answer the request would have given. */
export interface JobView {
  JobID: string;
  Kind: JobKind;
  State: 'Running' | 'Done';
  UserID: string;
  Subject?: Record<string, unknown>;
  CreatedAt: string;
  UpdatedAt: string;
  FinishedAt?: string;
  Total: number;
  Done: number;
  /** Spaces whose part is written and failed. */
  Failed: number;
  /** Each Space, where it stands (not in a brief view). */
  Spaces?: {
    SpaceID: string;
    SpaceSlug: string;
    Wave: number;
    State: 'Pending' | 'Done';
    Action?: string;
    Error?: string;
  }[];
  /** The HTTP status the request would have answered with, once done. */
  Status?: number;
  /** The body the request would have answered with, once done. */
  Result?: unknown;
}

/**
 * A job as its organization's members see it (another organization's is not found). `brief`: where it
 * stands only — no per-Space list and no answer, one read however many Spaces it has (what a follower polls).
 */
export async function jobView(
  deps: ChangeDeps,
  handlers: JobHandlers,
  caller: Caller,
  jobId: string,
  o: { brief?: boolean } = {},
): Promise<JobView> {
  const job = await deps.store.getJob(jobId);
  if (!job || job.OrganizationID !== caller.OrganizationID) throw new NotFound(`job '${jobId}' not found`);
  const view: JobView = {
    JobID: job.JobID,
    Kind: job.Kind,
    State: job.State,
    UserID: job.UserID,
    ...(job.Subject ? { Subject: job.Subject } : {}),
    CreatedAt: job.CreatedAt,
    UpdatedAt: job.UpdatedAt,
    ...(job.FinishedAt ? { FinishedAt: job.FinishedAt } : {}),
    Total: job.Total,
    Done: job.State === 'Done' ? job.Total : job.SpacesDone,
    Failed: job.SpacesFailed ?? 0,
    ...(job.State === 'Done' ? { Status: job.Status } : {}),
  };
  if (o.brief) return view;
  const handler = handlers[job.Kind];
  const plan = await planOf(deps, job);
  const results = (await deps.store.jobParts(jobId)).flatMap((p) => JSON.parse(decompress(p.Result)) as unknown[]);
  const done = new Map<string, { Action: string; Error?: string }>();
  for (const r of results) {
    const s = handler.summary(r);
    done.set(s.SpaceID, { Action: s.Action, ...(s.Error ? { Error: s.Error } : {}) });
  }
  return {
    ...view,
    Spaces: plan.waves.flatMap((w, wave) =>
      w.map((s) => ({
        SpaceID: s.SpaceID,
        SpaceSlug: s.Slug,
        Wave: wave,
        ...(done.has(s.SpaceID) ? { State: 'Done' as const, ...done.get(s.SpaceID)! } : { State: 'Pending' as const }),
      })),
    ),
    ...(job.State === 'Done' && job.Result
      ? { Result: handler.answer(JSON.parse(decompress(job.Result)), results) }
      : {}),
  };
}

/**
 * The local stand-in for the job queue and its worker Lambdas: an in-process pool. Parts are run a few
 * at a time; a part that throws is tried again (like an SQS message coming back after its visibility
 * timeout), and when its last attempt fails its Spaces are written as failed, so the job still ends —
 * as the worker Lambda does on its last receive.
 */
import { consoleTelemetry, type Deps, type JobMessage, type JobQueue } from '../ports/deps.ts';
import { runPart } from '../changes/job-kinds.ts';
import { JOB_ATTEMPTS } from '../changes/jobs.ts';

export interface PoolOptions {
  /** Parts run at once (each promotes its Spaces with the promotion's own concurrency). */
  concurrency?: number;
  /** Attempts per part, the last one giving up. */
  attempts?: number;
  /** Wait before attempt n+1 (ms). */
  backoff?: (attempt: number) => number;
}

export class LocalJobPool implements JobQueue {
  private readonly waiting: { msg: JobMessage; attempt: number }[] = [];
  private running = 0;
  private readonly idleWaiters: (() => void)[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  deps?: Deps;
  /** Replaces how a part is run (tests inject faults here). */
  run: (deps: Deps, msg: JobMessage, giveUp?: string, o?: { firstDelivery?: boolean }) => Promise<void> = runPart;

  constructor(private readonly o: PoolOptions = {}) {}

  /** Parts waiting or running, by `job:wave:part`: a part sent again meanwhile is dropped (as a FIFO queue's deduplication does). */
  private readonly queued = new Set<string>();

  async send(messages: JobMessage[]): Promise<void> {
    for (const msg of messages) {
      const key = `${msg.JobID}:${msg.Wave}:${msg.Part}`;
      if (this.queued.has(key)) continue;
      this.queued.add(key);
      this.waiting.push({ msg, attempt: 1 });
    }
    this.pump();
  }

  /** Resolves once no part is running, waiting or due for another attempt. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private isIdle(): boolean {
    return this.running === 0 && this.waiting.length === 0 && this.timers.size === 0;
  }

  private pump(): void {
    const limit = this.o.concurrency ?? 2;
    while (this.running < limit && this.waiting.length) {
      const next = this.waiting.shift()!;
      this.running++;
      void this.attempt(next).finally(() => {
        this.running--;
        this.pump();
        if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
  }

  private async attempt(item: { msg: JobMessage; attempt: number }): Promise<void> {
    const deps = this.deps;
    if (!deps) throw new Error('the job pool was not given its deps');
    const attempts = this.o.attempts ?? JOB_ATTEMPTS;
    const key = `${item.msg.JobID}:${item.msg.Wave}:${item.msg.Part}`;
    try {
      await this.run(deps, item.msg, undefined, { firstDelivery: item.attempt === 1 });
      this.queued.delete(key);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      if (item.attempt >= attempts) {
        this.queued.delete(key);
        // The last attempt: the part's Spaces are written as failed (if even that fails, the job is resumed at the next start).
        await runPart(deps, item.msg, why).catch((e2: unknown) =>
          (deps.telemetry ?? consoleTelemetry).error(`job ${item.msg.JobID}: recording a part given up failed`, e2),
        );
        return;
      }
      const t = setTimeout(
        () => {
          this.timers.delete(t);
          this.waiting.push({ msg: item.msg, attempt: item.attempt + 1 });
          this.pump();
        },
        (this.o.backoff ?? ((n) => 250 * 4 ** (n - 1)))(item.attempt),
      );
      this.timers.add(t);
    }
  }

  /** Drops what is waiting (a stopping server): the table keeps the jobs, resumed at the next start. */
  stop(): void {
    this.waiting.length = 0;
    this.queued.clear();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

import type { JobAnswer } from './api.ts';

/** Where progress goes: standard error, drawn only when it is a terminal. */
export interface Terminal {
  isTTY?: boolean;
  write(s: string): unknown;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Runs `work` showing `label` and the seconds it has taken on one redrawn line of standard error, and
 * clears the line when it ends. When standard error is not a terminal (a pipeline, a log, a test) it
 * writes nothing at all. `now` and `every` are passed in so a test draws deterministically.
 */
export async function withProgress<T>(
  label: string,
  work: Promise<T>,
  opts: { stream?: Terminal; now?: () => number; every?: number } = {},
): Promise<T> {
  const stream = opts.stream ?? process.stderr;
  if (!stream.isTTY) return work;
  const now = opts.now ?? Date.now;
  const start = now();
  let frame = 0;
  const draw = () =>
    stream.write(`\r${FRAMES[frame++ % FRAMES.length]} ${label} ${((now() - start) / 1000).toFixed(1)}s`);
  draw();
  const timer = setInterval(draw, opts.every ?? 100);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    stream.write('\r\x1b[K');
  }
}

/** A job as `GET /job/{id}` answers (the API's own schema's type). */
export type { JobAnswer };

/** A bar of `width` cells, `done` of `total` filled. */
export function bar(done: number, total: number, width = 20): string {
  const filled = total ? Math.round((done / total) * width) : width;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/**
 * Follows a job until it ends: polls its brief answer (`brief` true: counts only, one read on the server
 * however many Spaces) every `every` ms, drawing `label`, the Spaces done of all and a bar on standard
 * error (on a terminal only); then reads its whole answer once and resolves with it — whose `Status` and
 * `Result` are the answer the request would have given.
 */
export async function followJob(
  get: (id: string, brief: boolean) => Promise<JobAnswer>,
  id: string,
  label: string,
  opts: { stream?: Terminal; every?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<JobAnswer> {
  const stream = opts.stream ?? process.stderr;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let last = await get(id, true);
  while (last.State !== 'Done') {
    if (stream.isTTY)
      stream.write(
        `\r\x1b[K${label}: ${last.Done}/${last.Total} space(s) ${bar(last.Done, last.Total)}${last.Failed ? ` ${last.Failed} failed` : ''} (job ${id})`,
      );
    await sleep(opts.every ?? 500);
    last = await get(id, true);
  }
  if (stream.isTTY) stream.write('\r\x1b[K');
  return get(id, false);
}

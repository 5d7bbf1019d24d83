import type { ChangeDeps } from '../changes/ports.ts';
import { sweepBlocked, type SweepResult } from '../changes/blocked.ts';

/**
 * The local clock of what AWS runs on a schedule: the Blocked notifications' sweep, every `everyMs` (a tick
 * while the last still runs is skipped). `npm start` runs it every minute (BATON_SWEEP_SECONDS); the timer
 * never keeps the process up. Returns the function that stops it.
 */
export function startSweeps(
  deps: ChangeDeps,
  everyMs: number,
  report: (r: SweepResult) => void = (r) => {
    for (const e of r.Errors) console.error(`blocked sweep: change order ${e.ChangeOrderID}: ${e.Error}`);
  },
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepBlocked(deps)
      .then(report, (e: unknown) => console.error('blocked sweep failed:', e))
      .finally(() => (running = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

import { logger, observed } from './observability.ts';
import { lambdaDeps } from './wiring.ts';
import { sweepBlocked } from '../lib/changes/blocked.ts';

/**
 * The Blocked notifications' sweep, run by a schedule every SWEEP_MINUTES (one at a time: its reserved
 * concurrency is 1): each notification on Blocked is told of its organization's change orders whose next
 * Stage has been shut longer than its BlockedFor, once per wait. A change order it cannot explain is logged
 * and the rest still looked at.
 */
export const handler = observed(async () => {
  const r = await sweepBlocked(lambdaDeps());
  for (const e of r.Errors) logger.error('blocked sweep: could not explain a change order', e);
  logger.info('blocked sweep', { ...r, Errors: r.Errors.length });
});

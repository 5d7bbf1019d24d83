import { systemDeps, type Deps } from '../ports/deps.ts';
import type { Store } from '../ports/store.ts';
import { InProcessBus } from '../events/bus.ts';
import { NOTIFY_RULE, RULES } from '../events/contracts.ts';
import { publishingStore } from '../events/outbox.ts';
import { LocalJobPool, type PoolOptions } from './jobs.ts';
import { DEFAULT_JOB_THRESHOLD } from '../changes/jobs.ts';
import { consumeEvent } from '../changes/consumers.ts';

/**
 * One machine's wiring: each transaction's outbox events are published as soon as it commits, and the
 * in-process bus delivers them to the same consumers, by the same rules, as EventBridge does on AWS.
 */
export function localDeps(
  store: Store,
  overrides: Partial<Deps> = {},
  o: { keepEventLog?: boolean; jobs?: PoolOptions & { thresholdSpaces?: number; partSpaces?: number } } = {},
): { deps: Deps; bus: InProcessBus; pool: LocalJobPool } {
  const bus = new InProcessBus(o.keepEventLog);
  const pool = new LocalJobPool(o.jobs);
  const thresholdSpaces = o.jobs?.thresholdSpaces ?? Number(process.env.BATON_JOB_THRESHOLD ?? DEFAULT_JOB_THRESHOLD);
  const deps: Deps = {
    ...systemDeps(publishingStore(store, bus), bus),
    jobs: { queue: pool, thresholdSpaces, partSpaces: o.jobs?.partSpaces },
    ...overrides,
  };
  pool.deps = deps;
  for (const rule of RULES) {
    // Notifications go out in the background: a slow webhook never holds the request whose write raised the event.
    if (rule === NOTIFY_RULE) {
      bus.subscribe(rule, async (e) => {
        void consumeEvent(deps, e).catch((err: unknown) => console.error('notification delivery failed:', err));
      });
      continue;
    }
    bus.subscribe(rule, async (e) => {
      const outcome = await consumeEvent(deps, e);
      if (!outcome.applied) console.warn(`dropped ${e.detailType}: ${outcome.reason}`);
    });
  }
  return { deps, bus, pool };
}

import { systemDeps, type Deps } from '../ports/deps.ts';
import { consumeEvent } from '../changes/consumers.ts';
import type { Store } from '../ports/store.ts';
import { InProcessBus } from '../events/bus.ts';
import { RULES } from '../events/contracts.ts';
import { publishingStore } from '../events/outbox.ts';

/**
 * One machine's wiring: each transaction's outbox events are published as soon as it commits, and the
 * in-process bus delivers them to the same consumers, by the same rules, as EventBridge does on AWS.
 */
export function localDeps(store: Store, overrides: Partial<Deps> = {}, o: { keepEventLog?: boolean } = {}): { deps: Deps; bus: InProcessBus } {
  const bus = new InProcessBus(o.keepEventLog);
  const deps: Deps = { ...systemDeps(publishingStore(store, bus), bus), ...overrides };
  for (const rule of RULES) {
    bus.subscribe(rule, async (e) => {
      const outcome = await consumeEvent(deps, e);
      if (!outcome.applied) console.warn(`dropped ${e.detailType}: ${outcome.reason}`);
    });
  }
  return { deps, bus };
}

import { systemDeps, type Deps } from '../ports/deps.ts';
import { consumeEvent } from '../changes/consumers.ts';
import type { Store } from '../ports/store.ts';
import { InProcessBus } from '../events/bus.ts';
import { RULES } from '../events/contracts.ts';

/** One machine's wiring: the in-process bus delivers events to the same consumers, by the same rules, as EventBridge does on AWS. */
export function localDeps(store: Store, overrides: Partial<Deps> = {}): { deps: Deps; bus: InProcessBus } {
  const bus = new InProcessBus();
  const deps: Deps = { ...systemDeps(store, bus), ...overrides };
  for (const rule of RULES) {
    bus.subscribe(rule, async (e) => {
      await consumeEvent(deps, e);
    });
  }
  return { deps, bus };
}

import { randomBytes, randomUUID } from 'node:crypto';
import type { BatonEvent } from '../events/contracts.ts';
import type { Store } from './store.ts';

/** The bus port: put events; who receives them is the rules' business. */
export interface EventBus {
  put(events: BatonEvent[]): Promise<void>;
}

/**
 * What operations report as they run: counts (promotions, Units promoted, gate refusals by gate,
 * live-status events) and errors. Powertools Metrics and Logger on AWS; locally errors go to stderr
 * and counts nowhere. Never given a token or a request's headers.
 */
export interface Telemetry {
  count(name: string, value?: number, dimensions?: Record<string, string>): void;
  error(message: string, error: unknown): void;
}

/** Local telemetry: errors on stderr, counts dropped. */
export const consoleTelemetry: Telemetry = {
  count: () => undefined,
  error: (message, error) => console.error(message, error),
};

/** What operations depend on: storage, the bus, and time and ids passed in so tests are deterministic. */
export interface Deps<S = Store> {
  store: S;
  bus: EventBus;
  /** Where counts and errors go (console when absent). */
  telemetry?: Telemetry;
  now(): Date;
  newId(): string;
  newToken(): string;
}

/** Production wiring of time, ids and token secrets. */
export function systemDeps(store: Store, bus: EventBus): Deps {
  return {
    store,
    bus,
    now: () => new Date(),
    newId: () => randomUUID(),
    newToken: () => `bt_${randomBytes(32).toString('base64url')}`,
  };
}

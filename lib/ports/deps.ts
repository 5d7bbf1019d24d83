import { randomBytes, randomUUID } from 'node:crypto';
import type { BatonEvent } from '../events/contracts.ts';
import type { Store } from './store.ts';

/** The bus port: put events; who receives them is the rules' business. */
export interface EventBus {
  put(events: BatonEvent[]): Promise<void>;
}

/** What operations depend on: storage, the bus, and time and ids passed in so tests are deterministic. */
export interface Deps<S = Store> {
  store: S;
  bus: EventBus;
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

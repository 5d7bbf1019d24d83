import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { EventBus } from '../events/bus.ts';
import type { Store } from './ports.ts';

/** What operations depend on: storage, and time and ids passed in so tests are deterministic. */
export interface Deps {
  store: Store;
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

/** Tokens are stored only as this hash. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

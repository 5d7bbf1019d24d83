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

/** One part of a job, as a worker receives it. */
export interface JobMessage {
  JobID: string;
  Wave: number;
  Part: number;
}

/** Where job parts go to be run: SQS on AWS, an in-process worker pool locally. */
export interface JobQueue {
  send(messages: JobMessage[]): Promise<void>;
}

/** Jobs as deps carry them: the queue, and the number of Spaces above which a request runs as a job. */
export interface Jobs {
  queue: JobQueue;
  thresholdSpaces: number;
  /** The most Spaces one part (one worker's share) runs (JOB_PART_SPACES when unset). */
  partSpaces?: number;
}

/** What operations depend on: storage, the bus, and time and ids passed in so tests are deterministic. */
export interface Deps<S = Store> {
  store: S;
  bus: EventBus;
  /** Where counts and errors go (console when absent). */
  telemetry?: Telemetry;
  /** Spaces a promotion works on at once (PROMOTE_CONCURRENCY when unset). */
  promoteConcurrency?: number;
  /** Where long operations run as jobs; without it every request runs whole, in the request. */
  jobs?: Jobs;
  now(): Date;
  /** Waits between a notification's retries (setTimeout when unset; tests pass one that records instead). */
  sleep?: (ms: number) => Promise<void>;
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

import { Conflict } from '../model/errors.ts';

/** How often a read-modify-write is tried when another writer keeps winning the Version race. */
export const CONFLICT_ATTEMPTS = 5;

/**
 * Runs a read-modify-write until it lands: a `Conflict` (a lost Version race) reads again and retries,
 * up to `attempts` times; any other error is thrown at once. After the last lost race, `onExhausted`
 * decides: it returns a value, or throws.
 */
export async function retryOnConflict<T>(
  attempt: () => Promise<T>,
  onExhausted: () => T = () => {
    throw new Conflict('the record kept changing under the write; retry');
  },
  attempts = CONFLICT_ATTEMPTS,
): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    try {
      return await attempt();
    } catch (e) {
      if (!(e instanceof Conflict)) throw e;
    }
  }
  return onExhausted();
}

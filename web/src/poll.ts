// How long the rollout page waits between two reads of a view.

/** The share of its time a page left open spends reading: a read that takes long (a large fleet) is followed by a longer wait. */
export const READING_SHARE = 0.2;

/**
 * The wait before the next read: the page's interval (`?poll`, 4 s), or — when the last read took
 * longer than a fifth of that — as long as keeps reads to a fifth of the page's time, at most a minute.
 * A 1,000-Space rollout whose read takes 3.6 s is read every 14.4 s instead of every 4 s.
 */
export function nextPollMs(pollMs: number, lastReadMs: number): number {
  return Math.max(pollMs, Math.min(60_000, Math.round(lastReadMs * ((1 - READING_SHARE) / READING_SHARE))));
}

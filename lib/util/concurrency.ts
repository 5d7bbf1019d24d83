/** A read made once per key, its promise shared by every caller that asks for the same key. */
export function sharedRead<T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (!p) cache.set(key, (p = read()));
  return p;
}

/** Runs tasks with at most `limit` at once, keeping their order in the results. */
export async function bounded<T, R>(items: T[], limit: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Resolves on the event loop's next turn: the I/O that arrived meanwhile is taken in, and what was made ready to send goes out, first. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

import { afterEach, describe, expect, it, vi } from 'vitest';
import { Unavailable } from '../../lib/model/errors.ts';
import { untilProcessed } from '../../lib/store/table.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('a batch request sent again with what the database left unprocessed', () => {
  it('sends the items, then only those left, backing off between tries, until none are left', async () => {
    vi.useFakeTimers();
    const sent: number[][] = [];
    const left = [[3, 4], [4], []];
    const done = untilProcessed('write', [1, 2, 3, 4], async (items) => {
      sent.push(items);
      return left[sent.length - 1]!;
    });
    await vi.advanceTimersByTimeAsync(50 + 100);
    await done;
    expect(sent).toEqual([[1, 2, 3, 4], [3, 4], [4]]);
  });

  it('sends nothing for no items, and gives up after 8 tries, naming a read or a write', async () => {
    let calls = 0;
    await untilProcessed('read', [], async () => {
      calls++;
      return [];
    });
    expect(calls).toBe(0);
    vi.useFakeTimers();
    for (const what of ['read', 'write'] as const) {
      let tries = 0;
      const stuck = untilProcessed(what, ['k'], async (items) => {
        tries++;
        return items;
      });
      const failed = expect(stuck).rejects.toThrow(
        new Unavailable(`the database kept leaving part of a batch ${what} unprocessed; try again`),
      );
      await vi.advanceTimersByTimeAsync(25 * (2 + 4 + 8 + 16 + 32 + 64 + 128));
      await failed;
      expect(tries).toBe(8);
    }
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WriteRefused } from '../../lib/model/errors.ts';
import { landGroups } from '../../lib/util/groups.ts';

/** Groups of items named `g<i>.<j>`; a transaction is refused at the first item of a group in `bad`. */
function table(bad: Set<number>) {
  const sent: string[][] = [];
  const landed: string[][] = [];
  const send = async (part: string[][]) => {
    const items = part.flat();
    sent.push(items);
    const at = items.findIndex((x) => bad.has(Number(x.slice(1).split('.')[0])));
    if (at >= 0) throw new WriteRefused(`refused ${items[at]}`, at);
    landed.push(items);
  };
  return { sent, landed, send };
}
const groupsOf = (sizes: number[]) => sizes.map((n, i) => Array.from({ length: n }, (_, j) => `g${i}.${j}`));

describe('landGroups: a Space’s Units written together, each whole or not at all', () => {
  it('packs groups in order into as few transactions as fit, never splitting one', async () => {
    const t = table(new Set());
    const out = await landGroups(groupsOf([7, 7, 7, 50, 40, 7]), (g) => g.length, 100, t.send);
    expect(out).toEqual(Array(6).fill('landed'));
    expect(t.sent.map((p) => p.length)).toEqual([71, 47]);
  });

  it('leaves out a refused group with its reason and sends the rest again; the tail waits for every group before it', async () => {
    const t = table(new Set([1]));
    const out = await landGroups(groupsOf([7, 7, 7, 3]), (g) => g.length, 100, t.send, 1);
    expect(out.map((o) => (o instanceof WriteRefused ? o.message : o))).toEqual([
      'landed',
      'refused g1.0',
      'landed',
      'skipped',
    ]);
    expect(t.landed).toEqual([[...groupsOf([7])[0]!, ...groupsOf([7, 7, 7])[2]!]]);
  });

  it('throws what is not a refusal (the database gone): what landed before stays', async () => {
    let calls = 0;
    const send = async () => {
      if (++calls === 2) throw new Error('ECONNREFUSED');
    };
    await expect(landGroups(groupsOf([60, 60, 60]), (g) => g.length, 100, send)).rejects.toThrow('ECONNREFUSED');
    expect(calls).toBe(2);
  });

  it('for any groups and refusals: refused ones alone fail, the rest land once each, no transaction passes the limit, the tail only after all', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 0, maxLength: 20 }),
        fc.array(fc.nat(19)),
        fc.nat(3),
        async (sizes, badList, tailWanted) => {
          const tail = Math.min(tailWanted, sizes.length);
          const bad = new Set(badList.filter((b) => b < sizes.length));
          const t = table(bad);
          const out = await landGroups(groupsOf(sizes), (g) => g.length, 100, t.send, tail);
          const first = sizes.length - tail;
          for (const [i, o] of out.entries()) {
            if (i >= first && [...bad].some((b) => b < i)) expect(o).toBe('skipped');
            else if (bad.has(i)) expect(o).toBeInstanceOf(WriteRefused);
            else expect(o).toBe('landed');
          }
          for (const p of t.sent) expect(p.length).toBeLessThanOrEqual(100);
          const landedItems = t.landed.flat();
          expect(new Set(landedItems).size).toBe(landedItems.length);
          expect(landedItems.sort()).toEqual(
            groupsOf(sizes)
              .filter((_, i) => out[i] === 'landed')
              .flat()
              .sort(),
          );
        },
      ),
    );
  });
});

import { WriteRefused, type Conflict } from '../model/errors.ts';

/** What became of one group written with `landGroups`: it landed, it was refused (why), or it was not sent. */
export type GroupOutcome = 'landed' | 'skipped' | Conflict;

/**
 * Writes groups of items, each group whole or not at all, in as few transactions as they fit (at most
 * `max` items each, groups in order, a group never split). When a transaction is refused for one
 * group's item (`send` throws WriteRefused with that item's place in the part), that group is left out
 * with its reason and the part is sent again without it, so one group's conflict costs the others
 * nothing. The last `tail` groups are written only while every group before them has landed (a Space's
 * marks and progress after its Units); once one is refused, the tail groups after it are skipped. Any
 * other failure is thrown: what landed before it stays.
 */
export async function landGroups<G>(
  groups: G[],
  size: (g: G) => number,
  max: number,
  send: (part: G[]) => Promise<void>,
  tail = 0,
): Promise<GroupOutcome[]> {
  const out: GroupOutcome[] = groups.map(() => 'skipped');
  const firstTail = groups.length - tail;
  let refused = false;
  let i = 0;
  while (i < groups.length && !(refused && i >= firstTail)) {
    let part: number[] = [];
    let n = 0;
    for (; i < groups.length && !(refused && i >= firstTail); i++) {
      const s = size(groups[i]!);
      if (part.length && n + s > max) break;
      part.push(i);
      n += s;
    }
    while (part.length) {
      try {
        await send(part.map((j) => groups[j]!));
        for (const j of part) out[j] = 'landed';
        break;
      } catch (e) {
        if (!(e instanceof WriteRefused)) throw e;
        // The group holding the refused item: the first whose items reach past it.
        let end = 0;
        const k = part.findIndex((j) => (end += size(groups[j]!)) > e.at);
        if (k < 0) throw e;
        out[part[k]!] = e;
        refused = true;
        const at = part[k]!;
        part = part.filter((j) => j !== at && !(j >= firstTail && j > at));
      }
    }
  }
  return out;
}

import { describe, expect, it } from 'vitest';
import { across, keyedPage } from '../../lib/api/lists.ts';
import { Invalid } from '../../lib/model/errors.ts';
import { parseWhere } from '../../lib/where/index.ts';
import { ListQuery } from '../../lib/api/schemas.ts';

/** Parts (as Units or Spaces) each holding items newest first, read with an offset cursor of their own, counting reads. */
function fixture(parts: { id: string; Slug: string; items: number[] }[]) {
  const reads: string[] = [];
  const read = across(
    'things',
    parts,
    (p) => p.id,
    async (p, want, after) => {
      reads.push(p.id);
      const start = after === undefined ? 0 : Number(after);
      const items = p.items
        .slice(start, start + want)
        .map((n, i) => ({ item: { Part: p.Slug, N: n }, cursor: String(start + i + 1) }));
      return { items, next: start + want < p.items.length ? String(start + want) : undefined };
    },
  );
  return { read, reads };
}
const names = (items: { Part: string; N: number }[]) => items.map((x) => `${x.Part}/${x.N}`);

async function all(read: ReturnType<typeof fixture>['read'], limit: number, where?: string) {
  const out: string[] = [];
  let token: string | undefined;
  const queries = where ? [parseWhere(where, 'Revision')] : [];
  do {
    const p = await keyedPage(read, queries, { limit, continue: token });
    expect(p.items.length).toBeLessThanOrEqual(limit);
    out.push(...names(p.items));
    token = p.continueToken;
  } while (token);
  return out;
}

describe('a list across parts', () => {
  const parts = [
    { id: '3', Slug: 'web', items: [3, 2, 1] },
    { id: '1', Slug: 'api', items: [2, 1] },
    { id: '2', Slug: 'empty', items: [] },
    { id: '4', Slug: 'worker', items: [1] },
  ];
  const whole = ['api/2', 'api/1', 'web/3', 'web/2', 'web/1', 'worker/1'];

  it('walks the parts in slug order, each in its own order, whatever the page size', async () => {
    for (const limit of [1, 2, 3, 5, 6, 7]) expect(await all(fixture(parts).read, limit)).toEqual(whole);
  });

  it('says a page ends the list only when it does (the empty parts after it are not a next page)', async () => {
    const { read } = fixture([...parts.slice(0, 2), { id: '9', Slug: 'zzz', items: [] }]);
    const p = await keyedPage(read, [], { limit: 5 });
    expect(names(p.items)).toEqual(['api/2', 'api/1', 'web/3', 'web/2', 'web/1']);
    expect(p.continueToken).toBeUndefined();
  });

  it('reads only the parts a page walks', async () => {
    const f = fixture(parts);
    const first = await keyedPage(f.read, [], { limit: 1 });
    f.reads.length = 0;
    const second = await keyedPage(f.read, [], { limit: 2, continue: first.continueToken });
    expect(names(second.items)).toEqual(['api/1', 'web/3']);
    // 'api' from where the token left it, 'empty' (nothing), 'web' for the page and the one after it; never 'worker'.
    expect(f.reads).toEqual(['1', '2', '3']);
  });

  it('resumes at the next part by slug when the token’s part is gone', async () => {
    const first = await keyedPage(fixture(parts).read, [], { limit: 3 });
    expect(names(first.items)).toEqual(['api/2', 'api/1', 'web/3']);
    const without = fixture(parts.filter((p) => p.Slug !== 'web'));
    expect(names((await keyedPage(without.read, [], { limit: 5, continue: first.continueToken })).items)).toEqual([
      'worker/1',
    ]);
  });

  it('refuses a token that is not one of its own', async () => {
    const other = across(
      'others',
      parts,
      (p) => p.id,
      async () => ({ items: [{ item: { Part: 'x', N: 1 }, cursor: '1' }], next: '1' }),
    );
    const theirs = (await keyedPage(other, [], { limit: 1 })).continueToken!;
    for (const token of [
      theirs,
      'bm90LWEtY3Vyc29y',
      '%%%',
      Buffer.from('{"l":"things","s":1}').toString('base64url'),
    ]) {
      await expect(keyedPage(fixture(parts).read, [], { limit: 1, continue: token })).rejects.toThrow(Invalid);
    }
  });

  it('fits its token in what a list takes, with the longest slug and a part’s own cursor', async () => {
    const slug = 'a'.repeat(128);
    const inner = Buffer.from(
      JSON.stringify({
        pk: `$baton#SpaceID_${'f'.repeat(36)}`,
        sk: `$release_1#ReleaseID_${'e'.repeat(36)}`,
        gsi1pk: `$baton#SpaceID_${'f'.repeat(36)}`,
        gsi1sk: `$release_1#ReleaseNum_0000000003#ReleaseID_${'e'.repeat(36)}`,
      }),
    ).toString('base64url');
    const read = across(
      'releases',
      [{ id: 'f'.repeat(36), Slug: slug }],
      (p) => p.id,
      async () => ({
        items: [
          { item: 1, cursor: inner },
          { item: 2, cursor: inner },
        ],
        next: inner,
      }),
    );
    const token = (await keyedPage(read, [], { limit: 1 })).continueToken!;
    expect(ListQuery.safeParse({ limit: '1', continue: token }).success).toBe(true);
  });
});

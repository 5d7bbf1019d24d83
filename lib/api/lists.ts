import type { Caller, Filter, Space } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { matches, parseWhere, relationsUsed, type Query } from '../where/index.ts';
import type { Deps } from '../ports/deps.ts';
import type { OrgKind, SluggedInSpace } from '../ports/store.ts';
import { findInSpace } from '../variants/lookup.ts';

/** The list parameters every list route takes. */
export interface ListParams {
  where?: string;
  filter?: string;
  limit?: number;
  continue?: string;
}

/** A page of a list; `Continue` is the opaque token for the next page, when there is one. */
export interface Page<T> {
  items: T[];
  continueToken?: string;
}

/** Loads the related entities a query reads (e.g. `UpstreamUnit`) onto each item before matching. */
export type RelationLoader<T> = (items: T[], relations: Set<string>) => Promise<T[]>;

/** Parses `where` and resolves `filter` (a saved Filter, `space/slug` or a slug in `home`) into queries over `entity`. */
export async function listQueries(
  deps: Deps,
  caller: Caller,
  entity: string,
  p: ListParams,
  home?: Space,
): Promise<Query[]> {
  const queries: Query[] = [];
  if (p.where !== undefined) queries.push(parseWhere(p.where, entity));
  if (p.filter) {
    const { item } = await findInSpace<Filter>(deps, caller, home, 'Filter', p.filter);
    if (item.From !== entity) throw new Invalid(`filter '${p.filter}' selects ${item.From}, not ${entity}`);
    queries.push(parseWhere(item.Where, entity));
  }
  return queries;
}

/** Filters, orders by slug and pages a list read in full from one partition. */
export async function page<T extends { Slug: string }>(
  items: T[],
  queries: Query[],
  p: ListParams,
  load?: RelationLoader<T>,
): Promise<Page<T>> {
  const relations = new Set(queries.flatMap((q) => [...relationsUsed(q)]));
  let all = relations.size && load ? await load(items, relations) : items;
  all = all.filter((i) => queries.every((q) => matches(q, i as Record<string, unknown>)));
  all.sort((a, b) => (a.Slug < b.Slug ? -1 : a.Slug > b.Slug ? 1 : 0));
  let start = 0;
  if (p.continue) {
    let after: string;
    try {
      after = Buffer.from(p.continue, 'base64url').toString('utf8');
    } catch {
      throw new Invalid('continue token is not one this API issued');
    }
    start = all.findIndex((i) => i.Slug > after);
    if (start < 0) start = all.length;
  }
  const limit = p.limit ?? all.length;
  const slice = all.slice(start, start + limit);
  const last = slice[slice.length - 1];
  const more = start + limit < all.length && last;
  const out = slice.map((i) => stripRelations(i, relations));
  return { items: out, continueToken: more ? Buffer.from(last.Slug, 'utf8').toString('base64url') : undefined };
}

/** Where a kind's slugs are claimed, and which kind. */
export interface SlugScope {
  scope: { orgId: string } | { spaceId: string };
  kind: OrgKind | SluggedInSpace | 'Space' | 'Component';
}

/** How a list reads its items: all of them, or those of some IDs; and what each becomes in the answer (undefined: not shown). */
export interface ListSource<S, T> {
  all(): Promise<S[]>;
  some(ids: string[]): Promise<S[]>;
  idOf(item: S): string;
  show(item: S): Promise<T | undefined> | T | undefined;
}

/**
 * A page of a list in slug order. Asked for a `limit` (or given a `continue` token), it walks the slug
 * claims with DynamoDB's own cursor and reads only the items of the claims it walks — never the whole
 * partition — until it has `limit` that match; the token it gives back is the cursor of the last claim
 * it answered with. Asked for neither, it reads the whole list.
 */
export async function cursorPage<S, T extends { Slug: string }>(
  deps: Deps,
  where: SlugScope,
  src: ListSource<S, T>,
  queries: Query[],
  p: ListParams,
  load?: RelationLoader<T>,
): Promise<Page<T>> {
  const shown = async (items: S[]): Promise<T[]> =>
    (await Promise.all(items.map(async (i) => src.show(i)))).filter((x) => x !== undefined) as T[];
  if (p.limit === undefined && p.continue === undefined) return page(await shown(await src.all()), queries, p, load);
  const limit = p.limit ?? 100;
  const relations = new Set(queries.flatMap((q) => [...relationsUsed(q)]));
  const out: T[] = [];
  let after = p.continue;
  for (;;) {
    // Without a filter every claim read is answered: read what the page still needs and one more, so a
    // page that ends the list says so (DynamoDB gives a cursor whenever a query stops at its Limit).
    const want = queries.length ? Math.min(1000, Math.max(limit, 50)) : limit - out.length + 1;
    const claims = await deps.store.slugPage(where.scope, where.kind, want, after);
    const byId = new Map((await src.some(claims.claims.map((c) => c.ID))).map((i) => [src.idOf(i), i]));
    const rows = await Promise.all(
      claims.claims.map(async (c) => ({
        c,
        item: (byId.has(c.ID) ? await src.show(byId.get(c.ID)!) : undefined) as T | undefined,
      })),
    );
    const present = rows.filter((r): r is { c: (typeof rows)[number]['c']; item: T } => r.item !== undefined);
    const loaded =
      relations.size && load
        ? await load(
            present.map((r) => r.item),
            relations,
          )
        : present.map((r) => r.item);
    for (const [i, r] of present.entries()) {
      const item = loaded[i]!;
      if (!queries.every((q) => matches(q, item as Record<string, unknown>))) continue;
      out.push(stripRelations(item, relations));
      if (out.length === limit) {
        const last = i === present.length - 1 && r.c === claims.claims.at(-1) && !claims.next;
        return { items: out, continueToken: last ? undefined : r.c.Cursor };
      }
    }
    if (!claims.next) return { items: out };
    after = claims.next;
  }
}

/**
 * A page of a list kept in order by its own key (a Space's Releases or attestations, newest first): read with
 * DynamoDB's cursor from `continue`, only as many items as the page needs (and one more, so a page that
 * ends the list says so), more while a `where` leaves it short; the token it gives back resumes right
 * after the last item it answered with.
 */
export async function keyedPage<T>(
  read: (want: number, after?: string) => Promise<{ items: { item: T; cursor: string }[]; next?: string }>,
  queries: Query[],
  p: ListParams,
): Promise<Page<T>> {
  const limit = p.limit ?? 100;
  const out: T[] = [];
  let after = p.continue;
  for (;;) {
    const want = queries.length ? Math.min(1000, Math.max(limit, 50)) : limit - out.length + 1;
    const page = await read(want, after);
    for (const [i, { item, cursor }] of page.items.entries()) {
      if (!queries.every((q) => matches(q, item as Record<string, unknown>))) continue;
      out.push(item);
      if (out.length === limit)
        return { items: out, continueToken: i === page.items.length - 1 && !page.next ? undefined : cursor };
    }
    if (!page.next) return { items: out };
    after = page.next;
  }
}

/** What a list over many parts (Spaces, Units) reads of one: a page of its own, with its own cursor (as `keyedPage` reads). */
export type PartRead<P, T> = (
  part: P,
  want: number,
  after?: string,
) => Promise<{ items: { item: T; cursor: string }[]; next?: string }>;

/**
 * The `read` of a `keyedPage` over many parts (Spaces, a Space's Units), one after another in slug order,
 * each read with DynamoDB's cursor in its own order (a Space's Releases, a Unit's revisions: newest first):
 * reads only the parts it walks and only the items the page needs there. Its token names the part and the
 * cursor in it; a part gone since (deleted, or no longer visible) resumes at the next one by slug. `list`
 * names the list, so another's token is refused.
 */
export function across<P extends { Slug: string }, T>(
  list: string,
  parts: P[],
  idOf: (p: P) => string,
  readPart: PartRead<P, T>,
): (want: number, after?: string) => Promise<{ items: { item: T; cursor: string }[]; next?: string }> {
  const ordered = [...parts].sort((a, b) => (a.Slug < b.Slug ? -1 : a.Slug > b.Slug ? 1 : 0));
  const token = (p: P, r?: string) =>
    Buffer.from(JSON.stringify({ l: list, s: idOf(p), g: p.Slug, ...(r === undefined ? {} : { r }) })).toString(
      'base64url',
    );
  return async (want, after) => {
    let i = 0;
    let r: string | undefined;
    if (after !== undefined) {
      const at = acrossToken(after, list);
      i = ordered.findIndex((p) => idOf(p) === at.s);
      if (i >= 0) r = at.r;
      else {
        // The part is gone: resume at the first one after its slug, or at the end.
        i = ordered.findIndex((p) => p.Slug > at.g);
        if (i < 0) i = ordered.length;
      }
    }
    const items: { item: T; cursor: string }[] = [];
    // Read on across parts until the page has what it wants: then a token is given only when there is more.
    while (i < ordered.length && items.length < want) {
      const part = ordered[i]!;
      const p = await readPart(part, want - items.length, r);
      items.push(...p.items.map((x) => ({ item: x.item, cursor: token(part, x.cursor) })));
      if (p.next) r = p.next;
      else [i, r] = [i + 1, undefined];
    }
    return { items, next: i < ordered.length ? token(ordered[i]!, r) : undefined };
  };
}

/** `across` the Spaces. */
export const acrossSpaces = <T>(list: string, spaces: Space[], readSpace: PartRead<Space, T>) =>
  across(list, spaces, (s) => s.SpaceID, readSpace);

function acrossToken(after: string, list: string): { s: string; g: string; r?: string } {
  let at: { l?: unknown; s?: unknown; g?: unknown; r?: unknown } | undefined;
  try {
    at = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as typeof at;
  } catch {
    at = undefined;
  }
  if (
    !at ||
    at.l !== list ||
    typeof at.s !== 'string' ||
    typeof at.g !== 'string' ||
    (at.r !== undefined && typeof at.r !== 'string')
  )
    throw new Invalid('continue token is not one this list issued');
  return at as { s: string; g: string; r?: string };
}

/** Whether an item matches every query (the `where` and the saved filter of a list read whole). */
export const matchingAll = (queries: Query[]) => (item: object) =>
  queries.every((q) => matches(q, item as Record<string, unknown>));

function stripRelations<T>(item: T, relations: Set<string>): T {
  if (!relations.size) return item;
  const copy = { ...(item as Record<string, unknown>) };
  for (const r of relations) delete copy[r];
  return copy as T;
}

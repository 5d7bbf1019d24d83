import type { Caller, Filter, Space } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { matches, parseWhere, relationsUsed, type Query } from '../where/index.ts';
import type { Deps } from '../ports/deps.ts';
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
export async function listQueries(deps: Deps, caller: Caller, entity: string, p: ListParams, home?: Space): Promise<Query[]> {
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
export async function page<T extends { Slug: string }>(items: T[], queries: Query[], p: ListParams, load?: RelationLoader<T>): Promise<Page<T>> {
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

function stripRelations<T>(item: T, relations: Set<string>): T {
  if (!relations.size) return item;
  const copy = { ...(item as Record<string, unknown>) };
  for (const r of relations) delete copy[r];
  return copy as T;
}

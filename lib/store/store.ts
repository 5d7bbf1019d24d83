import type { EntityItem } from 'electrodb';
import type {
  ChangeOrder,
  Component,
  Link,
  Mark,
  Mutation,
  Organization,
  Progress,
  Space,
  StoredRevision,
  Unit,
} from '../model/entities.ts';
import type { Store } from '../ports/store.ts';
import { changes } from './changes.ts';
import type * as E from './entities.ts';
import { people } from './people.ts';
import { releases } from './releases.ts';
import { Table } from './table.ts';
import { Writes } from './transact.ts';
import { variants } from './variants.ts';

/**
 * The Store over one DynamoDB table, through ElectroDB: the table (table.ts) and its write path (transact.ts), and a
 * part per aggregate over them (people, variants, releases, changes). Key design: see lib/store/README.md.
 */
export function dynamoStore(client: unknown, table: string): Store {
  const t = new Table(client, table);
  const w = new Writes(t);
  return {
    slugPage: (scope, kind, limit, after) => t.slugPage(scope, kind, limit, after),
    getMany: (kind, scopeId, ids) => t.getMany(kind, scopeId, ids),
    transact: (ops) => w.transact(ops),
    transactGroups: (groups, o) => w.transactGroups(groups, o),
    ...people(t, w),
    ...variants(t, w),
    ...releases(t),
    ...changes(t),
  };
}

/**
 * Items as the entities declare them, each checked against the domain type it is read as: a field the
 * entity stores differently from the model fails the type check here, not at run time.
 */
type Reads<T, M> = T extends M ? true : never;
/** Compile-time proof that each stored item reads as its domain entity. */
export const ITEMS_READ_AS_ENTITIES: [
  Reads<EntityItem<typeof E.Space>, Space>,
  Reads<EntityItem<typeof E.Component>, Component>,
  Reads<EntityItem<typeof E.Unit>, Unit>,
  Reads<EntityItem<typeof E.Revision>, StoredRevision>,
  Reads<EntityItem<typeof E.Mutation>, Mutation>,
  Reads<EntityItem<typeof E.Mark>, Mark>,
  Reads<EntityItem<typeof E.Link>, Link>,
  Reads<EntityItem<typeof E.ChangeOrder>, ChangeOrder>,
  Reads<EntityItem<typeof E.Progress>, Progress>,
  Reads<EntityItem<typeof E.Organization>, Organization>,
] = [true, true, true, true, true, true, true, true, true, true];

import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createConversions } from 'electrodb';
import { Invalid, Unavailable } from '../model/errors.ts';
import type { OrgKind, SlugPage, SluggedInSpace, SpaceKind, WriteKind } from '../ports/store.ts';
import * as E from './entities.ts';
import { documentClient, makeService, type BatonService } from './entities.ts';

/** The table's key schema, shared by local set-up and the CDK stack so the two cannot drift. */
export const TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Overloaded global secondary indexes: each entity declares what it keeps in which (lib/store/entities.ts). */
  indexes: [1, 2, 3].map((n) => ({ name: `gsi${n}`, partitionKey: `gsi${n}pk`, sortKey: `gsi${n}sk` })),
  /** Items that expire (a consumer's record of an event it handled) carry their expiry here, in epoch seconds. */
  timeToLive: 'ExpiresAtEpoch',
};

/** A DynamoDB client that honours AWS_ENDPOINT_URL (DynamoDB Local, LocalStack). */
export function dynamoClient(endpoint = process.env.AWS_ENDPOINT_URL): DynamoDBClient {
  const local = !!endpoint;
  return new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'us-east-1',
    ...(local && !process.env.AWS_ACCESS_KEY_ID
      ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
}

/** Creates the table if it does not exist (local runtime and tests; on AWS the CDK stack owns it). */
export async function ensureTable(client: DynamoDBClient, table: string): Promise<void> {
  try {
    const found = await client.send(new DescribeTableCommand({ TableName: table }));
    // Pre-1.0 a table an older build made is not migrated: one without this build's indexes is refused, by name.
    const has = (found.Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort();
    const needs = TABLE_KEYS.indexes.map((i) => i.name);
    if (needs.some((n) => !has.includes(n)))
      throw new Error(
        `table '${table}' was made by an older build of Baton (its indexes: ${has.join(', ') || 'none'}; this build needs ${needs.join(', ')}): there is no migration before 1.0, so delete .data/ (or the table) and start again`,
      );
    return;
  } catch (e) {
    if (!(e instanceof ResourceNotFoundException) && (e as Error).name !== 'ResourceNotFoundException') throw e;
  }
  const attrs = [
    TABLE_KEYS.partitionKey,
    TABLE_KEYS.sortKey,
    ...TABLE_KEYS.indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  await client.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: attrs.map((a) => ({ AttributeName: a, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: TABLE_KEYS.indexes.map((i) => ({
        IndexName: i.name,
        KeySchema: [
          { AttributeName: i.partitionKey, KeyType: 'HASH' },
          { AttributeName: i.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
}

/** The condition callback of a query, a delete or a patch: the attributes by name, and the operations on them. */
export type Where = (attrs: Record<string, unknown>, op: Record<string, (...args: unknown[]) => string>) => string;
/** What an operation's `go` answers, as the generic paths read it. */
type Answer = { data: unknown; cursor?: string | null; unprocessed?: Record<string, unknown>[] };
type Go = { go(options?: object): Promise<Answer> };
type Commit = { commit(): unknown };
type Patch = { remove(names: string[]): Patch; where(f: Where): Commit };
type IndexDef = { condition?: unknown; pk: { composite: string[] }; sk?: { composite: string[] } };

/**
 * An entity as the generic paths use it, picked by kind at run time (which ElectroDB's per-entity types cannot
 * follow): the builder calls they make, and the schema the write path reads.
 */
export interface AnyEntity {
  schema: { attributes: Record<string, { required?: boolean }>; indexes: Record<string, IndexDef> };
  get(key: object): Go & { params(): { Key: Record<string, unknown> } };
  get(keys: object[]): Go;
  parse(response: { Item: Record<string, unknown> }): { data: unknown } | null;
  query: Record<string, (composite: object) => Go & { where(f: Where): Go }>;
  create(item: object): Commit;
  put(item: object): Commit;
  put(items: object[]): Go;
  delete(key: object): Commit & { where(f: Where): Commit };
  patch(key: object): { set(values: object): Patch };
}

/** The slug-claim scope of an organization and of a Space. */
export const orgScope = (orgId: string) => `ORG#${orgId}`;
export const spaceScope = (spaceId: string) => `SPACE#${spaceId}`;

/** The kinds that live under the organization (keyed by it and their ID), slugs unique in it. */
type OrgKeyed = 'Space' | 'Component' | 'User' | 'Group' | 'Hold' | 'Window' | 'Notification';
export const ORG_SLUGGED = new Set<WriteKind>([
  'Space',
  'Component',
  'User',
  'Group',
  'Hold',
  'Window',
  'Notification',
] satisfies OrgKeyed[]);
export const orgKeyed = (kind: WriteKind): kind is OrgKeyed => ORG_SLUGGED.has(kind);
/** The kinds that have no slug. */
export const UNSLUGGED = new Set<WriteKind>([
  'Revision',
  'Mutation',
  'Mark',
  'ReleaseCounter',
  'Release',
  'Progress',
  'ApiToken',
  'Attestation',
  'Outbox',
  'Job',
  'JobPart',
  'JobPlan',
  'NotificationDelivery',
]);

/** Each kind's ID field. */
export const ID_FIELD: Record<SpaceKind | OrgKind | 'Space' | 'Component' | 'Unit', string> = {
  User: 'UserID',
  Group: 'GroupID',
  Hold: 'HoldID',
  Window: 'WindowID',
  Notification: 'NotificationID',
  Attestation: 'AttestationID',
  Invocation: 'InvocationID',
  Link: 'LinkID',
  Release: 'ReleaseID',
  ChangeWorkflow: 'ChangeWorkflowID',
  ChangeOrder: 'ChangeOrderID',
  Space: 'SpaceID',
  Component: 'ComponentID',
  Unit: 'UnitID',
  Tag: 'TagID',
  ChangeSet: 'ChangeSetID',
  Filter: 'FilterID',
  Target: 'TargetID',
};

/** What `f` gives, or undefined where it throws (a cursor that does not decode). */
export function tryCursor<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** Refuses (Invalid) a cursor that is not one of this list's (`scope`: the attributes it must carry), before it is sent. */
export function checkCursor(
  conversions: { fromCursor: { toComposite(c: string): unknown } },
  after: string | undefined,
  scope: Record<string, string>,
): void {
  if (after === undefined) return;
  const at = tryCursor(() => conversions.fromCursor.toComposite(after)) as Record<string, unknown> | undefined;
  if (!at || Object.entries(scope).some(([k, v]) => at[k] !== v))
    throw new Invalid('continue token is not one this list issued');
}

/**
 * Sends a batch request, then again with what the database left unprocessed (backing off, 50 ms
 * doubling), until nothing is left: Unavailable after 8 tries.
 */
export async function untilProcessed<T>(
  what: 'read' | 'write',
  items: T[],
  send: (left: T[]) => Promise<T[]>,
): Promise<void> {
  for (let attempt = 0, left = items; left.length; attempt++) {
    if (attempt >= 8) throw new Unavailable(`the database kept leaving part of a batch ${what} unprocessed; try again`);
    if (attempt) await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    left = await send(left);
  }
}

/** Slug claims' keys as DynamoDB cursors (ExclusiveStartKey, base64url JSON) and back: the same for every table. */
const claimCursors = createConversions(E.SlugClaim);

/**
 * One table and its entities, and the reads every part of the store shares: items by key across entities or of
 * one, slug claims, and the lists by slug of any kind. The store's parts (people.ts, variants.ts, releases.ts,
 * changes.ts) read through it, and write through transact.ts.
 */
export class Table {
  readonly svc: BatonService;
  /** The entities, typed: every named read goes through these. */
  readonly db: BatonService['entities'];
  /** The same entities by kind, for the generic paths. */
  readonly e: Record<string, AnyEntity>;
  /** The document client the entities use, for the one request ElectroDB does not make: a batch read across entities. */
  readonly doc: DynamoDBDocumentClient;

  constructor(
    client: unknown,
    readonly name: string,
  ) {
    this.doc = documentClient(client);
    this.svc = makeService(client, name, this.doc);
    this.db = this.svc.entities;
    this.e = this.svc.entities as unknown as Record<string, AnyEntity>;
  }

  /**
   * Items of different entities by key, in one BatchGetItem (unprocessed keys asked again, backing off):
   * each as its entity reads it, or undefined where there is none.
   */
  async getAcross(gets: { kind: string; key: Record<string, unknown> }[]): Promise<unknown[]> {
    const keys = gets.map((g) => this.e[g.kind]!.get(g.key).params().Key);
    const id = (k: Record<string, unknown>) => `${String(k.pk)}\u0000${String(k.sk)}`;
    const found = new Map<string, Record<string, unknown>>();
    await untilProcessed('read', keys, async (ask) => {
      const r = await this.doc.send(new BatchGetCommand({ RequestItems: { [this.name]: { Keys: ask } } }));
      for (const item of r.Responses?.[this.name] ?? []) found.set(id(item), item);
      return r.UnprocessedKeys?.[this.name]?.Keys ?? [];
    });
    return keys.map((k, i) => {
      const item = found.get(id(k));
      return item ? (this.e[gets[i]!.kind]!.parse({ Item: item })?.data ?? undefined) : undefined;
    });
  }

  /** Items of one entity by key (those that exist, in any order): 100 to a request, the unprocessed ones read again one by one. */
  async batchRead<T>(kind: string, keys: object[], attributes?: readonly string[]): Promise<T[]> {
    const entity = this.e[kind]!;
    const out: T[] = [];
    const options = attributes ? { attributes } : {};
    for (let i = 0; i < keys.length; i += 100) {
      const { data, unprocessed = [] } = await entity
        .get(keys.slice(i, i + 100))
        .go({ unprocessed: 'item', ...options });
      out.push(...(data as T[]));
      for (const k of unprocessed) {
        const item = (await entity.get(k).go(options)).data;
        if (item) out.push(item as T);
      }
    }
    return out;
  }

  /** The ID claimed by this slug of a kind in a scope, if any. */
  async claimed(scope: string, kind: string, slug: string): Promise<string | undefined> {
    const { data } = await this.db.SlugClaim.get({ Scope: scope, Kind: kind, Slug: slug }).go();
    return data?.ID;
  }

  async slugPage(
    scope: { orgId: string } | { spaceId: string },
    kind: OrgKind | SluggedInSpace | 'Space' | 'Component',
    limit: number,
    after?: string,
  ): Promise<SlugPage> {
    const Scope = 'orgId' in scope ? orgScope(scope.orgId) : spaceScope(scope.spaceId);
    const Kind = kind.toLowerCase();
    // A cursor that is not one of this list's (another list's, or made up) is refused before it is sent.
    checkCursor(claimCursors, after, { Scope, Kind });
    const page = await this.db.SlugClaim.query.primary({ Scope, Kind }).go({ limit, cursor: after ?? null });
    return {
      claims: page.data.map((c) => ({
        ID: c.ID,
        Slug: c.Slug,
        Cursor: claimCursors.fromComposite.toCursor({ Scope, Kind, Slug: c.Slug }),
      })),
      next: page.cursor ?? undefined,
    };
  }

  getMany<T>(kind: OrgKind | SluggedInSpace | 'Space' | 'Component', scopeId: string, ids: string[]): Promise<T[]> {
    const inOrg = ['Space', 'Component', 'User', 'Group', 'Hold', 'Window', 'Notification'].includes(kind);
    return this.batchRead<T>(
      kind,
      ids.map((id) => ({ [inOrg ? 'OrganizationID' : 'SpaceID']: scopeId, [ID_FIELD[kind]]: id })),
    );
  }
}

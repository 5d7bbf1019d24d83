import { createConversions } from 'electrodb';
import type { Hold } from '../model/entities.ts';
import { COMPLETED } from '../model/change-orders.ts';
import { Conflict, Invalid, Unavailable } from '../model/errors.ts';
import type {
  IdempotencyRecord,
  JobPartRecord,
  JobRecord,
  OrgKind,
  OutboxItem,
  SlugPage,
  SluggedInSpace,
  SpaceKind,
} from '../ports/store.ts';
import * as E from './entities.ts';
import { documentClient, makeService, type BatonService } from './entities.ts';
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * ElectroDB's builders are typed per entity; the generic paths pick an entity by kind at run time,
 * which its types cannot follow, so those paths see entities through this loose shape.
 */
// The one `any` left in lib (issue 39 asks for it to go: a structural type of the builder calls the generic paths make).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyEntity = any;

/** The slug-claim scope of an organization and of a Space. */
export const orgScope = (orgId: string) => `ORG#${orgId}`;
export const spaceScope = (spaceId: string) => `SPACE#${spaceId}`;

/** Each kind's ID field. */
export const ID_FIELD: Record<SpaceKind | OrgKind | 'Space' | 'Component' | 'Unit', string> = {
  User: 'UserID',
  Group: 'GroupID',
  Hold: 'HoldID',
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

/** Slug claims' keys as DynamoDB cursors (ExclusiveStartKey, base64url JSON) and back: the same for every table. */
const claimCursors = createConversions(E.SlugClaim);

/** What `f` gives, or undefined where it throws (a cursor that does not decode). */
export function tryCursor<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** The filter the database applies to an organization's ChangeOrders: not Completed, not aborted (either or both). */
export function changeOrderFilter(o: {
  notCompleted?: boolean;
  notAborted?: boolean;
}): ((a: AnyEntity, op: AnyEntity) => string) | undefined {
  if (!o.notCompleted && !o.notAborted) return undefined;
  return (a, op) =>
    [
      o.notCompleted ? `(${op.notExists(a.Stage)} OR ${op.ne(a.Stage, COMPLETED)})` : '',
      o.notAborted ? op.notExists(a.AbortedReason) : '',
    ]
      .filter(Boolean)
      .join(' AND ');
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

/**
 * The records beside the entities, over the same table: idempotency keys, slug-claim pages and batch
 * reads by ID, holds, jobs and their parts, the outbox and the events consumers handled. DynamoEntries
 * (`dynamo-entries.ts`: the index pages of lists, and the attestations by content) extends it.
 */
export abstract class DynamoRecords {
  protected readonly svc: BatonService;
  /** The entities, typed: every named read goes through these. */
  protected readonly db: BatonService['entities'];
  /** The same entities by kind, for the generic paths. */
  protected readonly e: Record<string, AnyEntity>;

  /** The document client the entities use, for the one request ElectroDB does not make: a batch read across entities. */
  protected readonly doc: DynamoDBDocumentClient;
  protected readonly table: string;

  constructor(client: unknown, table: string) {
    this.doc = documentClient(client);
    this.table = table;
    this.svc = makeService(client, table, this.doc);
    this.db = this.svc.entities;
    this.e = this.svc.entities as Record<string, AnyEntity>;
  }

  /**
   * Items of different entities by key, in one BatchGetItem (unprocessed keys asked again, backing off):
   * each as its entity reads it, or undefined where there is none.
   */
  protected async getAcross(gets: { entity: AnyEntity; key: Record<string, unknown> }[]): Promise<unknown[]> {
    const keys = gets.map((g) => (g.entity.get(g.key).params() as { Key: Record<string, unknown> }).Key);
    const id = (k: Record<string, unknown>) => `${String(k.pk)}\u0000${String(k.sk)}`;
    const found = new Map<string, Record<string, unknown>>();
    await untilProcessed('read', keys, async (ask) => {
      const r = await this.doc.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: ask } } }));
      for (const item of r.Responses?.[this.table] ?? []) found.set(id(item), item);
      return r.UnprocessedKeys?.[this.table]?.Keys ?? [];
    });
    return keys.map((k, i) => {
      const item = found.get(id(k));
      return item ? (gets[i]!.entity.parse({ Item: item }).data ?? undefined) : undefined;
    });
  }

  async getIdempotency(orgId: string, userId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return ((await this.db.IdempotencyRecord.get({ OrganizationID: orgId, UserID: userId, Key: key }).go()).data ??
      undefined) as IdempotencyRecord | undefined;
  }
  async claimIdempotency(record: IdempotencyRecord): Promise<void> {
    try {
      await this.db.IdempotencyRecord.create(record).go();
    } catch (e) {
      if ((e as Error).message.includes('conditional request failed'))
        throw new Conflict(`Idempotency-Key '${record.Key}' is taken`);
      throw e;
    }
  }
  async finishIdempotency(record: IdempotencyRecord): Promise<void> {
    await this.db.IdempotencyRecord.put(record).go();
  }
  async releaseIdempotency(orgId: string, userId: string, key: string): Promise<void> {
    await this.db.IdempotencyRecord.delete({ OrganizationID: orgId, UserID: userId, Key: key }).go();
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
    if (after !== undefined) {
      const start = tryCursor(() => claimCursors.fromCursor.toComposite(after));
      if (!start || start.Scope !== Scope || start.Kind !== Kind)
        throw new Invalid('continue token is not one this list issued');
    }
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
  async getMany<T>(
    kind: OrgKind | SluggedInSpace | 'Space' | 'Component',
    scopeId: string,
    ids: string[],
  ): Promise<T[]> {
    const scopeField =
      kind === 'Space' || kind === 'Component' || kind === 'User' || kind === 'Group' || kind === 'Hold'
        ? 'OrganizationID'
        : 'SpaceID';
    const out = await this.batchRead<T>(
      this.e[kind],
      ids.map((id) => ({ [scopeField]: scopeId, [ID_FIELD[kind]]: id })),
    );
    return out;
  }

  /** Items of one entity by key (those that exist, in any order): 100 to a request, the unprocessed ones read again one by one. */
  protected async batchRead<T>(entity: AnyEntity, keys: object[]): Promise<T[]> {
    const out: T[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      const { data, unprocessed } = await entity.get(keys.slice(i, i + 100)).go({ unprocessed: 'item' });
      out.push(...(data as T[]));
      if (unprocessed.length)
        out.push(
          ...(
            (await Promise.all((unprocessed as object[]).map(async (k) => (await entity.get(k).go()).data))) as T[]
          ).filter(Boolean),
        );
    }
    return out;
  }

  async listHolds(orgId: string, o: { inForceAt?: Date } = {}): Promise<Hold[]> {
    const q = this.db.Hold.query.primary({ OrganizationID: orgId });
    if (!o.inForceAt) return (await q.go({ pages: 'all' })).data as Hold[];
    // In force: not lifted, not expired (expiries are ISO times in UTC, which compare as strings do).
    const now = o.inForceAt.toISOString();
    return (
      await q
        .where(
          (a: AnyEntity, op: AnyEntity) =>
            `${op.notExists(a.LiftedAt)} AND (${op.notExists(a.ExpiresAt)} OR ${op.gt(a.ExpiresAt, now)})`,
        )
        .go({ pages: 'all' })
    ).data as Hold[];
  }
  async getHold(orgId: string, holdId: string): Promise<Hold | undefined> {
    return ((await this.db.Hold.get({ OrganizationID: orgId, HoldID: holdId }).go()).data ?? undefined) as
      Hold | undefined;
  }

  async getJob(jobId: string): Promise<JobRecord | undefined> {
    return ((await this.db.Job.get({ JobID: jobId }).go({ consistent: true })).data ?? undefined) as
      JobRecord | undefined;
  }
  async jobParts(jobId: string): Promise<JobPartRecord[]> {
    return (await this.db.JobPart.query.primary({ JobID: jobId }).go({ pages: 'all', consistent: true }))
      .data as JobPartRecord[];
  }
  async jobPartDone(jobId: string, part: string): Promise<boolean> {
    return !!(await this.db.JobPart.get({ JobID: jobId, Part: part }).go({ consistent: true, attributes: ['JobID'] }))
      .data;
  }
  async runningJobs(): Promise<string[]> {
    return (await this.db.Job.query.running({}).go({ pages: 'all', attributes: ['JobID'] })).data.map((j) => j.JobID);
  }

  async pendingEvents(limit: number): Promise<OutboxItem[]> {
    return (await this.db.Outbox.query.pending({}).go({ limit })).data as OutboxItem[];
  }
  async deletePendingEvent(eventId: string): Promise<void> {
    await this.db.Outbox.delete({ EventID: eventId }).go();
  }
  async eventProcessed(eventId: string, consumer: string): Promise<boolean> {
    return !!(await this.db.ProcessedEvent.get({ EventID: eventId, Consumer: consumer }).go()).data;
  }
  async markEventProcessed(eventId: string, consumer: string, expiresAtEpoch: number): Promise<void> {
    await this.db.ProcessedEvent.put({ EventID: eventId, Consumer: consumer, ExpiresAtEpoch: expiresAtEpoch }).go();
  }
}

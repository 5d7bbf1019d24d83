import { createConversions, type EntityItem } from 'electrodb';
import type { ApiToken, ChangeOrder, Component, Group, Link, Mark, Progress, Mutation, Organization, Revision, Space, StoredRevision, Tag, Unit, User } from '../model/entities.ts';
import { Conflict, Invalid, TooLarge } from '../model/errors.ts';
import { COMPLETED } from '../model/change-orders.ts';
import type { MarkWrite, MutationPage, OrgKind, ReleaseCounter, RevisionPage, SluggedInSpace, SpaceKind, Store, StoreOp, WriteKind } from '../ports/store.ts';
import { TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import * as E from './entities.ts';
import { attestationEntriesDone, attestationEntryOps, changeOrderEntryOf, changeOrderFilter, DynamoRecords, ID_FIELD, orgScope, releaseEntriesDone, releaseEntryOf, spaceScope, tryCursor, userOf, type AnyEntity } from './dynamo-records.ts';

/**
 * Items as the entities declare them, each checked against the domain type it is read as: a field the
 * entity stores differently from the model fails the type check here, not at run time.
 */
type Items = {
  Space: EntityItem<typeof E.Space>;
  Component: EntityItem<typeof E.Component>;
  Unit: EntityItem<typeof E.Unit>;
  Revision: EntityItem<typeof E.Revision>;
  Mutation: EntityItem<typeof E.Mutation>;
  Mark: EntityItem<typeof E.Mark>;
  Link: EntityItem<typeof E.Link>;
  ChangeOrder: EntityItem<typeof E.ChangeOrder>;
  Progress: EntityItem<typeof E.Progress>;
  Organization: EntityItem<typeof E.Organization>;
};
type Reads<T, M> = T extends M ? true : never;
/** Compile-time proof that each stored item reads as its domain entity. */
export const ITEMS_READ_AS_ENTITIES: [
  Reads<Items['Space'], Space>,
  Reads<Items['Component'], Component>,
  Reads<Items['Unit'], Unit>,
  Reads<Items['Revision'], StoredRevision>,
  Reads<Items['Mutation'], Mutation>,
  Reads<Items['Mark'], Mark>,
  Reads<Items['Link'], Link>,
  Reads<Items['ChangeOrder'], ChangeOrder>,
  Reads<Items['Progress'], Progress>,
  Reads<Items['Organization'], Organization>,
] = [true, true, true, true, true, true, true, true, true, true];

/** A revision without its data: what a list of revisions reads. */
const REVISION_META = ['OrganizationID', 'SpaceID', 'UnitID', 'RevisionID', 'RevisionNum', 'Description', 'Source', 'UserID', 'ChangeSetID', 'DataHash', 'DataSize', 'CreatedAt'] as const;
/** Revisions' and mutations' keys (UnitID, RevisionNum) as DynamoDB cursors and back. */
const revisionCursors = createConversions(E.Revision);
const mutationCursors = createConversions(E.Mutation) as unknown as typeof revisionCursors;

/** The name of a Target's release counter item. */
const releaseCounterName = (targetId: string) => `RELEASENUM#${targetId}`;
/** The slug-claim scope of the whole table. */
const GLOBAL = 'GLOBAL';

/** Why a conditional write in a transaction failed, said once per item kind. */
const REASONS = {
  slugTaken: (kind: string, slug: string) => `${/^[AEIOUaeiou]/.test(kind) ? 'an' : 'a'} ${kind} with slug '${slug}' already exists`,
  stale: (kind: string) => `the ${kind} was changed by someone else since it was read (its Version no longer matches); read it again and retry`,
  revisionTaken: 'another write made that revision first; read the unit again and retry',
  marked: 'the Tag already marks another revision of that Unit; use --move to move it',
};

/** DynamoDB's item limit, less room for key and bookkeeping attributes. */
export const MAX_ITEM_BYTES = 380 * 1024;

/** Refuses an item that would pass DynamoDB's 400 KB (413 naming what is too large), by its JSON size, which is close to DynamoDB's own count. */
function checkItemSize(kind: string, item: object): void {
  const size = Buffer.byteLength(JSON.stringify(item));
  if (size > MAX_ITEM_BYTES) {
    const what = kind === 'Revision' ? 'the data, compressed,' : `the ${kind}`;
    throw new TooLarge(`${what} would take ${Math.ceil(size / 1024)} KB, more than one stored item holds (${MAX_ITEM_BYTES / 1024} KB); make it smaller, or split it into several Units`);
  }
}

/** The Store over one DynamoDB table, through ElectroDB (the records beside the entities: DynamoRecords). Key design: see lib/store/README.md. */
export class DynamoStore extends DynamoRecords implements Store {
  /** Runs a write transaction; a cancelled one becomes a Conflict naming the first item whose condition failed. */
  private async run(build: (e: Record<string, AnyEntity>) => unknown[], reasons: string[]): Promise<void> {
    const ops = build(this.e);
    if (ops.length > TRANSACTION_MAX_ITEMS) throw new Conflict(`this write touches ${ops.length} items, more than one transaction can hold (${TRANSACTION_MAX_ITEMS})`);
    const result = await (this.svc.transaction.write as AnyEntity)(() => ops).go();
    if (result.canceled) {
      const i = (result.data as { rejected?: boolean; code?: string }[]).findIndex((d) => d.rejected || (d.code && d.code !== 'None'));
      throw new Conflict(reasons[i] ?? reasons[reasons.length - 1] ?? 'the write conflicted with another; retry');
    }
  }

  /** The attributes the entity declares, defined ones only: what is added for reading (a Space's slug, a Link's staleness) is never written. */
  private static clean(entity: AnyEntity, item: object): Record<string, unknown> {
    const attrs = entity.schema.attributes as Record<string, unknown>;
    return Object.fromEntries(Object.entries(item).filter(([k, v]) => v !== undefined && k in attrs));
  }

  /** A patch that sets every defined field, removes optional ones now absent, and requires the Version read. */
  private patch(entity: AnyEntity, keys: Record<string, unknown>, next: Record<string, unknown>, expectedVersion: number): unknown {
    const attrs = entity.schema.attributes as Record<string, { required?: boolean }>;
    const set: Record<string, unknown> = {};
    const remove: string[] = [];
    for (const [name, def] of Object.entries(attrs)) {
      if (name in keys) continue;
      const v = next[name];
      if (v !== undefined) set[name] = v;
      else if (!def.required && name !== 'Data') remove.push(name);
    }
    let op = entity.patch(keys).set(set);
    if (remove.length) op = op.remove(remove);
    return op.where((a: AnyEntity, o: AnyEntity) => o.eq(a.Version, expectedVersion)).commit();
  }

  private claim(scope: string, kind: string, slug: string, id: string): unknown {
    return this.e.SlugClaim.create({ Scope: scope, Kind: kind, Slug: slug, ID: id }).commit();
  }
  private unclaim(scope: string, kind: string, slug: string): unknown {
    return this.e.SlugClaim.delete({ Scope: scope, Kind: kind, Slug: slug }).commit();
  }

  /** A mark as a store op: `Move` replaces one already there, otherwise it must be new. */
  private static markOp(m: MarkWrite): StoreOp {
    const item = { TagID: m.TagID, UnitID: m.UnitID, SpaceID: m.SpaceID, RevisionNum: m.RevisionNum, UpdatedAt: m.UpdatedAt };
    return m.Move ? { op: 'put', kind: 'Mark', item } : { op: 'create', kind: 'Mark', item };
  }

  async createOrganization(org: Organization, admin: User, token: ApiToken): Promise<void> {
    await this.run(
      (e) => [
        e.Organization.create(org).commit(),
        this.claim(GLOBAL, 'organization', org.Slug, org.OrganizationID),
      ],
      ['organization exists', REASONS.slugTaken('organization', org.Slug)],
    );
    await this.transact([
      { op: 'create', kind: 'User', item: admin },
      { op: 'create', kind: 'ApiToken', item: token },
    ]);
  }

  async getToken(tokenHash: string): Promise<ApiToken | undefined> {
    const { data } = await this.db.ApiToken.get({ TokenHash: tokenHash }).go();
    return data ? (data as ApiToken) : undefined;
  }
  async tokensOf(orgId: string): Promise<ApiToken[]> {
    return (await this.db.ApiToken.query.byOrg({ OrganizationID: orgId }).go({ pages: 'all' })).data as ApiToken[];
  }
  /** A user as stored before roles had `Admin`, no Role and no Version: read as the role it had. */
  async getUser(orgId: string, userId: string): Promise<User | undefined> {
    const { data } = await this.db.User.get({ OrganizationID: orgId, UserID: userId }).go();
    return data ? userOf(data) : undefined;
  }
  async listUsers(orgId: string): Promise<User[]> {
    return (await this.db.User.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data.map((u) => userOf(u));
  }
  async getGroup(orgId: string, groupId: string): Promise<Group | undefined> {
    return ((await this.db.Group.get({ OrganizationID: orgId, GroupID: groupId }).go()).data ?? undefined) as Group | undefined;
  }
  async listGroups(orgId: string): Promise<Group[]> {
    return (await this.db.Group.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data as Group[];
  }
  idInOrg(orgId: string, kind: OrgKind, slug: string): Promise<string | undefined> {
    return this.claimed(orgScope(orgId), kind.toLowerCase(), slug);
  }

  async firstOrganization(): Promise<Organization | undefined> {
    const { data } = await this.db.SlugClaim.query.primary({ Scope: GLOBAL }).go({ limit: 1 });
    const claim = data[0];
    if (!claim) return undefined;
    const org = await this.db.Organization.get({ OrganizationID: claim.ID }).go();
    return org.data ?? undefined;
  }

  private async claimed(scope: string, kind: string, slug: string): Promise<string | undefined> {
    const { data } = await this.db.SlugClaim.get({ Scope: scope, Kind: kind, Slug: slug }).go();
    return data?.ID;
  }
  spaceIdBySlug(orgId: string, slug: string): Promise<string | undefined> {
    return this.claimed(orgScope(orgId), 'space', slug);
  }
  componentIdBySlug(orgId: string, slug: string): Promise<string | undefined> {
    return this.claimed(orgScope(orgId), 'component', slug);
  }
  idInSpace(spaceId: string, kind: SluggedInSpace, slug: string): Promise<string | undefined> {
    return this.claimed(spaceScope(spaceId), kind.toLowerCase(), slug);
  }

  // Spaces and Components live under their organization.

  async createSpace(space: Space): Promise<void> {
    await this.transact([{ op: 'create', kind: 'Space', item: space }]);
  }
  async getSpace(orgId: string, spaceId: string): Promise<Space | undefined> {
    return (await this.db.Space.get({ OrganizationID: orgId, SpaceID: spaceId }).go()).data ?? undefined;
  }
  async spaceAndSlug(orgId: string, spaceId: string, kind: SluggedInSpace, slug: string): Promise<{ space?: Space; id?: string }> {
    const [space, claim] = (await this.getAcross([
      { entity: this.db.Space, key: { OrganizationID: orgId, SpaceID: spaceId } },
      { entity: this.db.SlugClaim, key: { Scope: spaceScope(spaceId), Kind: kind.toLowerCase(), Slug: slug } },
    ])) as [Space | undefined, { ID: string } | undefined];
    return { space, id: claim?.ID };
  }
  async listSpaces(orgId: string): Promise<Space[]> {
    return (await this.db.Space.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data;
  }
  async updateSpace(space: Space, expectedVersion: number, oldSlug: string): Promise<void> {
    await this.transact([{ op: 'update', kind: 'Space', item: space, expectedVersion, oldSlug }]);
  }
  async deleteSpace(space: Space): Promise<void> {
    await this.transact([{ op: 'delete', kind: 'Space', item: space }]);
  }

  async createComponent(c: Component): Promise<void> {
    await this.transact([{ op: 'create', kind: 'Component', item: c }]);
  }
  async getComponent(orgId: string, id: string): Promise<Component | undefined> {
    return (await this.db.Component.get({ OrganizationID: orgId, ComponentID: id }).go()).data ?? undefined;
  }
  async listComponents(orgId: string): Promise<Component[]> {
    return (await this.db.Component.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data;
  }

  // Units and their revisions.

  async getUnit(spaceId: string, unitId: string): Promise<Unit | undefined> {
    return (await this.db.Unit.get({ SpaceID: spaceId, UnitID: unitId }).go()).data ?? undefined;
  }
  async listUnits(spaceId: string): Promise<Unit[]> {
    return (await this.db.Unit.query.primary({ SpaceID: spaceId }).go({ pages: 'all' })).data;
  }
  async updateUnit(unit: Unit, expectedVersion: number, oldSlug: string): Promise<void> {
    await this.transact([{ op: 'update', kind: 'Unit', item: unit, expectedVersion, oldSlug }]);
  }
  async deleteUnit(unit: Unit): Promise<void> {
    await this.transact([{ op: 'delete', kind: 'Unit', item: unit }]);
    // Revisions, mutations and marks are history: removed after the unit, in batches; nothing reads them without the unit.
    const [revs, muts, marks] = await Promise.all([
      this.db.Revision.query.primary({ UnitID: unit.UnitID }).go({ pages: 'all', attributes: ['UnitID', 'RevisionNum'] }),
      this.db.Mutation.query.primary({ UnitID: unit.UnitID }).go({ pages: 'all', attributes: ['UnitID', 'RevisionNum'] }),
      this.marksOfUnit(unit.UnitID),
    ]);
    if (revs.data.length) await this.db.Revision.delete(revs.data).go();
    if (muts.data.length) await this.db.Mutation.delete(muts.data).go();
    if (marks.length) await this.db.Mark.delete(marks.map((m) => ({ TagID: m.TagID, UnitID: m.UnitID }))).go();
  }
  async getRevision(unitId: string, num: number): Promise<StoredRevision | undefined> {
    return (await this.db.Revision.get({ UnitID: unitId, RevisionNum: num }).go()).data ?? undefined;
  }
  async getRevisions(keys: { UnitID: string; RevisionNum: number }[]): Promise<StoredRevision[]> {
    const out: StoredRevision[] = [];
    // BatchGetItem takes 100 keys a request; ElectroDB splits larger sets and retries what comes back unprocessed.
    for (let i = 0; i < keys.length; i += 100) {
      const { data, unprocessed } = await this.db.Revision.get(keys.slice(i, i + 100).map((k) => ({ UnitID: k.UnitID, RevisionNum: k.RevisionNum }))).go({ unprocessed: 'item' });
      out.push(...(data as StoredRevision[]));
      for (const u of unprocessed) {
        const r = await this.getRevision(String(u.UnitID), Number(u.RevisionNum));
        if (r) out.push(r);
      }
    }
    return out;
  }
  async listRevisions(unitId: string): Promise<Revision[]> {
    return (await this.db.Revision.query.primary({ UnitID: unitId }).go({ pages: 'all', attributes: REVISION_META })).data;
  }
  async revisionPage(unitId: string, limit: number, after?: string): Promise<RevisionPage> {
    const page = await this.unitPage<Revision>(this.db.Revision, revisionCursors, unitId, limit, after, REVISION_META);
    return { items: page.items.map(({ item, cursor }) => ({ revision: item, cursor })), next: page.next };
  }
  async mutationPage(unitId: string, limit: number, after?: string): Promise<MutationPage> {
    const page = await this.unitPage<Mutation>(this.db.Mutation, mutationCursors, unitId, limit, after);
    return { items: page.items.map(({ item, cursor }) => ({ mutation: item, cursor })), next: page.next };
  }
  /** A page of a Unit's items keyed by revision number (revisions, mutations), newest first, with DynamoDB's cursor; another Unit's cursor is Invalid. */
  private async unitPage<T extends { RevisionNum: number }>(entity: AnyEntity, cursors: typeof revisionCursors, unitId: string, limit: number, after?: string, attributes?: readonly string[]): Promise<{ items: { item: T; cursor: string }[]; next?: string }> {
    if (after !== undefined && tryCursor(() => cursors.fromCursor.toComposite(after))?.UnitID !== unitId) throw new Invalid('continue token is not one this list issued');
    const page = await entity.query.primary({ UnitID: unitId }).go({ order: 'desc', limit, cursor: after ?? null, ...(attributes ? { attributes } : {}) });
    return { items: (page.data as T[]).map((item) => ({ item, cursor: cursors.fromComposite.toCursor({ UnitID: unitId, RevisionNum: item.RevisionNum }) })), next: page.cursor ?? undefined };
  }
  async listMutations(unitId: string): Promise<Mutation[]> {
    return (await this.db.Mutation.query.primary({ UnitID: unitId }).go({ pages: 'all' })).data;
  }

  // Tags, ChangeSets, Filters, Targets: Space-resident, one shape.

  async createInSpace<T extends { SpaceID: string; Slug: string }>(kind: SpaceKind, item: T, also?: { marks?: MarkWrite[] }): Promise<void> {
    await this.transact([{ op: 'create', kind, item }, ...(also?.marks ?? []).map((m) => DynamoStore.markOp(m))]);
  }
  async getInSpace<T>(kind: SpaceKind, spaceId: string, id: string): Promise<T | undefined> {
    return ((await this.e[kind].get({ SpaceID: spaceId, [ID_FIELD[kind]]: id }).go()).data ?? undefined) as T | undefined;
  }
  async listInSpace<T>(kind: SpaceKind, spaceId: string): Promise<T[]> {
    return (await this.e[kind].query.primary({ SpaceID: spaceId }).go({ pages: 'all' })).data as T[];
  }
  async updateInSpace<T extends { SpaceID: string; Slug: string }>(kind: SpaceKind, item: T, expectedVersion: number, oldSlug: string): Promise<void> {
    await this.transact([{ op: 'update', kind, item, expectedVersion, oldSlug }]);
  }
  async deleteInSpace<T extends { SpaceID: string; Slug: string }>(kind: SpaceKind, item: T): Promise<void> {
    await this.transact([{ op: 'delete', kind, item }]);
    if (kind === 'Tag') {
      const marks = await this.marksOfTag(String((item as Record<string, unknown>).TagID));
      if (marks.length) await this.db.Mark.delete(marks.map((m) => ({ TagID: m.TagID, UnitID: m.UnitID }))).go();
    }
  }

  async closeChangeSet(cs: { SpaceID: string; ChangeSetID: string; Version: number }, next: object, tags: Tag[], marks: MarkWrite[], unlock: Unit[]): Promise<void> {
    await this.transact([
      { op: 'update', kind: 'ChangeSet', item: next, expectedVersion: cs.Version },
      ...tags.map((t): StoreOp => ({ op: 'create', kind: 'Tag', item: t })),
      ...marks.map((m) => DynamoStore.markOp(m)),
      ...unlock.map((u): StoreOp => ({ op: 'update', kind: 'Unit', item: { ...u, ChangeSetID: undefined, ChangeSetStartRevisionNum: undefined, Version: u.Version + 1 }, expectedVersion: u.Version })),
    ]);
  }

  /** The key attributes of an item of a kind. */
  private static keyOf(kind: WriteKind, item: Record<string, unknown>): Record<string, unknown> {
    switch (kind) {
      case 'Space':
      case 'Component':
      case 'User':
      case 'Group':
      case 'Hold':
        return { OrganizationID: item.OrganizationID, [ID_FIELD[kind]]: item[ID_FIELD[kind]] };
      case 'ApiToken':
        return { TokenHash: item.TokenHash };
      case 'Revision':
      case 'Mutation':
        return { UnitID: item.UnitID, RevisionNum: item.RevisionNum };
      case 'Mark':
        return { TagID: item.TagID, UnitID: item.UnitID };
      case 'ReleaseCounter':
        return { Name: releaseCounterName(String(item.TargetID)) };
      case 'Progress':
        return { ChangeOrderID: item.ChangeOrderID, SpaceID: item.SpaceID };
      case 'Outbox':
        return { EventID: item.EventID };
      case 'Job':
      case 'RunningJob':
        return { JobID: item.JobID };
      case 'JobPart':
        return { JobID: item.JobID, Part: item.Part };
      default:
        return { SpaceID: item.SpaceID, [ID_FIELD[kind]]: item[ID_FIELD[kind]] };
    }
  }

  /** Where a kind's slugs are unique, or undefined for kinds without slugs. */
  private static slugScope(kind: WriteKind, item: Record<string, unknown>): string | undefined {
    if (kind === 'Space' || kind === 'Component' || kind === 'User' || kind === 'Group' || kind === 'Hold') return orgScope(String(item.OrganizationID));
    if (kind === 'Revision' || kind === 'Mutation' || kind === 'Mark' || kind === 'ReleaseCounter' || kind === 'Release' || kind === 'Progress' || kind === 'ApiToken' || kind === 'Attestation' || kind === 'Outbox' || kind === 'Job' || kind === 'JobPart' || kind === 'RunningJob') return undefined;
    return spaceScope(String(item.SpaceID));
  }

  async transact(ops: StoreOp[]): Promise<void> {
    // DynamoDB refuses an item over 400 KB only after the call; refuse it here, before anything is sent.
    for (const o of ops) checkItemSize(o.kind, o.item);
    const reasons: string[] = [];
    await this.run(
      (e) =>
        ops.flatMap((o) => {
          // A release counter is stored under the name of its Target's counter.
          const item = o.kind === 'ReleaseCounter' ? { ...(o.item as ReleaseCounter), Name: releaseCounterName((o.item as ReleaseCounter).TargetID) } : (o.item as Record<string, unknown>);
          const entity = e[o.kind === 'ReleaseCounter' ? 'Counter' : o.kind];
          const scope = DynamoStore.slugScope(o.kind, item);
          const slugKind = o.kind.toLowerCase();
          const slug = String(item.Slug ?? '');
          const out: unknown[] = [];
          const add = (op: unknown, reason: string) => {
            out.push(op);
            reasons.push(reason);
          };
          switch (o.op) {
            case 'create':
              if (scope) add(this.claim(scope, slugKind, slug, String(item[ID_FIELD[o.kind as SpaceKind]])), REASONS.slugTaken(o.kind, slug));
              add(entity.create(DynamoStore.clean(entity, item)).commit(), o.kind === 'Revision' || o.kind === 'Mutation' ? REASONS.revisionTaken : o.kind === 'Mark' ? REASONS.marked : `the ${o.kind} already exists`);
              // A Release takes its place in its Space's order with it.
              if (o.kind === 'Release') add(e.ReleaseEntry.put(releaseEntryOf(item)).commit(), 'release entry');
              // A ChangeOrder takes its place in its organization's order.
              if (o.kind === 'ChangeOrder') add(e.ChangeOrderEntry.put(changeOrderEntryOf(item)).commit(), 'change order entry');
              // An Attestation too; one that revokes another marks that one revoked.
              if (o.kind === 'Attestation') for (const op of attestationEntryOps(e, item)) add(op, 'attestation entry');
              break;
            case 'update': {
              add(this.patch(entity, DynamoStore.keyOf(o.kind, item), item, o.expectedVersion), REASONS.stale(o.kind));
              if (scope && o.oldSlug !== undefined && o.oldSlug !== slug) {
                add(this.claim(scope, slugKind, slug, String(item[ID_FIELD[o.kind as SpaceKind]])), REASONS.slugTaken(o.kind, slug));
                add(this.unclaim(scope, slugKind, o.oldSlug), 'slug claim missing');
              }
              break;
            }
            case 'delete': {
              let del = entity.delete(DynamoStore.keyOf(o.kind, item));
              if (typeof item.Version === 'number') del = del.where((a: AnyEntity, op: AnyEntity) => op.eq(a.Version, item.Version));
              add(del.commit(), REASONS.stale(o.kind));
              if (scope) add(this.unclaim(scope, slugKind, slug), 'slug claim missing');
              if (o.kind === 'Release') add(e.ReleaseEntry.delete(releaseEntryOf(item)).commit(), 'release entry');
              if (o.kind === 'Space') {
                add(e.Counter.delete({ Name: releaseEntriesDone(String(item.SpaceID)) }).commit(), 'release entries');
                add(e.Counter.delete({ Name: attestationEntriesDone(String(item.SpaceID)) }).commit(), 'attestation entries');
              }
              break;
            }
            case 'put':
              add(entity.put(DynamoStore.clean(entity, item)).commit(), 'mark');
              break;
          }
          return out;
        }),
      reasons,
    );
  }

  async releaseCounter(targetId: string): Promise<ReleaseCounter> {
    const { data } = await this.db.Counter.get({ Name: releaseCounterName(targetId) }).go();
    return { TargetID: targetId, Value: data?.Value ?? 0, Version: data?.Version ?? 0 };
  }

  async changeOrdersOf(orgId: string, o: { notCompleted?: boolean; notAborted?: boolean } = {}): Promise<ChangeOrder[]> {
    const q = this.db.ChangeOrder.query.byOrg({ OrganizationID: orgId });
    const where = changeOrderFilter(o);
    return (await (where ? q.where(where) : q).go({ pages: 'all' })).data;
  }

  async changeOrdersTouching(orgId: string, spaceId: string, o: { inFlight?: boolean } = {}): Promise<ChangeOrder[]> {
    const found = await this.db.ChangeOrder.query
      .byOrg({ OrganizationID: orgId })
      .where((a: AnyEntity, op: AnyEntity) => {
        const reaches = `(${op.contains(a.InScopeSpaceIDs, spaceId)} OR ${op.eq(a.SpaceID, spaceId)})`;
        return o.inFlight ? `${reaches} AND (${op.notExists(a.Stage)} OR ${op.ne(a.Stage, COMPLETED)}) AND ${op.notExists(a.AbortedReason)}` : reaches;
      })
      .go({ pages: 'all' });
    return found.data;
  }
  async progressOf(changeOrderId: string): Promise<Progress[]> {
    return (await this.db.Progress.query.primary({ ChangeOrderID: changeOrderId }).go({ pages: 'all' })).data;
  }

  async linksInto(unitId: string): Promise<Link[]> {
    return (await this.db.Link.query.byUpstream({ ToUnitID: unitId }).go({ pages: 'all' })).data;
  }

  async putMark(m: MarkWrite): Promise<void> {
    await this.transact([DynamoStore.markOp(m)]);
  }
  async marksOfTag(tagId: string): Promise<Mark[]> {
    return (await this.db.Mark.query.primary({ TagID: tagId }).go({ pages: 'all' })).data;
  }
  async marksOfUnit(unitId: string): Promise<Mark[]> {
    return (await this.db.Mark.query.byUnit({ UnitID: unitId }).go({ pages: 'all' })).data;
  }
}

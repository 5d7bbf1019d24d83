import { createConversions, type EntityItem } from 'electrodb';
import type {
  ApiToken,
  ChangeOrder,
  Component,
  Group,
  Link,
  Mark,
  Progress,
  Mutation,
  Organization,
  Revision,
  Space,
  StoredRevision,
  Tag,
  Target,
  Unit,
  User,
} from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import type {
  MarkWrite,
  MutationPage,
  OrgKind,
  ReleaseCounter,
  RevisionPage,
  SluggedInSpace,
  SpaceKind,
  Store,
  StoreOp,
} from '../ports/store.ts';
import * as E from './entities.ts';
import { changeOrderFilter, ID_FIELD, orgScope, spaceScope, tryCursor, type AnyEntity } from './dynamo-records.ts';
import { DynamoWrites, GLOBAL, REASONS, releaseCounterName } from './dynamo-writes.ts';

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
const REVISION_META = [
  'OrganizationID',
  'SpaceID',
  'UnitID',
  'RevisionID',
  'RevisionNum',
  'Description',
  'Source',
  'UserID',
  'ChangeSetID',
  'DataHash',
  'DataSize',
  'CreatedAt',
] as const;
/** A revision without its data: its hash and validation errors with the rest of what a list reads. */
const REVISION_FACTS = Object.keys(
  (E.Revision as unknown as { schema: { attributes: object } }).schema.attributes,
).filter((a) => a !== 'Data') as never[];
/** Revisions' and mutations' keys (UnitID, RevisionNum) as DynamoDB cursors and back. */
const revisionCursors = createConversions(E.Revision);
const mutationCursors = createConversions(E.Mutation);

/** The Store over one DynamoDB table, through ElectroDB (its transaction path: DynamoWrites; the records beside the entities: DynamoRecords). Key design: see lib/store/README.md. */
export class DynamoStore extends DynamoWrites implements Store {
  async createOrganization(org: Organization, admin: User, token: ApiToken): Promise<void> {
    await this.run(
      (e) => [e.Organization.create(org).commit(), this.claim(GLOBAL, 'organization', org.Slug, org.OrganizationID)],
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
  async tokenById(orgId: string, tokenId: string): Promise<ApiToken | undefined> {
    // The organization's index is keyed by TokenID: the one item, whatever the organization holds.
    return (
      (await this.db.ApiToken.query.byOrg({ OrganizationID: orgId, TokenID: tokenId }).go()).data as ApiToken[]
    ).find((t) => t.TokenID === tokenId);
  }
  async getUser(orgId: string, userId: string): Promise<User | undefined> {
    return ((await this.db.User.get({ OrganizationID: orgId, UserID: userId }).go()).data ?? undefined) as
      User | undefined;
  }
  async listUsers(orgId: string): Promise<User[]> {
    return (await this.db.User.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data as User[];
  }
  async getGroup(orgId: string, groupId: string): Promise<Group | undefined> {
    return ((await this.db.Group.get({ OrganizationID: orgId, GroupID: groupId }).go()).data ?? undefined) as
      Group | undefined;
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
  async spaceAndSlug(
    orgId: string,
    spaceId: string,
    kind: SluggedInSpace,
    slug: string,
  ): Promise<{ space?: Space; id?: string }> {
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
      this.db.Revision.query
        .primary({ UnitID: unit.UnitID })
        .go({ pages: 'all', attributes: ['UnitID', 'RevisionNum'] }),
      this.db.Mutation.query
        .primary({ UnitID: unit.UnitID })
        .go({ pages: 'all', attributes: ['UnitID', 'RevisionNum'] }),
      this.marksOfUnit(unit.UnitID),
    ]);
    if (revs.data.length) await this.db.Revision.delete(revs.data).go();
    if (muts.data.length) await this.db.Mutation.delete(muts.data).go();
    if (marks.length) await this.db.Mark.delete(marks.map((m) => ({ TagID: m.TagID, UnitID: m.UnitID }))).go();
  }
  async getRevision(unitId: string, num: number): Promise<StoredRevision | undefined> {
    const r = (await this.db.Revision.get({ UnitID: unitId, RevisionNum: num }).go()).data;
    return r ? (r as StoredRevision) : undefined;
  }
  getRevisions(keys: { UnitID: string; RevisionNum: number }[]): Promise<StoredRevision[]> {
    return this.revisionBatches<StoredRevision>(keys);
  }
  revisionsAt(keys: { UnitID: string; RevisionNum: number }[]): Promise<Revision[]> {
    return this.revisionBatches<Revision>(keys, REVISION_FACTS);
  }
  /** Revisions by key, these attributes of each: BatchGetItem takes 100 keys a request; ElectroDB splits larger sets, and what comes back unprocessed is read alone. */
  private async revisionBatches<T>(
    keys: { UnitID: string; RevisionNum: number }[],
    attributes?: never[],
  ): Promise<T[]> {
    const out: T[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      const { data, unprocessed } = await this.db.Revision.get(
        keys.slice(i, i + 100).map((k) => ({ UnitID: k.UnitID, RevisionNum: k.RevisionNum })),
      ).go({ unprocessed: 'item', attributes });
      out.push(...(data as T[]));
      for (const u of unprocessed) {
        const r = (
          await this.db.Revision.get({ UnitID: String(u.UnitID), RevisionNum: Number(u.RevisionNum) }).go({
            attributes,
          })
        ).data;
        if (r) out.push(r as T);
      }
    }
    return out;
  }
  async revisionsBetween(unitId: string, after: number, upTo: number): Promise<Revision[]> {
    if (upTo <= after) return [];
    return (
      await this.db.Revision.query
        .primary({ UnitID: unitId })
        .between({ RevisionNum: after + 1 }, { RevisionNum: upTo })
        .go({ pages: 'all', attributes: REVISION_META })
    ).data;
  }
  async listRevisions(unitId: string): Promise<Revision[]> {
    return (await this.db.Revision.query.primary({ UnitID: unitId }).go({ pages: 'all', attributes: REVISION_META }))
      .data;
  }
  async revisionPage(unitId: string, limit: number, after?: string): Promise<RevisionPage> {
    const page = await this.unitPage<Revision>(this.db.Revision, revisionCursors, unitId, limit, after, REVISION_META);
    return { items: page.items.map(({ item, cursor }) => ({ revision: item, cursor })), next: page.next };
  }
  /** A page of what a Unit's revisions changed, newest first, with DynamoDB's cursor over the Unit's Mutation items. */
  async mutationPage(unitId: string, limit: number, after?: string): Promise<MutationPage> {
    const page = await this.unitPage<Mutation>(this.db.Mutation, mutationCursors, unitId, limit, after);
    return { items: page.items.map(({ item, cursor }) => ({ mutation: item, cursor })), next: page.next };
  }
  /** A page of a Unit's items keyed by revision number (revisions, mutations), newest first, with DynamoDB's cursor; another Unit's cursor is Invalid. */
  private async unitPage<T extends { RevisionNum: number }>(
    entity: AnyEntity,
    cursors: {
      fromCursor: { toComposite(c: string): { UnitID?: unknown } | undefined };
      fromComposite: { toCursor(k: { UnitID: string; RevisionNum: number }): string };
    },
    unitId: string,
    limit: number,
    after?: string,
    attributes?: readonly string[],
  ): Promise<{ items: { item: T; cursor: string }[]; next?: string }> {
    if (after !== undefined && tryCursor(() => cursors.fromCursor.toComposite(after))?.UnitID !== unitId)
      throw new Invalid('continue token is not one this list issued');
    const page = await entity.query
      .primary({ UnitID: unitId })
      .go({ order: 'desc', limit, cursor: after ?? null, ...(attributes ? { attributes } : {}) });
    return {
      items: (page.data as T[]).map((item) => ({
        item,
        cursor: cursors.fromComposite.toCursor({ UnitID: unitId, RevisionNum: item.RevisionNum }),
      })),
      next: page.cursor ?? undefined,
    };
  }
  async listMutations(unitId: string): Promise<Mutation[]> {
    return (await this.db.Mutation.query.primary({ UnitID: unitId }).go({ pages: 'all' })).data;
  }

  // Tags, ChangeSets, Filters, Targets: Space-resident, one shape.

  async createInSpace<T extends { SpaceID: string; Slug: string }>(
    kind: SpaceKind,
    item: T,
    also?: { marks?: MarkWrite[] },
  ): Promise<void> {
    await this.transact([{ op: 'create', kind, item }, ...(also?.marks ?? []).map((m) => DynamoStore.markOp(m))]);
  }
  async getInSpace<T>(kind: SpaceKind, spaceId: string, id: string): Promise<T | undefined> {
    return ((await this.e[kind].get({ SpaceID: spaceId, [ID_FIELD[kind]]: id }).go()).data ?? undefined) as
      T | undefined;
  }
  async listInSpace<T>(kind: SpaceKind, spaceId: string): Promise<T[]> {
    return (await this.e[kind].query.primary({ SpaceID: spaceId }).go({ pages: 'all' })).data as T[];
  }
  async updateInSpace<T extends { SpaceID: string; Slug: string }>(
    kind: SpaceKind,
    item: T,
    expectedVersion: number,
    oldSlug: string,
  ): Promise<void> {
    await this.transact([{ op: 'update', kind, item, expectedVersion, oldSlug }]);
  }
  async deleteInSpace<T extends { SpaceID: string; Slug: string }>(kind: SpaceKind, item: T): Promise<void> {
    await this.transact([{ op: 'delete', kind, item }]);
    if (kind === 'Tag') {
      const marks = await this.marksOfTag(String((item as Record<string, unknown>).TagID));
      if (marks.length) await this.db.Mark.delete(marks.map((m) => ({ TagID: m.TagID, UnitID: m.UnitID }))).go();
    }
  }

  async closeChangeSet(
    cs: { SpaceID: string; ChangeSetID: string; Version: number },
    next: object,
    tags: Tag[],
    marks: MarkWrite[],
    unlock: Unit[],
  ): Promise<void> {
    await this.transact([
      { op: 'update', kind: 'ChangeSet', item: next, expectedVersion: cs.Version },
      ...tags.map((t): StoreOp => ({ op: 'create', kind: 'Tag', item: t })),
      ...marks.map((m) => DynamoStore.markOp(m)),
      ...unlock.map((u): StoreOp => ({
        op: 'update',
        kind: 'Unit',
        item: { ...u, ChangeSetID: undefined, ChangeSetStartRevisionNum: undefined, Version: u.Version + 1 },
        expectedVersion: u.Version,
      })),
    ]);
  }

  async releaseCounter(targetId: string): Promise<ReleaseCounter> {
    const { data } = await this.db.Counter.get({ Name: releaseCounterName(targetId) }).go();
    return { TargetID: targetId, Value: data?.Value ?? 0, Version: data?.Version ?? 0 };
  }

  async changeOrdersOf(
    orgId: string,
    o: { notCompleted?: boolean; notAborted?: boolean } = {},
  ): Promise<ChangeOrder[]> {
    const q = this.db.ChangeOrder.query.byOrg({ OrganizationID: orgId });
    const where = changeOrderFilter(o);
    return (await (where ? q.where(where) : q).go({ pages: 'all' })).data;
  }

  async progressOf(changeOrderId: string): Promise<Progress[]> {
    return (await this.db.Progress.query.primary({ ChangeOrderID: changeOrderId }).go({ pages: 'all' })).data;
  }

  async targetsDeploying(orgId: string, deployObject: string): Promise<Target[]> {
    return (await this.db.Target.query.byDeployObject({ DeployKey: `${orgId}#${deployObject}` }).go({ pages: 'all' }))
      .data as Target[];
  }

  async spacesReleasingTo(targetId: string): Promise<Space[]> {
    return (await this.db.Space.query.byTarget({ ReleaseTargetID: targetId }).go({ pages: 'all' })).data as Space[];
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
  async marksAt(unitIds: string[], tagIds: string[]): Promise<Mark[]> {
    const [units, tags] = [[...new Set(unitIds)], [...new Set(tagIds)]];
    const read = await this.batchRead<Mark>(
      this.db.Mark,
      units.flatMap((UnitID) => tags.map((TagID) => ({ TagID, UnitID }))),
    );
    return read.sort((a, b) => (a.UnitID < b.UnitID ? -1 : a.UnitID > b.UnitID ? 1 : a.TagID < b.TagID ? -1 : 1));
  }
}

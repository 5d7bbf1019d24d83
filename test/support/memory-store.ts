import { ORG_SLUGGED, UNSLUGGED } from '../../lib/store/table.ts';
import type {
  ApiToken,
  Attestation,
  AttestationView,
  ChangeOrder,
  Component,
  Group,
  Hold,
  DeployWindow,
  Notification,
  NotificationDelivery,
  Link,
  Mark,
  Mutation,
  Organization,
  Progress,
  Release,
  Revision,
  Space,
  StoredRevision,
  Tag,
  Target,
  Unit,
  User,
} from '../../lib/model/entities.ts';
import { Conflict, Invalid, WriteRefused } from '../../lib/model/errors.ts';
import { landGroups } from '../../lib/util/groups.ts';
import type {
  GroupOutcome,
  IdempotencyRecord,
  SlugPage,
  MarkWrite,
  OrgKind,
  OutboxItem,
  ReleaseCounter,
  SluggedInSpace,
  SpaceKind,
  Store,
  StoreOp,
  WriteKind,
} from '../../lib/ports/store.ts';
import type { JobPartRecord, JobPlanRecord, JobRecord } from '../../lib/ports/jobs.ts';
import { TRANSACTION_MAX_ITEMS } from '../../lib/util/chunk.ts';
import { inForce } from '../../lib/model/holds.ts';
import { inFlight, releaseToRecord } from '../../lib/model/change-orders.ts';

type Item = Record<string, any>;

const ID: Record<string, string> = {
  User: 'UserID',
  Group: 'GroupID',
  ApiToken: 'TokenHash',
  Attestation: 'AttestationID',
  Invocation: 'InvocationID',
  Space: 'SpaceID',
  Component: 'ComponentID',
  Unit: 'UnitID',
  Tag: 'TagID',
  ChangeSet: 'ChangeSetID',
  Filter: 'FilterID',
  Target: 'TargetID',
  Link: 'LinkID',
  Release: 'ReleaseID',
  ChangeWorkflow: 'ChangeWorkflowID',
  ChangeOrder: 'ChangeOrderID',
  Outbox: 'EventID',
  Job: 'JobID',
  Hold: 'HoldID',
  Window: 'WindowID',
  Notification: 'NotificationID',
};

/** The key of an item of a kind, as the table would have it. */
function keyOf(kind: WriteKind, i: Item): string {
  switch (kind) {
    case 'Revision':
    case 'Mutation':
      return `${i.UnitID}#${i.RevisionNum}`;
    case 'Mark':
      return `${i.TagID}#${i.UnitID}`;
    case 'ReleaseCounter':
      return i.TargetID;
    case 'Progress':
      return `${i.ChangeOrderID}#${i.SpaceID}`;
    case 'NotificationDelivery':
      return `${i.NotificationID}#${i.At}#${i.DeliveryID}`;
    case 'JobPart':
      return `${i.JobID}#${i.Part}`;
    case 'JobPlan':
      return `${i.JobID}#${i.Chunk}`;
    default:
      return i[ID[kind]!];
  }
}

/** Where a kind's slugs are unique, as the table's writes have it (lib/store/table.ts says which kinds are which). */
function scopeOf(kind: WriteKind, i: Item): string | undefined {
  if (ORG_SLUGGED.has(kind)) return `org:${i.OrganizationID}`;
  if (UNSLUGGED.has(kind)) return undefined;
  return `space:${i.SpaceID}`;
}

const copy = <T>(x: T): T => structuredClone(x);

/** A page of `all` from `after`, this store's own cursor (the offset after an item), each item as `wrap` names it. */
function offsetPage<T, W>(
  all: T[],
  limit: number,
  after: string | undefined,
  wrap: (item: T) => W,
): { items: (W & { cursor: string })[]; next?: string } {
  const start = after === undefined ? 0 : Number(Buffer.from(after, 'base64url').toString());
  if (!Number.isInteger(start)) throw new Invalid('continue token is not one this list issued');
  const cursor = (n: number) => Buffer.from(String(n)).toString('base64url');
  const items = all.slice(start, start + limit).map((x, i) => ({ ...wrap(x), cursor: cursor(start + i + 1) }));
  return { items, next: start + limit < all.length ? cursor(start + limit) : undefined };
}

/**
 * An in-memory Store with the table's write rules: a transaction lands whole or not at all, a create
 * fails on an existing item or a taken slug, an update or delete needs the Version read. For unit tests
 * of operations, so they run without DynamoDB.
 */
export class MemoryStore implements Store {
  readonly items = new Map<WriteKind, Map<string, Item>>();
  readonly slugs = new Map<string, string>();
  /** Every transaction run, in order (what a test can assert was written together). */
  readonly transactions: StoreOp[][] = [];

  private table(kind: WriteKind): Map<string, Item> {
    let t = this.items.get(kind);
    if (!t) this.items.set(kind, (t = new Map()));
    return t;
  }
  private all<T>(kind: WriteKind, where: (i: Item) => boolean = () => true): T[] {
    return [...this.table(kind).values()].filter(where).map((i) => copy(i) as T);
  }
  private one<T>(kind: WriteKind, key: string): T | undefined {
    const i = this.table(kind).get(key);
    return i ? (copy(i) as T) : undefined;
  }

  async transact(ops: StoreOp[]): Promise<void> {
    if (ops.length > TRANSACTION_MAX_ITEMS)
      throw new Conflict(
        `this write touches ${ops.length} items, more than one transaction can hold (${TRANSACTION_MAX_ITEMS})`,
      );
    // Check every condition first, then write: all or nothing.
    const slugs = new Map(this.slugs);
    for (const [at, o] of ops.entries()) {
      const refused = (message: string) => new WriteRefused(message, at);
      const item = o.item as Item;
      const existing = this.table(o.kind).get(keyOf(o.kind, item));
      const scope = scopeOf(o.kind, item);
      const slugKey = scope ? `${scope}#${o.kind}#${item.Slug}` : undefined;
      if (o.op === 'create') {
        if (existing)
          throw refused(
            o.kind === 'Mark'
              ? 'the Tag already marks another revision of that Unit; use --move to move it'
              : `the ${o.kind} already exists`,
          );
        if (slugKey) {
          if (slugs.has(slugKey)) throw refused(`a ${o.kind} with slug '${item.Slug}' already exists`);
          slugs.set(slugKey, keyOf(o.kind, item));
        }
      } else if (o.op === 'update') {
        if (!existing || existing.Version !== o.expectedVersion)
          throw refused(
            `the ${o.kind} was changed by someone else since it was read (its Version no longer matches); read it again and retry`,
          );
        if (scope && o.oldSlug !== undefined && o.oldSlug !== item.Slug) {
          if (slugs.has(slugKey!)) throw refused(`a ${o.kind} with slug '${item.Slug}' already exists`);
          slugs.delete(`${scope}#${o.kind}#${o.oldSlug}`);
          slugs.set(slugKey!, keyOf(o.kind, item));
        }
      } else if (o.op === 'delete') {
        if (!existing || (typeof item.Version === 'number' && existing.Version !== item.Version))
          throw refused(`the ${o.kind} was changed by someone else since it was read`);
        if (slugKey) slugs.delete(slugKey);
      }
    }
    for (const o of ops) {
      const item = copy(o.item as Item);
      for (const k of Object.keys(item)) if (item[k] === undefined) delete item[k];
      if (o.op === 'delete') this.table(o.kind).delete(keyOf(o.kind, item));
      else this.table(o.kind).set(keyOf(o.kind, item), item);
    }
    this.slugs.clear();
    for (const [k, v] of slugs) this.slugs.set(k, v);
    this.transactions.push(copy(ops));
  }

  /** Groups packed into transactions of at most TRANSACTION_MAX_ITEMS ops, as the table packs them (items there). */
  transactGroups(groups: StoreOp[][], o: { tail?: number } = {}): Promise<GroupOutcome[]> {
    return landGroups(
      groups,
      (g) => g.length,
      TRANSACTION_MAX_ITEMS,
      (part) => this.transact(part.flat()),
      o.tail,
    );
  }

  async createOrganization(org: Organization, admin: User, token: ApiToken): Promise<void> {
    this.orgs.set(org.OrganizationID, org);
    await this.transact([
      { op: 'create', kind: 'User', item: admin },
      { op: 'create', kind: 'ApiToken', item: token },
    ]);
  }
  private readonly orgs = new Map<string, Organization>();
  getToken = async (hash: string) => this.one<ApiToken>('ApiToken', hash);
  tokensOf = async (orgId: string) => this.all<ApiToken>('ApiToken', (t) => t.OrganizationID === orgId);
  tokenById = async (orgId: string, tokenId: string) => (await this.tokensOf(orgId)).find((t) => t.TokenID === tokenId);
  tokensOfUser = async (orgId: string, userId: string) =>
    (await this.tokenPage(orgId, Number.MAX_SAFE_INTEGER, undefined, { userId })).items.map((x) => x.token);
  /** Oldest first (CreatedAt, then ID); a cursor is the offset after an item (this store's own cursor). */
  tokenPage = async (orgId: string, limit: number, after?: string, o: { userId?: string } = {}) => {
    const all = (await this.tokensOf(orgId))
      .filter((t) => o.userId === undefined || (t.UserID ?? '') === o.userId)
      .sort((a, b) =>
        a.CreatedAt < b.CreatedAt ? -1 : a.CreatedAt > b.CreatedAt ? 1 : a.TokenID < b.TokenID ? -1 : 1,
      );
    return offsetPage(all, limit, after, (token) => ({ token }));
  };
  getUser = async (orgId: string, id: string) =>
    this.all<User>('User', (u) => u.OrganizationID === orgId && u.UserID === id)[0];
  listUsers = async (orgId: string) => this.all<User>('User', (u) => u.OrganizationID === orgId);
  getGroup = async (orgId: string, id: string) =>
    this.all<Group>('Group', (g) => g.OrganizationID === orgId && g.GroupID === id)[0];
  listGroups = async (orgId: string) => this.all<Group>('Group', (g) => g.OrganizationID === orgId);
  async idInOrg(orgId: string, kind: OrgKind, slug: string) {
    return this.slugs.get(`org:${orgId}#${kind}#${slug}`);
  }
  async firstOrganization(): Promise<Organization | undefined> {
    return [...this.orgs.values()][0];
  }

  async spaceIdBySlug(orgId: string, slug: string) {
    return this.slugs.get(`org:${orgId}#Space#${slug}`);
  }
  async componentIdBySlug(orgId: string, slug: string) {
    return this.slugs.get(`org:${orgId}#Component#${slug}`);
  }
  async idInSpace(spaceId: string, kind: SluggedInSpace, slug: string) {
    return this.slugs.get(`space:${spaceId}#${kind}#${slug}`);
  }

  createSpace = (space: Space) => this.transact([{ op: 'create', kind: 'Space', item: space }]);
  spaceAndSlug = async (orgId: string, spaceId: string, kind: SluggedInSpace, slug: string) => ({
    space: await this.getSpace(orgId, spaceId),
    id: await this.idInSpace(spaceId, kind, slug),
  });
  getSpace = async (orgId: string, id: string) =>
    this.all<Space>('Space', (s) => s.OrganizationID === orgId && s.SpaceID === id)[0];
  listSpaces = async (orgId: string) => this.all<Space>('Space', (s) => s.OrganizationID === orgId);
  updateSpace = (space: Space, expectedVersion: number, oldSlug: string) =>
    this.transact([{ op: 'update', kind: 'Space', item: space, expectedVersion, oldSlug }]);
  deleteSpace = (space: Space) => this.transact([{ op: 'delete', kind: 'Space', item: space }]);
  createComponent = (c: Component) => this.transact([{ op: 'create', kind: 'Component', item: c }]);
  getComponent = async (orgId: string, id: string) =>
    this.all<Component>('Component', (c) => c.OrganizationID === orgId && c.ComponentID === id)[0];
  listComponents = async (orgId: string) => this.all<Component>('Component', (c) => c.OrganizationID === orgId);

  getUnit = async (spaceId: string, id: string) =>
    this.all<Unit>('Unit', (u) => u.SpaceID === spaceId && u.UnitID === id)[0];
  listUnits = async (spaceId: string) => this.all<Unit>('Unit', (u) => u.SpaceID === spaceId);
  updateUnit = (unit: Unit, expectedVersion: number, oldSlug: string) =>
    this.transact([{ op: 'update', kind: 'Unit', item: unit, expectedVersion, oldSlug }]);
  async deleteUnit(unit: Unit): Promise<void> {
    await this.transact([{ op: 'delete', kind: 'Unit', item: unit }]);
    for (const kind of ['Revision', 'Mutation', 'Mark'] as const)
      for (const [k, i] of this.table(kind)) if (i.UnitID === unit.UnitID) this.table(kind).delete(k);
  }
  getRevision = async (unitId: string, num: number) => this.one<StoredRevision>('Revision', `${unitId}#${num}`);
  getRevisions = async (keys: { UnitID: string; RevisionNum: number }[]) =>
    keys.flatMap((k) => this.one<StoredRevision>('Revision', `${k.UnitID}#${k.RevisionNum}`) ?? []);
  revisionsAt = async (keys: { UnitID: string; RevisionNum: number }[]) =>
    (await this.getRevisions(keys)).map(({ Data: _d, ...r }) => r as Revision);
  revisionsBetween = async (unitId: string, after: number, upTo: number) =>
    (await this.listRevisions(unitId)).filter((r) => r.RevisionNum > after && r.RevisionNum <= upTo);
  listRevisions = async (unitId: string) =>
    this.all<StoredRevision>('Revision', (r) => r.UnitID === unitId)
      .sort((a, b) => a.RevisionNum - b.RevisionNum)
      .map(({ Data: _d, ...r }) => r as Revision);
  /** Newest first; a cursor is the offset after an item (this store's own cursor). */
  revisionPage = async (unitId: string, limit: number, after?: string) => {
    const all = (await this.listRevisions(unitId)).reverse();
    return offsetPage(all, limit, after, (revision) => ({ revision }));
  };
  /** Newest first; a cursor is the offset after an item (this store's own cursor). */
  mutationPage = async (unitId: string, limit: number, after?: string) => {
    const all = (await this.listMutations(unitId)).reverse();
    return offsetPage(all, limit, after, (mutation) => ({ mutation }));
  };
  listMutations = async (unitId: string) =>
    this.all<Mutation>('Mutation', (r) => r.UnitID === unitId).sort((a, b) => a.RevisionNum - b.RevisionNum);

  createInSpace = async <T extends { SpaceID: string; Slug: string }>(
    kind: SpaceKind,
    item: T,
    also?: { marks?: MarkWrite[] },
  ) =>
    this.transact([
      { op: 'create', kind, item },
      ...(also?.marks ?? []).map((m): StoreOp => ({ op: 'create', kind: 'Mark', item: m })),
    ]);
  getInSpace = async <T>(kind: SpaceKind, spaceId: string, id: string) =>
    this.all<T>(kind, (i) => i.SpaceID === spaceId && i[ID[kind]!] === id)[0];
  listInSpace = async <T>(kind: SpaceKind, spaceId: string) => this.all<T>(kind, (i) => i.SpaceID === spaceId);
  updateInSpace = <T extends { SpaceID: string; Slug: string }>(
    kind: SpaceKind,
    item: T,
    expectedVersion: number,
    oldSlug: string,
  ) => this.transact([{ op: 'update', kind, item, expectedVersion, oldSlug }]);
  deleteInSpace = <T extends { SpaceID: string; Slug: string }>(kind: SpaceKind, item: T) =>
    this.transact([{ op: 'delete', kind, item }]);
  closeChangeSet = (
    cs: { SpaceID: string; ChangeSetID: string; Version: number },
    next: object,
    tags: Tag[],
    marks: MarkWrite[],
    unlock: Unit[],
  ) =>
    this.transact([
      { op: 'update', kind: 'ChangeSet', item: next, expectedVersion: cs.Version },
      ...tags.map((t): StoreOp => ({ op: 'create', kind: 'Tag', item: t })),
      ...marks.map((m): StoreOp => ({ op: 'create', kind: 'Mark', item: m })),
      ...unlock.map((u): StoreOp => ({
        op: 'update',
        kind: 'Unit',
        item: { ...u, ChangeSetID: undefined, ChangeSetStartRevisionNum: undefined, Version: u.Version + 1 },
        expectedVersion: u.Version,
      })),
    ]);

  linksInto = async (unitId: string) => this.all<Link>('Link', (l) => l.ToUnitID === unitId);
  targetsDeploying = async (orgId: string, deployObject: string) =>
    this.all<Target>('Target', (t) => t.OrganizationID === orgId && t.DeployObject === deployObject);
  spacesReleasingTo = async (targetId: string) => this.all<Space>('Space', (x) => x.ReleaseTargetID === targetId);
  /** Newest first by number; a cursor is the offset after an item (this store's own cursor). */
  releasePage = async (spaceId: string, limit: number, after?: string) => {
    const all = this.all<Release>('Release', (r) => r.SpaceID === spaceId).sort(
      (a, b) => b.ReleaseNum - a.ReleaseNum || (a.ReleaseID < b.ReleaseID ? 1 : -1),
    );
    return offsetPage(all, limit, after, (release) => ({ release }));
  };
  releasesAtChangeOrder = async (spaceId: string, changeOrderId: string) =>
    this.all<Release>('Release', (r) => r.SpaceID === spaceId && r.ChangeOrderID === changeOrderId);
  /** A Space's attestations, each with RevokedBy when a record among them revoked it. */
  private attestationViews(spaceId: string): AttestationView[] {
    const all = this.all<Attestation>('Attestation', (a) => a.SpaceID === spaceId);
    const revokedBy = new Map(
      all.filter((a) => a.RevokedAttestationID).map((a) => [a.RevokedAttestationID!, a.AttestationID]),
    );
    return all.map((a) => (revokedBy.has(a.AttestationID) ? { ...a, RevokedBy: revokedBy.get(a.AttestationID) } : a));
  }
  /** Newest first (CreatedAt, then ID), each with RevokedBy; a cursor is the offset after an item. */
  attestationPage = async (spaceId: string, limit: number, after?: string) => {
    const all = this.attestationViews(spaceId).sort((a, b) =>
      a.CreatedAt < b.CreatedAt ? 1 : a.CreatedAt > b.CreatedAt ? -1 : a.AttestationID < b.AttestationID ? 1 : -1,
    );
    return offsetPage(all, limit, after, (attestation) => ({ attestation }));
  };
  attestationById = async (spaceId: string, attestationId: string) =>
    this.attestationViews(spaceId).find((x) => x.AttestationID === attestationId);
  attestationsNaming = async (
    spaceId: string,
    units: { UnitID: string; DataHash: string }[],
    o: { anyContent?: boolean } = {},
  ) => {
    const asked = new Set(units.map((u) => (o.anyContent ? u.UnitID : `${u.UnitID}#${u.DataHash}`)));
    return this.attestationViews(spaceId).filter((a) =>
      a.Revisions.some((r) => asked.has(o.anyContent ? r.UnitID : `${r.UnitID}#${r.DataHash}`)),
    );
  };
  changeOrdersOf = async (orgId: string, o: { notCompleted?: boolean; notAborted?: boolean } = {}) =>
    this.all<ChangeOrder>(
      'ChangeOrder',
      (c) =>
        c.OrganizationID === orgId &&
        (!o.notCompleted || c.Stage !== 'Completed') &&
        (!o.notAborted || !c.AbortedReason),
    );
  /** In slug order, then by ID; a cursor is the offset after an item (this store's own cursor). */
  changeOrderPage = async (
    orgId: string,
    limit: number,
    after?: string,
    o: { notCompleted?: boolean; notAborted?: boolean } = {},
  ) => {
    const all = (await this.changeOrdersOf(orgId, o)).sort((a, b) =>
      a.Slug < b.Slug ? -1 : a.Slug > b.Slug ? 1 : a.ChangeOrderID < b.ChangeOrderID ? -1 : 1,
    );
    return offsetPage(all, limit, after, (changeOrder) => ({ changeOrder }));
  };
  changeOrdersReaching = async (orgId: string, spaceId: string, o: { inFlight: true } | { toRelease: true }) =>
    this.all<Progress>(
      'Progress',
      (p) => p.SpaceID === spaceId && !!p.BaseSpaceID && (!('toRelease' in o) || releaseToRecord(p)),
    )
      .flatMap((progress) =>
        this.all<ChangeOrder>(
          'ChangeOrder',
          (c) => c.ChangeOrderID === progress.ChangeOrderID && c.SpaceID === progress.BaseSpaceID,
        ).map((co) => ({ co, progress })),
      )
      .filter(({ co }) => co.OrganizationID === orgId && (!('inFlight' in o) || inFlight(co)))
      .sort((a, b) => (a.co.ChangeOrderID < b.co.ChangeOrderID ? -1 : 1));
  progressAt = async (coId: string, spaceId: string) =>
    this.all<Progress>('Progress', (p) => p.ChangeOrderID === coId && p.SpaceID === spaceId)[0];
  progressOf = async (coId: string) => this.all<Progress>('Progress', (p) => p.ChangeOrderID === coId);
  releaseCounter = async (targetId: string): Promise<ReleaseCounter> =>
    this.one<ReleaseCounter>('ReleaseCounter', targetId) ?? { TargetID: targetId, Value: 0, Version: 0 };
  putMark = (m: MarkWrite) =>
    this.transact([
      {
        op: m.Move ? 'put' : 'create',
        kind: 'Mark',
        item: {
          TagID: m.TagID,
          UnitID: m.UnitID,
          SpaceID: m.SpaceID,
          RevisionNum: m.RevisionNum,
          UpdatedAt: m.UpdatedAt,
        },
      } as StoreOp,
    ]);
  private byKey = (a: Mark, b: Mark, first: 'UnitID' | 'TagID', then: 'UnitID' | 'TagID') =>
    a[first] < b[first] ? -1 : a[first] > b[first] ? 1 : a[then] < b[then] ? -1 : 1;
  marksOfTag = async (tagId: string) =>
    this.all<Mark>('Mark', (m) => m.TagID === tagId).sort((a, b) => this.byKey(a, b, 'UnitID', 'TagID'));
  marksOfUnit = async (unitId: string) =>
    this.all<Mark>('Mark', (m) => m.UnitID === unitId).sort((a, b) => this.byKey(a, b, 'TagID', 'UnitID'));
  marksAt = async (unitIds: string[], tagIds: string[]) => {
    const [units, tags] = [new Set(unitIds), new Set(tagIds)];
    return this.all<Mark>('Mark', (m) => units.has(m.UnitID) && tags.has(m.TagID)).sort((a, b) =>
      this.byKey(a, b, 'UnitID', 'TagID'),
    );
  };
  readonly processed = new Map<string, number>();
  readonly idempotency = new Map<string, IdempotencyRecord>();
  getIdempotency = async (o: string, u: string, k: string) => copy(this.idempotency.get(`${o}#${u}#${k}`));
  claimIdempotency = async (r: IdempotencyRecord) => {
    const id = `${r.OrganizationID}#${r.UserID}#${r.Key}`;
    if (this.idempotency.has(id)) throw new Conflict(`Idempotency-Key '${r.Key}' is taken`);
    this.idempotency.set(id, copy(r));
  };
  finishIdempotency = async (r: IdempotencyRecord) =>
    void this.idempotency.set(`${r.OrganizationID}#${r.UserID}#${r.Key}`, copy(r));
  releaseIdempotency = async (o: string, u: string, k: string) => void this.idempotency.delete(`${o}#${u}#${k}`);
  pendingEvents = async (limit: number) =>
    this.all<OutboxItem>('Outbox')
      .sort((a, b) => (a.CreatedAt + a.EventID < b.CreatedAt + b.EventID ? -1 : 1))
      .slice(0, limit);
  deletePendingEvent = async (eventId: string) => void this.table('Outbox').delete(eventId);
  slugPage = async (
    scope: { orgId: string } | { spaceId: string },
    kind: string,
    limit: number,
    after?: string,
  ): Promise<SlugPage> => {
    const prefix = `${'orgId' in scope ? `org:${scope.orgId}` : `space:${scope.spaceId}`}#${kind}#`;
    const cursor = (slug: string) => Buffer.from(JSON.stringify({ prefix, slug })).toString('base64url');
    let from = '';
    if (after !== undefined) {
      const c = JSON.parse(Buffer.from(after, 'base64url').toString()) as { prefix: string; slug: string };
      if (c.prefix !== prefix) throw new Invalid('continue token is not one this list issued');
      from = c.slug;
    }
    const all = [...this.slugs.entries()]
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, key]) => ({ Slug: k.slice(prefix.length), ID: key }))
      .filter((c) => c.Slug > from)
      .sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
    const claims = all.slice(0, limit).map((c) => ({ ...c, Cursor: cursor(c.Slug) }));
    return { claims, next: all.length > limit ? claims.at(-1)!.Cursor : undefined };
  };
  getMany = async <T>(kind: string, _scopeId: string, ids: string[]) =>
    ids.map((id) => this.one<T>(kind as WriteKind, id)).filter((x): x is T => !!x);
  listHolds = async (orgId: string, o: { inForceAt?: Date } = {}) =>
    this.all<Hold>(
      'Hold',
      (h) => h.OrganizationID === orgId && (!o.inForceAt || inForce(h as unknown as Hold, o.inForceAt)),
    );
  getHold = async (orgId: string, id: string) =>
    this.all<Hold>('Hold', (h) => h.OrganizationID === orgId && h.HoldID === id)[0];
  listWindows = async (orgId: string) => this.all<DeployWindow>('Window', (w) => w.OrganizationID === orgId);
  getWindow = async (orgId: string, id: string) =>
    this.all<DeployWindow>('Window', (w) => w.OrganizationID === orgId && w.WindowID === id)[0];
  listNotifications = async (orgId: string) =>
    this.all<Notification>('Notification', (n) => n.OrganizationID === orgId);
  notificationsWatchingBlocked = async () => this.all<Notification>('Notification', (n) => n.On.includes('Blocked'));
  changeOrdersInFlight = async (orgId: string, limit: number) =>
    this.all<ChangeOrder>('ChangeOrder', (co) => co.OrganizationID === orgId && inFlight(co))
      .sort((a, b) => (a.ChangeOrderID < b.ChangeOrderID ? -1 : 1))
      .slice(0, limit);
  getNotification = async (orgId: string, id: string) =>
    this.all<Notification>('Notification', (n) => n.OrganizationID === orgId && n.NotificationID === id)[0];
  deliveriesOf = async (id: string, limit: number) =>
    this.all<NotificationDelivery>('NotificationDelivery', (d) => d.NotificationID === id)
      .sort((a, b) => (a.At < b.At ? 1 : -1))
      .slice(0, limit);
  getJob = async (jobId: string) => this.one<JobRecord>('Job', jobId);
  jobPlan = async (jobId: string) =>
    this.all<JobPlanRecord>('JobPlan', (p) => p.JobID === jobId).sort((a, b) => a.Chunk - b.Chunk);
  jobParts = async (jobId: string) =>
    this.all<JobPartRecord>('JobPart', (p) => p.JobID === jobId).sort((a, b) => (a.Part < b.Part ? -1 : 1));
  jobPartDone = async (jobId: string, part: string) => this.table('JobPart').has(`${jobId}#${part}`);
  runningJobs = async () =>
    this.all<{ JobID: string; State: string }>('Job')
      .filter((j) => j.State === 'Running')
      .map((j) => j.JobID);
  eventProcessed = async (eventId: string, consumer: string) => this.processed.has(`${eventId}#${consumer}`);
  markEventProcessed = async (eventId: string, consumer: string, expiresAtEpoch: number) =>
    void this.processed.set(`${eventId}#${consumer}`, expiresAtEpoch);
}

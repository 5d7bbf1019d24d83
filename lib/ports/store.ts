import type { JobPartRecord, JobPlanRecord, JobRecord } from './jobs.ts';
import type {
  ApiToken,
  AttestationView,
  ChangeOrder,
  Component,
  Group,
  DeployWindow,
  Notification,
  NotificationDelivery,
  Hold,
  Link,
  Mark,
  Progress,
  Mutation,
  Organization,
  Release,
  Revision,
  Space,
  StoredRevision,
  Tag,
  Target,
  Unit,
  User,
} from '../model/entities.ts';
import type { Conflict } from '../model/errors.ts';

/** The kinds of Space-resident entity stored alike: an ID, a slug unique in the Space, a Version. */
export type SpaceKind =
  | 'Tag'
  | 'ChangeSet'
  | 'Filter'
  | 'Target'
  | 'Link'
  | 'Release'
  | 'ChangeWorkflow'
  | 'ChangeOrder'
  | 'Attestation'
  | 'Invocation';

/** The kinds that live under the organization, slugs unique in it. */
export type OrgKind = 'User' | 'Group' | 'Hold' | 'Window' | 'Notification';

/** The kinds whose slugs are unique within a Space (a Unit's too). */
export type SluggedInSpace = SpaceKind | 'Unit';

/** A write to place a mark: a Tag's mark on one revision of a Unit. */
export interface MarkWrite {
  TagID: string;
  UnitID: string;
  SpaceID: string;
  RevisionNum: number;
  UpdatedAt: string;
  /** Replace a mark already there (`--move`); otherwise an existing mark on another revision is a conflict. */
  Move?: boolean;
}

/** A Target's release counter: the last ReleaseNum given out. */
export interface ReleaseCounter {
  TargetID: string;
  Value: number;
  /** 0 when it was never written. */
  Version: number;
}

/** The kinds a transaction can write. */
export type WriteKind =
  | 'Space'
  | 'Component'
  | 'Unit'
  | 'Revision'
  | 'Mutation'
  | 'Mark'
  | 'ReleaseCounter'
  | 'Progress'
  | 'ApiToken'
  | 'Outbox'
  | 'Job'
  | 'JobPart'
  | 'JobPlan'
  | 'NotificationDelivery'
  | OrgKind
  | SpaceKind;

/** A page of slug claims: each with the cursor that resumes right after it, and the page's own cursor if more may follow. */
export interface SlugPage {
  claims: { ID: string; Slug: string; Cursor: string }[];
  next?: string;
}

/**
 * A page of a list the store keeps in order, read with DynamoDB's own cursor: each item under its name
 * with the cursor that resumes right after it, and the page's own cursor if more may follow.
 */
export type StorePage<K extends string, T> = { items: ({ [P in K]: T } & { cursor: string })[]; next?: string };
/** A Space's Releases, newest first. */
export type ReleasePage = StorePage<'release', Release>;
/** A Unit's revisions, newest first. */
export type RevisionPage = StorePage<'revision', Revision>;
/** What a Unit's revisions changed, newest first. */
export type MutationPage = StorePage<'mutation', Mutation>;
/** An organization's ChangeOrders in slug order (then by ID). */
export type ChangeOrderPage = StorePage<'changeOrder', ChangeOrder>;
/** A page of an organization's tokens. */
export type TokenPage = StorePage<'token', ApiToken>;
/** A Space's attestations, newest first. */
export type AttestationPage = StorePage<'attestation', AttestationView>;

/** A request made with an Idempotency-Key, and its answer once it has one. */
export interface IdempotencyRecord {
  OrganizationID: string;
  UserID: string;
  Key: string;
  RequestHash: string;
  State: 'InProgress' | 'Done';
  Status?: number;
  /** The answer's body, gzipped and base64-encoded. */
  Body?: string;
  Headers?: Record<string, string>;
  CreatedAt: string;
  ExpiresAtEpoch: number;
}

/** An event in the outbox: what the bus will carry, written with the change it reports. */
export interface OutboxItem {
  EventID: string;
  OrganizationID: string;
  Source: string;
  DetailType: string;
  Detail: Record<string, unknown>;
  CreatedAt: string;
}

/**
 * One item of a multi-item write. `create` also claims the item's slug (fails if taken, or if the item
 * exists); `update` is guarded by `expectedVersion` and moves the slug claim on a rename; `delete` is
 * guarded by the item's Version and releases its slug; `put` writes a Mark whatever was there.
 */
export type StoreOp =
  | { op: 'create'; kind: WriteKind; item: object }
  /**
   * `before`: the item as read at `expectedVersion`; given, only the fields that differ from it are
   * written (the Version guard makes that the same write, smaller).
   */
  | { op: 'update'; kind: WriteKind; item: object; expectedVersion: number; oldSlug?: string; before?: object }
  | { op: 'delete'; kind: WriteKind; item: object }
  | { op: 'put'; kind: 'Mark'; item: object };

/** What became of one group of ops written together (`transactGroups`): it landed, it was refused (why), or it was not sent. */
export type GroupOutcome = 'landed' | 'skipped' | Conflict;

/** The table as a whole: multi-item writes, and lists by slug of any kind. */
export interface TableStore {
  /** Writes every op or none, as one transaction (at most TRANSACTION_MAX_ITEMS items, slug claims included). */
  transact(ops: StoreOp[]): Promise<void>;
  /**
   * Writes groups of ops, each whole or not at all, in as few transactions as they fit, in order: a
   * group refused (its condition failed, or it raced another write) is left out with its Conflict and
   * the rest land. The last `tail` groups are written only while every group before them landed.
   */
  transactGroups(groups: StoreOp[][], o?: { tail?: number }): Promise<GroupOutcome[]>;
  /**
   * One page of the slugs of a kind in an organization (`Space`, `Component`, `User`, `Group`) or a Space
   * (every other kind), in slug order, read from the slug claims with DynamoDB's own cursor: `after` is
   * a cursor this returned (the page's `next`, or a claim's own `Cursor`: resume right after it).
   * Invalid when `after` is not a cursor of this list.
   */
  slugPage(
    scope: { orgId: string } | { spaceId: string },
    kind: OrgKind | SluggedInSpace | 'Space' | 'Component',
    limit: number,
    after?: string,
  ): Promise<SlugPage>;
  /** The items of a kind with these IDs (those that exist, in any order), in as few requests as the store allows. */
  getMany<T>(kind: OrgKind | SluggedInSpace | 'Space' | 'Component', scopeId: string, ids: string[]): Promise<T[]>;
}

/** Organizations, their users, groups and tokens, and the Idempotency-Keys their requests claim. */
export interface PeopleStore {
  createOrganization(org: Organization, admin: User, token: ApiToken): Promise<void>;
  firstOrganization(): Promise<Organization | undefined>;
  /** The token with this secret's hash, if any (revoked and expired ones too: the caller decides). */
  getToken(tokenHash: string): Promise<ApiToken | undefined>;
  /** An organization's tokens. */
  tokensOf(orgId: string): Promise<ApiToken[]>;
  /** One token of an organization by its ID: read by key, not found among the organization's tokens. */
  tokenById(orgId: string, tokenId: string): Promise<ApiToken | undefined>;
  /** One user's tokens, oldest first (a service token is no user's): read by the index of their own, not among the organization's. */
  tokensOfUser(orgId: string, userId: string): Promise<ApiToken[]>;
  /** A page of an organization's tokens, oldest first (CreatedAt, then ID), from DynamoDB's own cursor; with `userId`, only that user's. */
  tokenPage(orgId: string, limit: number, after?: string, o?: { userId?: string }): Promise<TokenPage>;
  getUser(orgId: string, userId: string): Promise<User | undefined>;
  listUsers(orgId: string): Promise<User[]>;
  getGroup(orgId: string, groupId: string): Promise<Group | undefined>;
  listGroups(orgId: string): Promise<Group[]>;
  /** The User or Group of an organization with this slug, if any. */
  idInOrg(orgId: string, kind: OrgKind, slug: string): Promise<string | undefined>;
  /** The request an Idempotency-Key was first used for, if any. */
  getIdempotency(orgId: string, userId: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Claims a key for a request (Conflict when the key is taken). */
  claimIdempotency(record: IdempotencyRecord): Promise<void>;
  /** Records a claimed request's answer. */
  finishIdempotency(record: IdempotencyRecord): Promise<void>;
  /** Gives a key back (its request failed without an answer worth keeping). */
  releaseIdempotency(orgId: string, userId: string, key: string): Promise<void>;
}

/** Spaces, Components, Units and their revisions, mutations and marks, Links, Targets and the other Space-resident kinds. */
export interface VariantStore {
  /** The Space of an organization with this slug, if any. */
  spaceIdBySlug(orgId: string, slug: string): Promise<string | undefined>;
  /** The Component of an organization with this slug, if any. */
  componentIdBySlug(orgId: string, slug: string): Promise<string | undefined>;
  /** The entity of a kind in a Space with this slug, if any. */
  idInSpace(spaceId: string, kind: SluggedInSpace, slug: string): Promise<string | undefined>;
  createSpace(space: Space): Promise<void>;
  getSpace(orgId: string, spaceId: string): Promise<Space | undefined>;
  /** A Space and the entity of a kind with this slug in it (`space/slug`), read together: `getSpace` and `idInSpace` in one request. */
  spaceAndSlug(
    orgId: string,
    spaceId: string,
    kind: SluggedInSpace,
    slug: string,
  ): Promise<{ space?: Space; id?: string }>;
  listSpaces(orgId: string): Promise<Space[]>;
  updateSpace(space: Space, expectedVersion: number, oldSlug: string): Promise<void>;
  deleteSpace(space: Space): Promise<void>;
  createComponent(component: Component): Promise<void>;
  getComponent(orgId: string, id: string): Promise<Component | undefined>;
  listComponents(orgId: string): Promise<Component[]>;
  getUnit(spaceId: string, unitId: string): Promise<Unit | undefined>;
  listUnits(spaceId: string): Promise<Unit[]>;
  updateUnit(unit: Unit, expectedVersion: number, oldSlug: string): Promise<void>;
  /** Deletes a Unit, then its history (revisions, mutations, marks). */
  deleteUnit(unit: Unit): Promise<void>;
  getRevision(unitId: string, num: number): Promise<StoredRevision | undefined>;
  /** Several revisions at once (any that exist), in as few requests as the store allows. */
  getRevisions(keys: { UnitID: string; RevisionNum: number }[]): Promise<StoredRevision[]>;
  /** Several revisions at once without their data (their hashes and validation errors are what is read), as `getRevisions` reads them. */
  revisionsAt(keys: { UnitID: string; RevisionNum: number }[]): Promise<Revision[]>;
  listRevisions(unitId: string): Promise<Revision[]>;
  /** A Unit's revisions after `after` up to `upTo` (without their data), in order: one range read, however long the Unit's history. */
  revisionsBetween(unitId: string, after: number, upTo: number): Promise<Revision[]>;
  listMutations(unitId: string): Promise<Mutation[]>;
  createInSpace<T extends { SpaceID: string; Slug: string }>(
    kind: SpaceKind,
    item: T,
    also?: { marks?: MarkWrite[] },
  ): Promise<void>;
  getInSpace<T>(kind: SpaceKind, spaceId: string, id: string): Promise<T | undefined>;
  listInSpace<T>(kind: SpaceKind, spaceId: string): Promise<T[]>;
  updateInSpace<T extends { SpaceID: string; Slug: string }>(
    kind: SpaceKind,
    item: T,
    expectedVersion: number,
    oldSlug: string,
  ): Promise<void>;
  /** Deletes a Space-resident entity (a Tag with its marks). */
  deleteInSpace<T extends { SpaceID: string; Slug: string }>(kind: SpaceKind, item: T): Promise<void>;
  /** Closes a ChangeSet: its new state, its new Tags and their marks, and each Unit it locked unlocked, in one transaction. */
  closeChangeSet(
    changeSet: { SpaceID: string; ChangeSetID: string; Version: number },
    next: object,
    tags: Tag[],
    marks: MarkWrite[],
    unlock: Unit[],
  ): Promise<void>;
  /** The Links whose upstream is this Unit, in any Space. */
  linksInto(unitId: string): Promise<Link[]>;
  /** The organization's Targets that name a deploy tool's object (`argocd:[ns/]name`, `flux:Kind/ns/name`). */
  targetsDeploying(orgId: string, deployObject: string): Promise<Target[]>;
  /** The Spaces whose Releases go to a Target. */
  spacesReleasingTo(targetId: string): Promise<Space[]>;
  /** A page of a Unit's revisions (without their data), newest first, as `releasePage`. */
  revisionPage(unitId: string, limit: number, after?: string): Promise<RevisionPage>;
  /** A page of what a Unit's revisions changed, newest first, as `releasePage`. */
  mutationPage(unitId: string, limit: number, after?: string): Promise<MutationPage>;
  putMark(mark: MarkWrite): Promise<void>;
  /** A Tag's marks, in Unit order. */
  marksOfTag(tagId: string): Promise<Mark[]>;
  /** A Unit's marks, of every Tag (a ChangeOrder's start and release marks included). */
  marksOfUnit(unitId: string): Promise<Mark[]>;
  /** The marks of these Tags on these Units, read by key (each Tag on each Unit; not the Units' other marks). */
  marksAt(unitIds: string[], tagIds: string[]): Promise<Mark[]>;
}

/** A Space's Releases and their counters, and its attestations. */
export interface ReleaseStore {
  releaseCounter(targetId: string): Promise<ReleaseCounter>;
  /**
   * A page of a Space's Releases, newest first (by number), from DynamoDB's own cursor: `after` is the
   * `next` of the page before (opaque; another list's is Invalid). Reads only the page's Releases.
   */
  releasePage(spaceId: string, limit: number, after?: string): Promise<ReleasePage>;
  /** The Releases of a Space published at a ChangeOrder (`ChangeOrder:<co>`), withdrawn ones too: read by that ChangeOrder, not among the Space's Releases. */
  releasesAtChangeOrder(spaceId: string, changeOrderId: string): Promise<Release[]>;
  /** A page of a Space's attestations, newest first (CreatedAt, then ID), each with RevokedBy if revoked; as `releasePage`. */
  attestationPage(spaceId: string, limit: number, after?: string): Promise<AttestationPage>;
  /** One attestation of a Space by ID, with RevokedBy if it was revoked: read by key, not found among the Space's. */
  attestationById(spaceId: string, attestationId: string): Promise<AttestationView | undefined>;
  /**
   * The attestations of a Space that name one of these Units with this content (`anyContent`: with any
   * content), each with RevokedBy if revoked: what the gates weigh, never the Space's whole history (a
   * Space with few attestations is read in one request; past that, by Unit and content).
   */
  attestationsNaming(
    spaceId: string,
    units: { UnitID: string; DataHash: string }[],
    o?: { anyContent?: boolean },
  ): Promise<AttestationView[]>;
}

/** ChangeOrders and their progress, holds, jobs, and the events the outbox publishes. */
export interface ChangeStore {
  /** The ChangeOrders of an organization; the database leaves out the Completed ones (`notCompleted`) and the aborted ones (`notAborted`) when asked. */
  changeOrdersOf(orgId: string, o?: { notCompleted?: boolean; notAborted?: boolean }): Promise<ChangeOrder[]>;
  /** An organization's ChangeOrders in flight (neither Completed nor aborted), from their sparse index, at most `limit`. */
  changeOrdersInFlight(orgId: string, limit: number): Promise<ChangeOrder[]>;
  /**
   * The ChangeOrders that reached a Space, each with its progress there (a ChangeOrder's own Space is
   * reached when it is made): read by the Space's progress, then those ChangeOrders by key, not the
   * organization's ChangeOrders nor the Space's whole history of them. With `inFlight`, only those neither
   * Completed nor aborted (from the organization's in-flight index); with `toRelease`, only those with a
   * Release still to record there (`releaseToRecord`, from the Space's sparse index of such progress).
   */
  changeOrdersReaching(
    orgId: string,
    spaceId: string,
    o: { inFlight: true } | { toRelease: true },
  ): Promise<{ co: ChangeOrder; progress: Progress }[]>;
  /** A ChangeOrder's progress in one Space, read by key (consistently: as just written). */
  progressAt(changeOrderId: string, spaceId: string): Promise<Progress | undefined>;
  progressOf(changeOrderId: string): Promise<Progress[]>;
  /**
   * A page of an organization's ChangeOrders in slug order (then by ID) with DynamoDB's cursor, as
   * `releasePage`; without those `o` rules out (as `changeOrdersOf`), so a page may be short of `limit`
   * while `next` says there is more.
   */
  changeOrderPage(
    orgId: string,
    limit: number,
    after?: string,
    o?: { notCompleted?: boolean; notAborted?: boolean },
  ): Promise<ChangeOrderPage>;
  /** Events written but not yet published, oldest first. */
  pendingEvents(limit: number): Promise<OutboxItem[]>;
  /** Forgets a published event. */
  deletePendingEvent(eventId: string): Promise<void>;
  /** Whether a consumer has handled this event already. */
  eventProcessed(eventId: string, consumer: string): Promise<boolean>;
  /** Records that a consumer handled an event (kept until `expiresAtEpoch`, seconds). */
  markEventProcessed(eventId: string, consumer: string, expiresAtEpoch: number): Promise<void>;
  /** An organization's holds; with `inForceAt`, only those in force then (the database leaves out the lifted and expired ones). */
  listHolds(orgId: string, o?: { inForceAt?: Date }): Promise<Hold[]>;
  getHold(orgId: string, holdId: string): Promise<Hold | undefined>;
  /** An organization's deploy windows (a handful: every promotion reads them all). */
  listWindows(orgId: string): Promise<DeployWindow[]>;
  getWindow(orgId: string, windowId: string): Promise<DeployWindow | undefined>;
  /** An organization's notifications (a handful: every ChangeOrder event reads them). */
  listNotifications(orgId: string): Promise<Notification[]>;
  /** Every organization's notifications told of ChangeOrders blocked too long (a sparse index of them, not a scan). */
  notificationsWatchingBlocked(): Promise<Notification[]>;
  getNotification(orgId: string, notificationId: string): Promise<Notification | undefined>;
  /** A notification's deliveries, newest first, at most `limit`. */
  deliveriesOf(notificationId: string, limit: number): Promise<NotificationDelivery[]>;
  getJob(jobId: string): Promise<JobRecord | undefined>;
  /** A job's plan, as the pieces it was written in, in order. */
  jobPlan(jobId: string): Promise<JobPlanRecord[]>;
  /** A job's finished parts, in order. */
  jobParts(jobId: string): Promise<JobPartRecord[]>;
  /** Whether a part of a job has finished. */
  jobPartDone(jobId: string, part: string): Promise<boolean>;
  /** The IDs of jobs that have not ended (to resume after a restart). */
  runningJobs(): Promise<string[]>;
}

/** Persistence as Baton needs it, each read named after the question it answers; lib/store implements it over one DynamoDB table, a module per part. */
export interface Store extends TableStore, PeopleStore, VariantStore, ReleaseStore, ChangeStore {}

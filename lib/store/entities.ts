// The domain's entities over Baton's one table (entity-kit.ts: what they are made of; record-entities.ts: the records beside them), and the Service over them all.
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Entity, Service } from 'electrodb';
import {
  ChangeOrderUpdateTypes,
  LinkUpdateTypes,
  PriorRevisionsModes,
  releaseToRecord,
  ROLES,
  TOOLCHAIN_TYPES,
} from '../model/entities.ts';
import { any, common, key, num, primary, reqAny, reqNum, reqStr, service, str } from './entity-kit.ts';
import { inFlight } from '../model/change-orders.ts';
import { AttestationCover, IdempotencyRecord, Job, JobPart, Outbox, ProcessedEvent } from './record-entities.ts';

export { AttestationCover, IdempotencyRecord, Job, JobPart, Outbox, ProcessedEvent } from './record-entities.ts';

const MARK_ROLES = ['start', 'end', 'publish', 'restore'] as const;

export const Organization = new Entity({
  model: { entity: 'organization', version: '1', service },
  attributes: { OrganizationID: reqStr, Slug: reqStr, CreatedAt: reqStr },
  indexes: { primary: primary(['OrganizationID'], []) },
});

/** An organization member. */
export const User = new Entity({
  model: { entity: 'user', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    UserID: reqStr,
    Slug: reqStr,
    DisplayName: str,
    Role: { type: ROLES, required: true },
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    Version: reqNum,
  },
  indexes: { primary: primary(['OrganizationID'], ['UserID']) },
});

export const Group = new Entity({
  model: { entity: 'group', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    GroupID: reqStr,
    Slug: reqStr,
    DisplayName: str,
    MemberUserIDs: reqAny,
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    Version: reqNum,
  },
  indexes: { primary: primary(['OrganizationID'], ['GroupID']) },
});

/** A hold on promotions (or publishes) into a Space, a workflow's ChangeOrders, or the organization; slug unique in the organization. */
export const Hold = new Entity({
  model: { entity: 'hold', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    HoldID: reqStr,
    Slug: reqStr,
    Reason: reqStr,
    OwnerID: reqStr,
    Scope: { type: ['Space', 'Workflow', 'Organization'] as const, required: true },
    SpaceID: str,
    ChangeWorkflowID: str,
    Blocks: reqAny,
    ExpiresAt: str,
    LiftedAt: str,
    LiftedBy: str,
    LiftNote: str,
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    Version: reqNum,
  },
  indexes: { primary: primary(['OrganizationID'], ['HoldID']) },
});

/**
 * An API token, stored only as the sha256 of the secret: the authorizer's one GetItem. Its indexes: an
 * organization's tokens by ID (revoke by ID), oldest first (a page at a time), and one user's oldest first
 * (a member's page, a deleted user's tokens; a service token has no user and is not in it).
 */
export const ApiToken = new Entity({
  model: { entity: 'token', version: '1', service },
  attributes: {
    TokenHash: reqStr,
    TokenID: str,
    OrganizationID: reqStr,
    UserID: str,
    Service: str,
    Scope: str,
    SpaceIDs: any,
    RequireSignature: { type: 'boolean' },
    Description: str,
    ExpiresAt: str,
    RevokedAt: str,
    CreatedAt: reqStr,
    CreatedBy: str,
    Version: reqNum,
    // The keys of one user's part of the index (`<org>#<user>`, `<CreatedAt>#<TokenID>`), written by the store with a user's token only (indexKeys).
    UserKey: { type: 'string', hidden: true },
    UserOrder: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['TokenHash'], []),
    byOrg: { index: 'gsi1', pk: key(['OrganizationID'], 'gsi1pk'), sk: key(['TokenID'], 'gsi1sk') },
    byCreated: { index: 'gsi2', pk: key(['OrganizationID'], 'gsi2pk'), sk: key(['CreatedAt', 'TokenID'], 'gsi2sk') },
    byUser: {
      index: 'gsi3',
      condition: (t: Record<string, unknown>) => !!t.UserKey,
      pk: key(['UserKey'], 'gsi3pk'),
      sk: key(['UserOrder'], 'gsi3sk'),
    },
  },
});

/** Reserves a slug within its scope (an organization or a Space); written in the create transaction. */
export const SlugClaim = new Entity({
  model: { entity: 'slug', version: '1', service },
  attributes: { Scope: reqStr, Kind: reqStr, Slug: reqStr, ID: reqStr },
  indexes: { primary: primary(['Scope'], ['Kind', 'Slug']) },
});

export const Space = new Entity({
  model: { entity: 'space', version: '1', service },
  attributes: {
    ...common,
    SpaceID: reqStr,
    ComponentID: str,
    ReleaseTargetID: str,
    UpstreamSpaceID: str,
    Permissions: any,
  },
  indexes: {
    primary: primary(['OrganizationID'], ['SpaceID']),
    // The Spaces a Target is attached to (where a deploy tool's report about it applies).
    byTarget: {
      index: 'gsi1',
      condition: (s: Record<string, unknown>) => !!s.ReleaseTargetID,
      pk: key(['ReleaseTargetID'], 'gsi1pk'),
      sk: key([], 'gsi1sk'),
    },
  },
});

export const Component = new Entity({
  model: { entity: 'component', version: '1', service },
  attributes: {
    ...common,
    ComponentID: reqStr,
    AllowedChangeWorkflowIDs: any,
    ChangeWorkflowRequired: { type: 'boolean' },
  },
  indexes: { primary: primary(['OrganizationID'], ['ComponentID']) },
});

const inSpace = { ...common, SpaceID: reqStr } as const;

export const Unit = new Entity({
  model: { entity: 'unit', version: '1', service },
  attributes: {
    ...inSpace,
    UnitID: reqStr,
    ToolchainType: { type: TOOLCHAIN_TYPES, required: true },
    TargetID: str,
    HeadRevisionNum: reqNum,
    LastReleasedRevisionNum: reqNum,
    LastChangeDescription: str,
    UpstreamUnitID: str,
    UpstreamSpaceID: str,
    UpstreamRevisionNum: reqNum,
    ChangeSetID: str,
    ChangeSetStartRevisionNum: num,
    Conflicts: reqAny,
    ProtectedPaths: reqAny,
    DeleteGates: any,
    DataHash: reqStr,
    DataSize: reqNum,
    ValidationErrors: reqAny,
  },
  indexes: { primary: primary(['SpaceID'], ['UnitID']) },
});

const revisionNum = { type: 'number', required: true, padding: { length: 10, char: '0' } } as const;

/** An immutable revision with its compressed data; the sort key is the zero-padded number, so ranges are one query. */
export const Revision = new Entity({
  model: { entity: 'revision', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    SpaceID: reqStr,
    UnitID: reqStr,
    RevisionID: reqStr,
    RevisionNum: revisionNum,
    Description: str,
    Source: reqStr,
    UserID: reqStr,
    ChangeSetID: str,
    DataHash: reqStr,
    DataSize: reqNum,
    ValidationErrors: any,
    Data: reqStr,
    CreatedAt: reqStr,
  },
  indexes: { primary: primary(['UnitID'], ['RevisionNum']) },
});

/** What one revision changed and why: path-level changes plus the operation's parameters. */
export const Mutation = new Entity({
  model: { entity: 'mutation', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    SpaceID: reqStr,
    UnitID: reqStr,
    MutationID: reqStr,
    RevisionNum: revisionNum,
    Source: reqStr,
    FunctionInvocation: any,
    InvocationID: str,
    LinkID: str,
    MergeSourceID: str,
    MergeBaseRevisionNum: num,
    MergeEndRevisionNum: num,
    RestoredRevisionNum: num,
    Changes: reqAny,
    ChangesOmitted: num,
    CreatedAt: reqStr,
  },
  indexes: { primary: primary(['UnitID'], ['RevisionNum']) },
});

const spaceEntity = (entity: string, idField: string, extra: Record<string, unknown>) =>
  new Entity({
    model: { entity, version: '1', service },
    attributes: { ...inSpace, [idField]: reqStr, ...extra } as typeof inSpace & Record<string, typeof str>,
    indexes: { primary: primary(['SpaceID'], [idField]) },
  });

export const Tag = spaceEntity('tag', 'TagID', { ChangeOrderID: str, ChangeSetID: str, ReleaseID: str });
export const ChangeSet = spaceEntity('changeset', 'ChangeSetID', {
  Description: str,
  StartTagID: str,
  EndTagID: str,
  State: str,
});
export const Filter = spaceEntity('filter', 'FilterID', { From: str, Where: str });
export const Invocation = spaceEntity('invocation', 'InvocationID', {
  ToolchainType: reqStr,
  FunctionInvocations: reqAny,
  Parameters: reqAny,
} as never);
/** A release Target; DeployObject (the Argo CD Application or Flux object that deploys it) is found by the organization's index of them. */
export const Target = new Entity({
  model: { entity: 'target', version: '1', service },
  attributes: {
    ...inSpace,
    TargetID: reqStr,
    Facts: any,
    LastReleaseNum: num,
    DeployObject: str,
    // The index's key: the object within its organization (`<org>#<object>`), written with DeployObject by the store; a Target without one is not in the index.
    DeployKey: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['SpaceID'], ['TargetID']),
    byDeployObject: {
      index: 'gsi1',
      condition: (t: Record<string, unknown>) => !!t.DeployObject,
      pk: key(['DeployKey'], 'gsi1pk'),
      sk: key([], 'gsi1sk'),
    },
  },
});

/**
 * A published bundle of a Space's Units; content fields never change, LiveStatus and labels do. Its indexes: a
 * Space's Releases by number (newest first, a page at a time), and those published at a ChangeOrder.
 */
export const Release = new Entity({
  model: { entity: 'release', version: '1', service },
  attributes: {
    ...inSpace,
    ReleaseID: reqStr,
    ReleaseNum: { type: 'number', required: true, padding: { length: 10, char: '0' } },
    TargetID: reqStr,
    TagID: reqStr,
    ChangeOrderID: str,
    Published: { type: 'boolean' },
    Digest: reqStr,
    UnitCount: num,
    Units: any,
    UserID: str,
    Description: str,
    LiveStatus: any,
    LiveStatusHistory: any,
    PublishedAt: str,
    WithdrawnAt: str,
    // The key of the Releases published at one ChangeOrder in one Space (`<space>#<change order>`), written by the store (indexKeys).
    AtChangeOrder: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['SpaceID'], ['ReleaseID']),
    byNum: { index: 'gsi1', pk: key(['SpaceID'], 'gsi1pk'), sk: key(['ReleaseNum', 'ReleaseID'], 'gsi1sk') },
    atChangeOrder: {
      index: 'gsi2',
      condition: (r: Record<string, unknown>) => !!r.AtChangeOrder,
      pk: key(['AtChangeOrder'], 'gsi2pk'),
      sk: key([], 'gsi2sk'),
    },
  },
});

/** A Link lives in its downstream Space; the GSI serves "the Links pointing at a Unit" (merge cursors, fan-out). */
export const Link = new Entity({
  model: { entity: 'link', version: '1', service },
  attributes: {
    ...inSpace,
    LinkID: reqStr,
    FromUnitID: reqStr,
    ToUnitID: reqStr,
    ToSpaceID: reqStr,
    UpdateType: { type: LinkUpdateTypes, required: true },
    AutoUpdate: { type: 'boolean' },
    Protect: { type: 'boolean' },
    Squash: { type: 'boolean' },
    UpstreamLastMergedRevisionNum: reqNum,
    DownstreamLastMergedRevisionNum: reqNum,
    UpstreamPaths: any,
    DownstreamSetters: any,
  },
  indexes: {
    primary: primary(['SpaceID'], ['LinkID']),
    byUpstream: { index: 'gsi1', pk: key(['ToUnitID'], 'gsi1pk'), sk: key(['LinkID'], 'gsi1sk') },
  },
});

/** A named counter (e.g. the last ReleaseNum of a Target), advanced under its Version in a transaction. */
export const Counter = new Entity({
  model: { entity: 'counter', version: '1', service },
  attributes: { Name: reqStr, Value: { type: 'number', required: true }, Version: { type: 'number', required: true } },
  indexes: { primary: primary(['Name'], []) },
});

/**
 * Immutable once written; a revocation is another Attestation naming it. Its indexes: a Space's attestations
 * newest first (a page at a time), and the Space's revocations by the attestation each revokes.
 */
export const Attestation = new Entity({
  model: { entity: 'attestation', version: '1', service },
  attributes: {
    ...inSpace,
    AttestationID: reqStr,
    UserID: reqStr,
    Type: reqStr,
    Result: reqStr,
    Note: str,
    Claims: reqAny,
    ChangeOrderID: str,
    ReleaseID: str,
    ExpiresAt: str,
    RevokedAttestationID: str,
    Revisions: reqAny,
    // A revocation's Space and the attestation it revokes, the keys of the Space's revocations, written by the store (indexKeys).
    RevocationIn: { type: 'string', hidden: true },
    Revokes: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['SpaceID'], ['AttestationID']),
    byTime: { index: 'gsi1', pk: key(['SpaceID'], 'gsi1pk'), sk: key(['CreatedAt', 'AttestationID'], 'gsi1sk') },
    revocations: {
      index: 'gsi2',
      condition: (a: Record<string, unknown>) => !!a.RevocationIn,
      pk: key(['RevocationIn'], 'gsi2pk'),
      sk: key(['Revokes'], 'gsi2sk'),
    },
  },
});

export const ChangeWorkflow = spaceEntity('changeworkflow', 'ChangeWorkflowID', {
  Stages: any,
  Final: any,
  CustomPrerequisites: any,
  AttestationPrerequisites: any,
} as never);

/**
 * A ChangeOrder lives in its base Space. Its indexes: an organization's ChangeOrders in slug order (then by ID: two
 * Spaces may use one slug), a page at a time; and those in flight (neither Completed nor aborted: what a live-status
 * report re-evaluates), which a ChangeOrder leaves in the write that completes or aborts it.
 */
export const ChangeOrder = new Entity({
  model: { entity: 'changeorder', version: '1', service },
  attributes: {
    ...inSpace,
    ChangeOrderID: reqStr,
    Description: str,
    UpdateType: { type: ChangeOrderUpdateTypes, required: true },
    ChangeWorkflowID: str,
    ChangeWorkflow: any,
    InScopeSpaceIDs: reqAny,
    RemovedSpaces: any,
    ComponentID: str,
    WhereSpace: str,
    SpaceFilterID: str,
    StartTagID: reqStr,
    EndTagID: reqStr,
    PublishTagID: reqStr,
    AbortedReason: str,
    AbortedAt: str,
    AbortedBy: str,
    RestoreTagID: str,
    InvocationID: str,
    Invocation: any,
    Parameters: any,
    WhereUnit: str,
    UnitFilterID: str,
    SkippedUnits: reqAny,
    PriorRevisions: { type: PriorRevisionsModes, required: true },
    Stage: str,
    Promotions: reqAny,
    PromotionFailures: reqAny,
    PromotionHalts: any,
    PromotionOverrides: reqAny,
    PromotionLease: any,
  },
  indexes: {
    primary: primary(['SpaceID'], ['ChangeOrderID']),
    byOrg: { index: 'gsi1', pk: key(['OrganizationID'], 'gsi1pk'), sk: key(['Slug', 'ChangeOrderID'], 'gsi1sk') },
    inFlight: {
      index: 'gsi2',
      condition: (c: Record<string, unknown>) => inFlight(c),
      pk: key(['OrganizationID'], 'gsi2pk'),
      sk: key(['ChangeOrderID'], 'gsi2sk'),
    },
  },
});

/** (ChangeOrder, Space) progress: one query reads every Space's progress with a ChangeOrder. */
export const Progress = new Entity({
  model: { entity: 'progress', version: '1', service },
  attributes: {
    ChangeOrderID: reqStr,
    SpaceID: reqStr,
    BaseSpaceID: str,
    ResolvedAt: reqStr,
    ReleaseID: str,
    ReleaseNum: num,
    ReleasedAt: str,
    RestoredAt: str,
    RestoreReleaseID: str,
    RestoreReleaseNum: num,
    Version: { type: 'number', required: true },
  },
  indexes: {
    primary: primary(['ChangeOrderID'], ['SpaceID']),
    // The ChangeOrders that reached a Space with a Release still to record there: what a Release there reads to record
    // itself on them, not the organization's ChangeOrders nor the Space's whole history of them. Sparse: the keys are
    // written while the progress has a Release to record (ElectroDB's index condition, judged on the whole item each
    // write, as the store writes progress whole) and removed with the write that records it.
    toRelease: {
      index: 'gsi1',
      condition: (p: Record<string, unknown>) => releaseToRecord(p),
      pk: key(['SpaceID'], 'gsi1pk'),
      sk: key(['ChangeOrderID'], 'gsi1sk'),
    },
  },
});

/** A Tag's mark on one Unit: at most one revision per (Tag, Unit). The GSI serves "the Tags of a Unit". */
export const Mark = new Entity({
  model: { entity: 'mark', version: '1', service },
  attributes: {
    TagID: reqStr,
    UnitID: reqStr,
    SpaceID: reqStr,
    RevisionNum: { type: 'number', required: true },
    UpdatedAt: reqStr,
    ChangeOrderID: str,
    Role: { type: MARK_ROLES },
  },
  indexes: {
    primary: primary(['TagID'], ['UnitID']),
    byUnit: { index: 'gsi1', pk: key(['UnitID'], 'gsi1pk'), sk: key(['TagID'], 'gsi1sk') },
  },
});

/** Builds the Service over one table with one client. */
/** The document client over a DynamoDB client, as the entities use it. */
export function documentClient(raw: unknown): DynamoDBDocumentClient {
  // Optional fields left undefined inside maps and lists are dropped, not refused; an object with a key named
  // like a prototype member (a label called `constructor`) is still written as a map.
  return DynamoDBDocumentClient.from(raw as DynamoDBClient, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
}

export function makeService(raw: unknown, table: string, client = documentClient(raw)) {
  const all = {
    Organization,
    User,
    Group,
    ApiToken,
    Attestation,
    Invocation,
    SlugClaim,
    Space,
    Component,
    Unit,
    Revision,
    Mutation,
    Tag,
    ChangeSet,
    Filter,
    Target,
    Mark,
    Link,
    Release,
    AttestationCover,
    Counter,
    ChangeWorkflow,
    ChangeOrder,
    Progress,
    Outbox,
    ProcessedEvent,
    IdempotencyRecord,
    Job,
    JobPart,
    Hold,
  };
  // A Service binds its entities to its table and client: each store gets entities of its own, so two
  // stores on two tables in one process (tests, benchmarks) never write through each other's.
  const own = Object.fromEntries(
    Object.entries(all).map(([name, e]) => [name, new Entity((e as unknown as { schema: never }).schema)]),
  ) as unknown as typeof all;
  return new Service(own, { client: client as never, table });
}
export type BatonService = ReturnType<typeof makeService>;

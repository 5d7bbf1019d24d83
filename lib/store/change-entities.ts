import { Entity } from 'electrodb';
import { ChangeOrderUpdateTypes, PriorRevisionsModes, releaseToRecord } from '../model/entities.ts';
import { inFlight } from '../model/change-orders.ts';
import { packRecords, packScope, RECORD_ID_LISTS, unpackScope } from './scope.ts';
import { any, inSpace, key, num, primary, reqAny, reqNum, reqStr, service, spaceEntity, str } from './entity-kit.ts';

const promotions = packRecords(RECORD_ID_LISTS.Promotions);
const overrides = packRecords(RECORD_ID_LISTS.PromotionOverrides);
const halts = packRecords(RECORD_ID_LISTS.PromotionHalts);

/** Holds, ChangeWorkflows, ChangeOrders and their progress, jobs and their parts, and the outbox and handled events. */

/** A hold on promotions (or publishes) into a Space, a workflow's ChangeOrders, or the organization; slug unique in the organization. */
export const Hold = new Entity({
  model: { entity: 'hold', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    HoldID: reqStr,
    Slug: reqStr,
    Reason: reqStr,
    OwnerID: reqStr,
    Scope: { type: ['Space', 'Workflow', 'Organization', 'ChangeOrder'] as const, required: true },
    SpaceID: str,
    ChangeWorkflowID: str,
    ChangeOrderID: str,
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

/** A deploy window over a Space, the Spaces a where selects, or one Stage of a workflow; slug unique in the organization. */
export const DeployWindow = new Entity({
  model: { entity: 'window', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    WindowID: reqStr,
    Slug: reqStr,
    Kind: { type: ['Allow', 'Deny'] as const, required: true },
    Reason: reqStr,
    OwnerID: reqStr,
    Scope: { type: ['Space', 'WhereSpace', 'Stage'] as const, required: true },
    SpaceID: str,
    WhereSpace: str,
    ChangeWorkflowID: str,
    Stage: str,
    Cron: str,
    Duration: str,
    TimeZone: str,
    Start: str,
    End: str,
    Blocks: reqAny,
    OverrideApprovals: reqNum,
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    Version: reqNum,
  },
  indexes: { primary: primary(['OrganizationID'], ['WindowID']) },
});

/**
 * A webhook told of ChangeOrders' Stages, waits, recalls and completions; slug unique in the organization. Those
 * told of a ChangeOrder blocked too long are in a sparse index across organizations: what the sweep reads
 * (lib/changes/blocked.ts), never a scan.
 */
export const Notification = new Entity({
  model: { entity: 'notification', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    NotificationID: reqStr,
    Slug: reqStr,
    URL: reqStr,
    Secret: str,
    On: reqAny,
    BlockedFor: str,
    OwnerID: reqStr,
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    Version: reqNum,
  },
  indexes: {
    primary: primary(['OrganizationID'], ['NotificationID']),
    watchingBlocked: {
      index: 'gsi1',
      condition: (n: Record<string, unknown>) => Array.isArray(n.On) && n.On.includes('Blocked'),
      pk: key([], 'gsi1pk'),
      sk: key(['OrganizationID', 'NotificationID'], 'gsi1sk'),
    },
  },
});

/** One delivery of one event to a notification, newest first by its time. */
export const NotificationDelivery = new Entity({
  model: { entity: 'notificationdelivery', version: '1', service },
  attributes: {
    NotificationID: reqStr,
    DeliveryID: reqStr,
    OrganizationID: reqStr,
    EventID: reqStr,
    On: reqStr,
    ChangeOrderSlug: str,
    Stage: str,
    BlockedSince: str,
    Text: reqStr,
    At: reqStr,
    Status: { type: ['Delivered', 'Failed'] as const, required: true },
    Attempts: reqNum,
    HTTPStatus: num,
    Error: str,
  },
  indexes: { primary: primary(['NotificationID'], ['At', 'DeliveryID']) },
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
    ChangeWorkflowSpaceID: str,
    ChangeWorkflowSlug: str,
    ChangeWorkflow: any,
    // Stored packed, 16 bytes a Space (lib/store/scope.ts); read back as the list of IDs.
    InScopeSpaceIDs: {
      type: 'any',
      required: true,
      set: (v: unknown) => packScope(v),
      get: (v: unknown) => unpackScope(v),
    },
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
    // Their lists of Space IDs stored packed, as the scope is (lib/store/scope.ts).
    Promotions: { type: 'any', required: true, set: promotions.pack, get: promotions.unpack },
    PromotionFailures: reqAny,
    PromotionHalts: { type: 'any', set: halts.pack, get: halts.unpack },
    PromotionOverrides: { type: 'any', required: true, set: overrides.pack, get: overrides.unpack },
    OverrideApprovals: any,
    Recall: any,
    Demotions: any,
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

/**
 * An event waiting to be published: written in the same transaction as the change it reports, published
 * from there (DynamoDB Streams on AWS, drained in-process locally), then deleted. The GSI lists what is
 * still pending, oldest first, for a local drain after a crash.
 */
export const Outbox = new Entity({
  model: { entity: 'outbox', version: '1', service },
  attributes: {
    EventID: reqStr,
    OrganizationID: reqStr,
    Source: reqStr,
    DetailType: reqStr,
    Detail: reqAny,
    CreatedAt: reqStr,
  },
  indexes: {
    primary: primary(['EventID'], []),
    pending: { index: 'gsi1', pk: key([], 'gsi1pk'), sk: key(['CreatedAt', 'EventID'], 'gsi1sk') },
  },
});

/** An event a consumer has handled, kept a week (TTL on ExpiresAtEpoch) so a second delivery is dropped. */
export const ProcessedEvent = new Entity({
  model: { entity: 'processed', version: '1', service },
  attributes: { EventID: reqStr, Consumer: reqStr, ExpiresAtEpoch: reqNum },
  indexes: { primary: primary(['EventID'], ['Consumer']) },
});

/**
 * A long operation run as a job (a promotion, an approval, a demote): how many pieces its plan is kept in, where its
 * parts stand, and once done the answer the request would have given (compressed). Kept a week after it
 * ends (TTL). Its index holds the jobs still running (for a restarted server to resume), which a job
 * leaves in the write that ends it.
 */
export const Job = new Entity({
  model: { entity: 'job', version: '1', service },
  attributes: {
    JobID: reqStr,
    OrganizationID: reqStr,
    UserID: reqStr,
    Kind: { type: ['Promote', 'Approve', 'Demote'] as const, required: true },
    State: { type: ['Running', 'Done'] as const, required: true },
    Caller: reqAny,
    Subject: any,
    PlanChunks: reqNum,
    Total: reqNum,
    Parts: reqAny,
    PartSpaces: reqNum,
    Wave: reqNum,
    PartsDone: reqNum,
    SpacesDone: reqNum,
    SpacesFailed: num,
    Status: num,
    Result: str,
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    FinishedAt: str,
    ExpiresAtEpoch: num,
    Version: reqNum,
  },
  indexes: {
    primary: primary(['JobID'], []),
    running: {
      index: 'gsi1',
      condition: (j: Record<string, unknown>) => j.State === 'Running',
      pk: key([], 'gsi1pk'),
      sk: key(['JobID'], 'gsi1sk'),
    },
  },
});

/**
 * A piece of a job's plan (what the request planned, compressed; pieces of at most JOB_PLAN_CHUNK characters,
 * read in order): kept beside the Job, not in it, so a plan of any size is stored and the Job item a worker
 * reads for every part stays small. Written before the Job; kept (TTL) eight days from the job's start,
 * so a job that ends within a day keeps its plan as long as the Job is kept (a week after it ends).
 */
export const JobPlan = new Entity({
  model: { entity: 'jobplan', version: '1', service },
  attributes: {
    JobID: reqStr,
    Chunk: reqNum,
    Data: reqStr,
    ExpiresAtEpoch: num,
  },
  indexes: { primary: primary(['JobID'], ['Chunk']) },
});

/** One finished part of a job: what its Spaces came to (compressed). Written with the job's count, once. */
export const JobPart = new Entity({
  model: { entity: 'jobpart', version: '1', service },
  attributes: {
    JobID: reqStr,
    Part: reqStr,
    Wave: reqNum,
    Index: reqNum,
    Result: reqStr,
    GaveUp: { type: 'boolean' },
    CreatedAt: reqStr,
    ExpiresAtEpoch: num,
  },
  indexes: { primary: primary(['JobID'], ['Part']) },
});

import type { Caller } from '../model/entities.ts';
import { z } from 'zod';

/** Event contracts: one zod schema per event, shared by the routes that put them, the consumers and the CDK rules. */

/** Where Baton's own events come from, and where the deploy-tool ingest routes put theirs. */
export const SOURCE = 'baton' as const;
export const HOOK_SOURCE = 'baton.hooks' as const;

/** The event names (EventBridge detail-types). */
export const DetailType = {
  /** An Argo CD Notifications webhook body, as Argo CD sent it. */
  ArgoCd: 'Argo CD Notification',
  /** A Flux notification-controller generic-webhook body, as Flux sent it. */
  Flux: 'Flux Event',
  /** A ChangeOrder was created: the change has a name, and (for most kinds) its marks in the base. */
  ChangeOrderCreated: 'ChangeOrder Created',
  /** A Release was published. */
  ReleasePublished: 'Release Published',
  /** A Release's LiveStatus changed. */
  ReleaseLiveStatusChanged: 'Release Live Status Changed',
  /** A ChangeOrder's recorded Stage moved forward. */
  ChangeOrderStageAdvanced: 'ChangeOrder Stage Advanced',
  /** A ChangeOrder's last Stage satisfied Final: the rollout is done. */
  ChangeOrderCompleted: 'ChangeOrder Completed',
  /** A promotion did not land everywhere it was meant to. */
  PromotionFailed: 'Promotion Failed',
  /** A promotion went ahead with gates failing, by --force with a reason. */
  PromotionOverridden: 'Promotion Overridden',
  /** A ChangeOrder was aborted: it is not coming to the Spaces still waiting for it. */
  ChangeOrderAborted: 'ChangeOrder Aborted',
  /** A demote took a ChangeOrder back out of one Space. */
  ChangeOrderRestored: 'ChangeOrder Restored',
  /** An Attestation (an approval, a rejection, another type) was recorded in a Space. */
  AttestationRecorded: 'Attestation Recorded',
  /** An Attestation was revoked (a revocation recorded beside it). */
  AttestationRevoked: 'Attestation Revoked',
  /** A hold was placed: promotions (or publishes) into what it covers wait while it is in force. */
  HoldPlaced: 'Hold Placed',
  /** A hold was lifted by its owner or an Admin. */
  HoldLifted: 'Hold Lifted',
  /** A deploy window was made: promotions into what it covers go only while it is open (a Deny window: not while it is in force). */
  WindowCreated: 'Window Created',
  /** A deploy window was deleted by its owner or an Admin. */
  WindowDeleted: 'Window Deleted',
  /** Someone approved forcing a ChangeOrder through a window that asks for override approvals. */
  WindowOverrideApproved: 'Window Override Approved',
  /** A Space reported a status its Stage recalls on, for the change's Release, soon after taking it: the ChangeOrder is frozen. */
  ChangeOrderRecalled: 'ChangeOrder Recalled',
} as const;
export type DetailType = (typeof DetailType)[keyof typeof DetailType];

/** An event on the bus. Baton's own carry an `EventID` in their detail, the same on every delivery: consumers drop duplicates by it. */
export interface BatonEvent {
  source: string;
  detailType: DetailType;
  detail: Record<string, unknown>;
}

/** Every event of Baton's own carries its ID (at-least-once delivery: the same event may arrive twice). */
const Envelope = { EventID: z.uuid().optional() };
/** The fields every event about something of an organization carries. */
const InOrganization = { ...Envelope, OrganizationID: z.uuid() };
/** The fields of an event about a ChangeOrder. */
const OfChangeOrder = { ...InOrganization, ChangeOrderID: z.uuid(), Slug: z.string() };
/** The Space an event happened in. */
const InSpace = { SpaceID: z.uuid(), SpaceSlug: z.string() };

/** What an ingest route puts on the bus: the caller's organization and the tool's body, unchanged. */
/** A hook's body on the bus, with who sent it (a user or a service token), so the consumer writes only where they may report. */
export const HookDetail = z.object({
  ...InOrganization,
  ReceivedAt: z.string(),
  Payload: z.unknown(),
  Caller: z.custom<Caller>((v) => typeof v === 'object' && v !== null).optional(),
});

export const LiveStatusSchema = z.strictObject({
  Sync: z.enum(['Synced', 'OutOfSync', 'Unknown']).optional(),
  Health: z.enum(['Healthy', 'Progressing', 'Degraded', 'Suspended', 'Missing', 'Unknown']).optional(),
  Operation: z.enum(['Running', 'Succeeded', 'Failed', '']).optional(),
  Reporter: z.string().max(256).optional(),
  DataSource: z.string().max(256).optional(),
  Message: z.string().max(4096).optional(),
  ObservedAt: z.iso.datetime({ offset: true }).optional(),
});

export const ReleasePublishedDetail = z.object({
  ...InOrganization,
  ...InSpace,
  ReleaseID: z.uuid(),
  ReleaseNum: z.number().int(),
  TargetID: z.uuid(),
  Digest: z.string(),
  UnitCount: z.number().int(),
  ChangeOrderID: z.uuid().optional(),
});

export const ReleaseLiveStatusChangedDetail = z.object({
  ...InOrganization,
  ...InSpace,
  ReleaseID: z.uuid(),
  ReleaseNum: z.number().int(),
  LiveStatus: LiveStatusSchema,
  Previous: LiveStatusSchema.optional(),
});

/** A ChangeOrder aborted: who, when, why. */
export const ChangeOrderAbortedDetail = z.object({
  ...OfChangeOrder,
  SpaceID: z.uuid(),
  AbortedReason: z.string(),
  AbortedAt: z.string(),
  AbortedBy: z.string(),
});

/** A demote landed in one Space: each Unit the start Tag marks there carries the restore mark. */
export const ChangeOrderRestoredDetail = z.object({
  ...OfChangeOrder,
  ...InSpace,
  RestoredAt: z.string(),
  UserID: z.string(),
  Units: z.array(z.object({ UnitID: z.uuid(), UnitSlug: z.string(), RevisionNum: z.number().int() })),
});

/** An attestation recorded or revoked: the ChangeOrders its Space took are re-evaluated (Final may now hold, or no longer). */
export const AttestationEventDetail = z.object({
  ...InOrganization,
  ...InSpace,
  AttestationID: z.uuid(),
  Type: z.string(),
  Result: z.enum(['Pass', 'Fail']),
  UserID: z.string(),
  ChangeOrderID: z.uuid().optional(),
  RevokedAttestationID: z.uuid().optional(),
});

/** A hold placed or lifted: what it covers, what it blocks, whose it is and why. */
export const HoldEventDetail = z.object({
  ...InOrganization,
  HoldID: z.uuid(),
  Slug: z.string(),
  Scope: z.enum(['Space', 'Workflow', 'Organization', 'ChangeOrder']),
  SpaceID: z.uuid().optional(),
  ChangeWorkflowID: z.uuid().optional(),
  ChangeOrderID: z.uuid().optional(),
  Blocks: z.array(z.enum(['promote', 'publish'])),
  Reason: z.string(),
  OwnerID: z.string(),
  ExpiresAt: z.string().optional(),
  LiftedBy: z.string().optional(),
  LiftNote: z.string().optional(),
});

/** A deploy window made or deleted: what it covers, its schedule, whose it is and why. */
export const WindowEventDetail = z.object({
  ...InOrganization,
  WindowID: z.uuid(),
  Slug: z.string(),
  Kind: z.enum(['Allow', 'Deny']),
  Scope: z.enum(['Space', 'WhereSpace', 'Stage']),
  SpaceID: z.uuid().optional(),
  WhereSpace: z.string().optional(),
  ChangeWorkflowID: z.uuid().optional(),
  Stage: z.string().optional(),
  Cron: z.string().optional(),
  Duration: z.string().optional(),
  TimeZone: z.string().optional(),
  Start: z.string().optional(),
  End: z.string().optional(),
  Blocks: z.array(z.enum(['promote', 'demote', 'abort'])),
  OverrideApprovals: z.number().int(),
  Reason: z.string(),
  OwnerID: z.string(),
  DeletedBy: z.string().optional(),
});

/** An override approval: who approved forcing which ChangeOrder through which window, and why. */
export const WindowOverrideApprovedDetail = z.object({
  ...OfChangeOrder,
  SpaceID: z.uuid(),
  WindowID: z.uuid(),
  WindowSlug: z.string(),
  UserID: z.string(),
  Reason: z.string(),
});

/** A recall: the report that set it off (which Space, which Release, what it said and when) and the hold that froze the ChangeOrder. */
export const ChangeOrderRecalledDetail = z.object({
  ...OfChangeOrder,
  SpaceID: z.uuid(),
  Stage: z.string(),
  RecalledSpaceID: z.uuid(),
  RecalledSpaceSlug: z.string(),
  ReleaseID: z.uuid(),
  ReleaseNum: z.number().int(),
  Report: z.record(z.string(), z.unknown()),
  Matched: z.enum(['Degraded', 'Missing', 'Suspended', 'Unknown', 'Failed']),
  TakenAt: z.string(),
  RecalledAt: z.string(),
  Within: z.string(),
  Hold: z.string(),
  Demote: z.boolean(),
});

/**
 * A ChangeOrder created: its kind, base and how many Spaces it may reach (not their IDs: a fleet's 10,000 would
 * pass EventBridge's 256 KB per event; `GET …/change_order/{id}` has them).
 */
export const ChangeOrderCreatedDetail = z.object({
  ...OfChangeOrder,
  SpaceID: z.uuid(),
  UpdateType: z.string(),
  ChangeWorkflowID: z.uuid().optional(),
  InScopeSpaceCount: z.number().int().nonnegative(),
  UserID: z.string(),
});

/** A ChangeOrder's recorded Stage moved forward (Completed: the last Stage satisfied Final). */
export const ChangeOrderStageDetail = z.object({
  ...OfChangeOrder,
  SpaceID: z.uuid(),
  Stage: z.string(),
  PreviousStage: z.string().optional(),
});

/**
 * How many Spaces (and failed gates) a promotion's event names; past that it names the first ones and counts
 * them all, as EventBridge takes 256 KB an event (10,000 IDs are 390 KB). The promotion's answer (and its job) names every one.
 */
export const EVENT_SPACE_IDS = 1000;
export const EVENT_FAILED_GATES = 100;

/** A promotion that did not land everywhere: the Spaces it failed or blocked in (the first 1,000; SpaceCount: all). */
export const PromotionFailedDetail = z.object({
  ...OfChangeOrder,
  Stage: z.string().optional(),
  SpaceIDs: z.array(z.uuid()).max(EVENT_SPACE_IDS),
  SpaceCount: z.number().int().positive(),
});

/** A promotion forced past failing gates: which gates, into which Spaces (the first 1,000 of SpaceCount; the first 100 gates of FailedGateCount), who and why. */
export const PromotionOverriddenDetail = z.object({
  ...OfChangeOrder,
  Stage: z.string().optional(),
  SpaceIDs: z.array(z.uuid()).max(EVENT_SPACE_IDS),
  SpaceCount: z.number().int().positive(),
  FailedGateCount: z.number().int().positive(),
  FailedGates: z.array(
    z.object({
      Prerequisite: z.string(),
      Satisfied: z.boolean(),
      SpaceID: z.string(),
      SpaceSlug: z.string(),
      Message: z.string(),
    }),
  ),
  Reason: z.string(),
  UserID: z.string(),
});

/** Argo CD's Application as `{{toJson .app}}` renders it in a Notifications webhook template (bare, or under `app`). */
export const ArgoApplication = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  status: z
    .looseObject({
      sync: z
        .looseObject({
          status: z.string().optional(),
          revision: z.string().optional(),
          revisions: z.array(z.string()).optional(),
        })
        .optional(),
      // Argo CD 3 adds lastTransitionTime (when the health last changed).
      health: z
        .looseObject({
          status: z.string().optional(),
          message: z.string().optional(),
          lastTransitionTime: z.string().optional(),
        })
        .optional(),
      operationState: z
        .looseObject({
          phase: z.string().optional(),
          message: z.string().optional(),
          finishedAt: z.string().optional(),
          startedAt: z.string().optional(),
          syncResult: z
            .looseObject({ revision: z.string().optional(), revisions: z.array(z.string()).optional() })
            .optional(),
        })
        .optional(),
      reconciledAt: z.string().optional(),
    })
    .optional(),
});

/** Flux notification-controller's event, as its generic webhook provider posts it. */
export const FluxEvent = z.looseObject({
  involvedObject: z.looseObject({ kind: z.string(), name: z.string(), namespace: z.string().optional() }),
  severity: z.enum(['info', 'error', 'trace']),
  timestamp: z.string(),
  message: z.string(),
  reason: z.string(),
  metadata: z.record(z.string(), z.string()).optional(),
  reportingController: z.string().optional(),
});

/** A rule: which events a consumer receives. The CDK stack and the in-process bus read the same list. */
export interface Rule {
  name: string;
  source: string[];
  detailType: DetailType[];
}

/** Deploy-tool events go to the live-status consumer. */
export const LIVE_STATUS_RULE: Rule = {
  name: 'DeployToolLiveStatus',
  source: [HOOK_SOURCE],
  detailType: [DetailType.ArgoCd, DetailType.Flux],
};
/** Baton's own Release events go to the stage re-evaluation: live status can complete a rollout. */
export const STAGE_RULE: Rule = {
  name: 'ChangeOrderStageReevaluation',
  source: [SOURCE],
  detailType: [DetailType.ReleaseLiveStatusChanged, DetailType.AttestationRecorded, DetailType.AttestationRevoked],
};
/** What notifications are told of: a ChangeOrder advancing a Stage, being recalled, completing. */
export const NOTIFY_RULE: Rule = {
  name: 'ChangeOrderNotifications',
  source: [SOURCE],
  detailType: [DetailType.ChangeOrderStageAdvanced, DetailType.ChangeOrderRecalled, DetailType.ChangeOrderCompleted],
};
export const RULES: Rule[] = [LIVE_STATUS_RULE, STAGE_RULE, NOTIFY_RULE];

/** The contract of each event's detail: checked when the event is emitted, so nothing off-contract reaches the bus. */
export const CONTRACTS: Record<DetailType, z.ZodType<Record<string, unknown>>> = {
  [DetailType.ArgoCd]: HookDetail,
  [DetailType.Flux]: HookDetail,
  [DetailType.ChangeOrderCreated]: ChangeOrderCreatedDetail,
  [DetailType.ReleasePublished]: ReleasePublishedDetail,
  [DetailType.ReleaseLiveStatusChanged]: ReleaseLiveStatusChangedDetail,
  [DetailType.ChangeOrderStageAdvanced]: ChangeOrderStageDetail,
  [DetailType.ChangeOrderCompleted]: ChangeOrderStageDetail,
  [DetailType.PromotionFailed]: PromotionFailedDetail,
  [DetailType.PromotionOverridden]: PromotionOverriddenDetail,
  [DetailType.ChangeOrderAborted]: ChangeOrderAbortedDetail,
  [DetailType.ChangeOrderRestored]: ChangeOrderRestoredDetail,
  [DetailType.AttestationRecorded]: AttestationEventDetail,
  [DetailType.AttestationRevoked]: AttestationEventDetail,
  [DetailType.HoldPlaced]: HoldEventDetail,
  [DetailType.HoldLifted]: HoldEventDetail,
  [DetailType.WindowCreated]: WindowEventDetail,
  [DetailType.WindowDeleted]: WindowEventDetail,
  [DetailType.WindowOverrideApproved]: WindowOverrideApprovedDetail,
  [DetailType.ChangeOrderRecalled]: ChangeOrderRecalledDetail,
};

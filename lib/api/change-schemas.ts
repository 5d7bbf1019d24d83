import { z } from 'zod';
import {
  ChangeOrderUpdateTypes,
  HOLD_BLOCKS,
  NOTIFY_ON,
  PriorRevisionsModes,
  RECALL_ON,
  WINDOW_BLOCKS,
} from '../model/entities.ts';
import { Slug, LabelPatch, Labels, Version, Ref, commonCreate, commonUpdate } from './schemas.ts';

/** The request shapes of ChangeWorkflows, ChangeOrders and their promotions, holds, demotes and attestations. */

/** A prerequisite's name; `Soak: 30m` (a YAML map in a document) and `Soak: 30m` as text are stored as `Soak=30m`. */
const PrerequisiteName = z.preprocess(
  (v) =>
    v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'Soak' in v
      ? `Soak=${String((v as { Soak: unknown }).Soak)}`
      : typeof v === 'string'
        ? v.replace(/^Soak\s*:\s*(\S+)$/, 'Soak=$1')
        : v,
  z.string().min(1).max(128),
);
const StageDef = z.strictObject({
  Name: z.string().min(1).max(63),
  WhereSpace: z.string().min(1).max(4096),
  Prerequisites: z.array(PrerequisiteName).max(20).optional(),
  ReleasePrerequisites: z.array(z.string().min(1).max(128)).max(20).optional(),
  FailureBudget: z
    .strictObject({
      MaxFailedSpaces: z.int().min(0).max(100000).optional(),
      MaxFailedPercent: z.number().min(0).max(100).optional(),
    })
    .optional(),
  MinHealthyPercent: z.number().min(0).max(100).optional(),
  Recall: z
    .strictObject({
      Within: z.string().min(1).max(16),
      On: z.array(z.enum(RECALL_ON)).min(1).max(RECALL_ON.length),
      Demote: z.boolean().optional(),
    })
    .optional(),
});
export const WorkflowBody = {
  Stages: z.array(StageDef).min(1).max(20),
  Final: z.strictObject({ Prerequisites: z.array(PrerequisiteName).max(20).optional() }).optional(),
  CustomPrerequisites: z
    .array(
      z.strictObject({
        Name: z.string().min(1).max(128),
        Expression: z.string().min(1).max(4096),
        Description: z.string().max(1024).optional(),
      }),
    )
    .max(20)
    .optional(),
  AttestationPrerequisites: z
    .array(
      z.strictObject({
        Name: z.string().min(1).max(128),
        Type: z.string().min(1).max(128).optional(),
        Count: z.number().int().min(1).max(100).optional(),
        // Users and groups by ID or slug; a slug is stored as the ID it names.
        FromUserIDs: z.array(Ref).max(100).optional(),
        FromGroupIDs: z.array(Ref).max(100).optional(),
        AllowAuthors: z.boolean().optional(),
        IgnoreFail: z.boolean().optional(),
        MaxAge: z.string().max(16).optional(),
        Description: z.string().max(1024).optional(),
      }),
    )
    .max(20)
    .optional(),
};
export const CreateChangeWorkflow = z.strictObject({ ...commonCreate, ...WorkflowBody });
export const UpdateChangeWorkflow = z.strictObject({
  ...commonUpdate,
  ...WorkflowBody,
  Stages: WorkflowBody.Stages.optional(),
});
export const CloneChangeWorkflow = z.strictObject({ Source: Ref, Slug: Slug.optional() });

export const CreateChangeOrder = z.strictObject({
  Slug,
  Description: z.string().max(4096).optional(),
  Labels: Labels.optional(),
  ChangeWorkflowID: Ref.optional(),
  UpdateType: z.enum(ChangeOrderUpdateTypes).default('UpgradeUnit'),
  InScopeSpaceIDs: z.array(Ref).max(1000).optional(),
  ComponentID: Ref.optional(),
  WhereSpace: z.string().max(4096).optional(),
  SpaceFilterID: Ref.optional(),
  EndTagID: Ref.optional(),
  // Include when not given (refused for a change order of Links' type, where it does not apply).
  PriorRevisions: z.enum(PriorRevisionsModes).optional(),
  AllowExists: z.boolean().optional(),
  // Invoke: the Invocation, its parameter values, and which Units it runs on.
  InvocationID: Ref.optional(),
  Parameters: z.record(z.string().min(1).max(63), z.string().max(4096)).optional(),
  WhereUnit: z.string().max(4096).optional(),
  UnitFilterID: Ref.optional(),
});
export const UpdateChangeOrder = z.strictObject({
  Version: Version.optional(),
  Description: z.string().max(4096).optional(),
  Labels: LabelPatch.optional(),
  RefreshSpaces: z.boolean().optional(),
  RemoveSpaces: z.array(Ref).min(1).max(100).optional(),
  // "" clears it (un-aborts) while nothing has been restored.
  AbortedReason: z.string().max(1024).optional(),
});
/** `POST /promote`: a variant from its upstream (Space), or a ChangeOrder into a Stage or Spaces (ChangeOrderID). */
export const Promote = z.strictObject({
  Space: Ref.optional(),
  Squash: z.boolean().optional(),
  ChangeOrderID: Ref.optional(),
  TargetStage: z.string().min(1).max(63).optional(),
  Spaces: z.array(Ref).max(1000).optional(),
  WhereSpace: z.string().max(4096).optional(),
  DryRun: z.boolean().optional(),
  PriorRevisions: z.enum(PriorRevisionsModes).optional(),
  Force: z.boolean().optional(),
  ForceReason: z.string().min(1).max(1024).optional(),
  Protect: z.boolean().optional(),
  /** Run as a job (true: answered 202 with its ID; false: in the request, whatever its size). Unset: a job above the size threshold. */
  Async: z.boolean().optional(),
});

/** `GET …/change_order/{id}/explain`: the Stage (default: the next), or Spaces by name or where. */
export const ExplainQuery = z.strictObject({
  target_stage: z.string().min(1).max(63).optional(),
  space: z.string().max(4096).optional(),
  where_space: z.string().max(4096).optional(),
});

/** `POST /hold` (cub hold create): what it covers (one of Space, Workflow, Organization), why, and for how long. */
export const CreateHold = z.strictObject({
  Slug,
  Reason: z.string().min(1).max(1024),
  Space: Ref.optional(),
  Workflow: Ref.optional(),
  Organization: z.boolean().optional(),
  ExpiresIn: z.string().max(16).optional(),
  Blocks: z.array(z.enum(HOLD_BLOCKS)).min(1).max(2).optional(),
});
/** `POST /hold/{hold_id}/lift` (cub hold lift). */
export const LiftHold = z.strictObject({ Note: z.string().max(4096).optional() });

/** `POST /window` (cub window create): what it covers (one of Space, WhereSpace, Workflow with Stage), its schedule, why. */
export const CreateWindow = z.strictObject({
  Slug,
  Reason: z.string().min(1).max(1024),
  /** A freeze: promotions into what it covers wait while it is in force. */
  Deny: z.boolean().optional(),
  Space: Ref.optional(),
  WhereSpace: z.string().min(1).max(4096).optional(),
  Workflow: Ref.optional(),
  Stage: z.string().min(1).max(63).optional(),
  Cron: z.string().min(1).max(100).optional(),
  Duration: z.string().max(16).optional(),
  TimeZone: z.string().min(1).max(64).optional(),
  Start: z.string().max(40).optional(),
  End: z.string().max(40).optional(),
  Blocks: z.array(z.enum(WINDOW_BLOCKS)).min(1).max(3).optional(),
  OverrideApprovals: z.number().int().min(0).max(10).optional(),
  /** Whose it is (a user's slug); the caller when left out. */
  Owner: z.string().min(1).max(128).optional(),
});
/** `POST …/change_order/{id}/override_approval` (cub changeorder approve-override). */
export const ApproveOverride = z.strictObject({
  Window: Ref,
  Reason: z.string().min(1).max(1024),
});

/** `GET /report/delivery` (cub report delivery): one workflow (space/workflow) or all, over the ChangeOrders made in the last `since`. */
export const DeliveryQuery = z.strictObject({
  workflow: z.string().min(1).max(255).optional(),
  since: z.string().min(1).max(16).optional(),
});

/** `POST /notification` (cub notification create): where to POST, the HMAC key, which events, and for Blocked how long. */
export const CreateNotification = z.strictObject({
  Slug,
  URL: z.string().min(1).max(4096),
  Secret: z.string().min(16).max(256).optional(),
  On: z.array(z.enum(NOTIFY_ON)).min(1).max(NOTIFY_ON.length),
  /** With Blocked: how long a change order's next Stage stays shut before it is told (default 1h). */
  BlockedFor: z.string().min(1).max(16).optional(),
});
export const DeliveriesQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(500).optional() });

/** `POST …/change_order/{id}/demote` (cub changeorder demote): take it back out of every Space that took it. */
export const DemoteEverywhere = z.strictObject({ Reason: z.string().min(1).max(1024) });

/** `POST /demote` (cub variant demote): take an aborted ChangeOrder back out of one Space. */
export const Demote = z.strictObject({
  Space: Ref,
  ChangeOrderID: Ref,
  ChangeDescription: z.string().max(4096).optional(),
  DryRun: z.boolean().optional(),
  Async: z.boolean().optional(),
});

const Claims = z.record(z.string().min(1).max(253), z.string().max(1024));
const attestFields = {
  ChangeOrderID: Ref.optional(),
  All: z.boolean().optional(),
  Where: z.string().max(4096).optional(),
  Revision: z.string().max(300).optional(),
  Note: z.string().max(4096).optional(),
  Claims: Claims.optional(),
  ExpiresIn: z.string().max(16).optional(),
  DryRun: z.boolean().optional(),
};
/** `POST /attest` (cub variant approve): which Spaces, which revisions, and what is said of them. */
export const Approve = z.strictObject({
  ...attestFields,
  Spaces: z.array(Ref).max(1000).optional(),
  WhereSpace: z.string().max(4096).optional(),
  Stage: z.string().max(128).optional(),
  Type: z.string().min(1).max(128).optional(),
  Reject: z.boolean().optional(),
  Async: z.boolean().optional(),
});
/** `POST /space/{space}/attestation`: an attestation of a type in one Space. */
export const CreateAttestation = z.strictObject({
  ...attestFields,
  Type: z.string().min(1).max(128),
  Reject: z.boolean().optional(),
});
export const RevokeAttestation = z.strictObject({ Note: z.string().max(4096).optional() });

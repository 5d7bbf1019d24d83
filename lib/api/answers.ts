/**
 * What the operations answer, as zod schemas: the one contract of the API's answers. The routes declare
 * them (`answer`, and `accepted` when a request may run on as a job), the OpenAPI document carries them,
 * the routes' bodies are checked against them at compile time (`answered`), the tests parse every answer
 * with them, and cub and the rollout page import their types. Entities are lib/model's, by reference.
 * Depends on zod and lib/model types only: cli/ and web/ import this file's types.
 */
import { z } from 'zod';
import type { Attestation, Component, MergeConflict as Conflict, Release, Space, Unit } from '../model/entities.ts';

/** An entity of lib/model, by reference (its own GET route's answer). */
const entity = <T>(id: string, route: string) =>
  z
    .custom<T>((v) => typeof v === 'object' && v !== null)
    .meta({ id, description: `A ${id}, as ${route} answers it`, type: 'object' });
const SpaceEntity = entity<Space>('Space', 'GET /space/{space_id}');
const UnitEntity = entity<Unit & { SpaceSlug?: string }>('Unit', 'GET /space/{space_id}/unit/{unit_id}');
const ReleaseEntity = entity<Release>('Release', 'GET /space/{space_id}/release/{release_id}');
const AttestationEntity = entity<Attestation>('Attestation', 'GET /space/{space_id}/attestation/{attestation_id}');
const ComponentEntity = entity<Component>('Component', 'GET /component/{component_id}');

const ErrorDetail = z.strictObject({ Code: z.string(), Message: z.string() });

/** One path-level change of a revision. */
export const PathChange = z
  .strictObject({
    Resource: z.string(),
    Path: z.string(),
    Op: z.enum(['Add', 'Update', 'Replace', 'Delete']),
    Value: z.unknown(),
  })
  .partial({ Value: true })
  .meta({ id: 'PathChange' });
export type PathChange = z.infer<typeof PathChange>;

/** An upstream change held back by protection. */
export const MergeConflict = z
  .strictObject({
    Resource: z.string(),
    Path: z.string(),
    Op: z.string(),
    UpstreamValue: z.unknown().optional(),
    DownstreamValue: z.unknown().optional(),
    MergeSourceID: z.string(),
    UpstreamRevisionNum: z.number(),
  })
  .meta({ id: 'MergeConflict' }) satisfies z.ZodType<Conflict>;

/** What happened to one Unit in an upgrade, clone or promotion (`Reason`: why a promotion left it or only marked it). */
export const UnitResult = z
  .strictObject({
    UnitID: z.string(),
    UnitSlug: z.string(),
    SpaceID: z.string(),
    Action: z.enum(['Upgrade', 'Clone', 'Mark', 'Unchanged', 'Failed']),
    Reason: z
      .enum(['AlreadyTaken', 'NoChange', 'NotCovered', 'CreatedInSpace', 'CreatedAfterChangeOrder', 'AlreadyHasChange'])
      .optional(),
    RevisionNums: z.array(z.number()).optional(),
    Changes: z.array(PathChange).optional(),
    Conflicts: z.array(MergeConflict).optional(),
    Error: ErrorDetail.optional(),
  })
  .meta({ id: 'UnitResult' });
export type UnitResult = z.infer<typeof UnitResult>;

/** One Unit's part of a ChangeOrder's promotion: as in an upgrade, or its Invocation run (`Invoke`) or its Links resolved (`Resolve`). */
export const PromotedUnit = UnitResult.extend({
  Action: z.enum(['Upgrade', 'Clone', 'Mark', 'Unchanged', 'Failed', 'Invoke', 'Resolve']),
}).meta({ id: 'PromotedUnit' });
export type PromotedUnit = z.infer<typeof PromotedUnit>;

/** A gate's verdict in one Space. */
export const GateResult = z
  .strictObject({
    Prerequisite: z.string(),
    Satisfied: z.boolean(),
    SpaceID: z.string(),
    SpaceSlug: z.string(),
    Message: z.string(),
    Evidence: z.record(z.string(), z.unknown()).optional(),
    Opens: z.string().optional(),
  })
  .meta({ id: 'GateResult' });

/** `POST /promote` with a ChangeOrder: what each Space did (200 every one, 207 some did not). */
export const ChangeOrderPromotion = z
  .strictObject({
    ChangeOrderID: z.string(),
    Stage: z.string().optional(),
    DryRun: z.boolean(),
    Forced: z.boolean(),
    Gates: z.array(GateResult),
    Spaces: z.array(
      z.strictObject({
        SpaceID: z.string(),
        SpaceSlug: z.string(),
        Action: z.enum(['Promote', 'Unchanged', 'NotStarted', 'Blocked', 'Failed']),
        Error: z.string().optional(),
        Units: z.array(PromotedUnit),
      }),
    ),
    Landed: z.number(),
    Total: z.number(),
    Message: z.string().optional(),
    Unrecorded: z.boolean().optional(),
  })
  .meta({ id: 'ChangeOrderPromotion' });
export type ChangeOrderPromotion = z.infer<typeof ChangeOrderPromotion>;

/** `POST /promote` of a Space from its upstream. */
export const SpacePromotion = z
  .strictObject({ SpaceID: z.string(), SpaceSlug: z.string(), DryRun: z.boolean(), Units: z.array(UnitResult) })
  .meta({ id: 'SpacePromotion' });
export type SpacePromotion = z.infer<typeof SpacePromotion>;

/** `POST /promote`: a ChangeOrder's promotion, or a Space's. */
export const Promotion = z.union([ChangeOrderPromotion, SpacePromotion]);

/** `POST /variant`: the new Space and what each Unit cloned to it did. */
export const VariantAnswer = z
  .strictObject({ Space: SpaceEntity, Units: z.array(UnitResult) })
  .meta({ id: 'VariantAnswer' });
export type VariantAnswer = z.infer<typeof VariantAnswer>;

/** `POST /variant/upload`: the Component, its base Space and the Units made there. */
export const UploadAnswer = z
  .strictObject({ Component: ComponentEntity, Space: SpaceEntity, Units: z.array(UnitEntity) })
  .meta({ id: 'UploadAnswer' });
export type UploadAnswer = z.infer<typeof UploadAnswer>;

/** `POST /space/{space_id}/function/invoke`: each Unit's result (200, or 207 when a write failed on some). */
export const InvokeAnswer = z
  .strictObject({
    Results: z.array(
      z.strictObject({
        UnitID: z.string(),
        UnitSlug: z.string(),
        Changed: z.boolean().optional(),
        RevisionNum: z.number().optional(),
        Changes: z.array(PathChange).optional(),
        Output: z.unknown().optional(),
        Error: ErrorDetail.optional(),
      }),
    ),
  })
  .meta({ id: 'InvokeAnswer' });
export type InvokeAnswer = z.infer<typeof InvokeAnswer>;

/** `POST /space/{space_id}/release`: the Release published (or, in a dry run, what it would bundle). */
export const PublishAnswer = z
  .strictObject({
    DryRun: z.boolean(),
    Release: ReleaseEntity.optional(),
    Message: z.string().optional(),
    Units: z.array(
      z.strictObject({ UnitID: z.string(), Slug: z.string(), RevisionNum: z.number(), DataHash: z.string() }),
    ),
    Digest: z.string(),
    UnitCount: z.number(),
  })
  .meta({ id: 'PublishAnswer' });
export type PublishAnswer = z.infer<typeof PublishAnswer>;

/** `DELETE /space/{space_id}`: the Units deleted with it and the Links elsewhere removed with them. */
export const SpaceDeletion = z
  .strictObject({
    DeletedUnits: z.array(z.string()),
    RemovedLinks: z.array(z.strictObject({ LinkID: z.string(), Slug: z.string(), SpaceID: z.string() })),
  })
  .meta({ id: 'SpaceDeletion' });
export type SpaceDeletion = z.infer<typeof SpaceDeletion>;

/** `POST /attest` and `POST /space/{space_id}/attestation`: what each Space recorded. */
export const ApproveAnswer = z
  .strictObject({
    DryRun: z.boolean(),
    Type: z.string(),
    Result: z.enum(['Pass', 'Fail']),
    Spaces: z.array(
      z.strictObject({
        SpaceID: z.string(),
        SpaceSlug: z.string(),
        Action: z.enum(['Attest', 'Skipped']),
        Reason: z.string().optional(),
        AttestationID: z.string().optional(),
        Warning: z.string().optional(),
        Units: z.array(
          z.strictObject({
            UnitID: z.string(),
            UnitSlug: z.string(),
            RevisionNum: z.number().optional(),
            Skipped: z.string().optional(),
          }),
        ),
      }),
    ),
    Attestations: z.array(AttestationEntity),
  })
  .meta({ id: 'ApproveAnswer' });
export type ApproveAnswer = z.infer<typeof ApproveAnswer>;

/** `POST /demote`: what each Unit of the Space came to. */
export const DemoteAnswer = z
  .strictObject({
    ChangeOrderID: z.string(),
    SpaceID: z.string(),
    SpaceSlug: z.string(),
    DryRun: z.boolean(),
    Restored: z.boolean(),
    Error: z.string().optional(),
    Units: z.array(
      z.strictObject({
        UnitID: z.string(),
        UnitSlug: z.string(),
        Action: z.enum(['Restore', 'Mark', 'Unchanged', 'Failed']),
        Reason: z.enum(['AlreadyRestored', 'NoChange']).optional(),
        RestoredRevisionNum: z.number().optional(),
        RevisionNum: z.number().optional(),
        Dropped: z
          .array(z.strictObject({ RevisionNum: z.number(), UserID: z.string(), Description: z.string().optional() }))
          .optional(),
        Error: z.string().optional(),
      }),
    ),
  })
  .meta({ id: 'DemoteAnswer' });
export type DemoteAnswer = z.infer<typeof DemoteAnswer>;

/** 202 to a request that runs on as a job: its ID and where to follow it (`Location: /job/{job_id}`). */
export const JobAccepted = z
  .strictObject({
    JobID: z.string(),
    Kind: z.enum(['Promote', 'Approve', 'Demote']),
    State: z.enum(['Running', 'Done']),
    Total: z.number(),
    Subject: z.record(z.string(), z.unknown()).optional(),
    Message: z.string(),
  })
  .meta({ id: 'JobAccepted' });
export type JobAccepted = z.infer<typeof JobAccepted>;

/**
 * `GET /job/{job_id}`: a job's progress, and once done the status and answer its request would have had
 * (`?brief=true`: its counts and status only, one read however large the job).
 */
export const JobAnswer = z
  .strictObject({
    JobID: z.string(),
    Kind: z.enum(['Promote', 'Approve', 'Demote']),
    State: z.enum(['Running', 'Done']),
    UserID: z.string(),
    Subject: z.record(z.string(), z.unknown()).optional(),
    CreatedAt: z.string(),
    UpdatedAt: z.string(),
    FinishedAt: z.string().optional(),
    Total: z.number(),
    Done: z.number(),
    Failed: z.number(),
    /** Each Space, where it stands (left out of a brief answer). */
    Spaces: z
      .array(
        z.strictObject({
          SpaceID: z.string(),
          SpaceSlug: z.string(),
          Wave: z.number(),
          State: z.enum(['Pending', 'Done']),
          Action: z.string().optional(),
          Error: z.string().optional(),
        }),
      )
      .optional(),
    Status: z.number().optional(),
    Result: z.unknown().optional(),
  })
  .meta({ id: 'JobAnswer' });
export type JobAnswer = z.infer<typeof JobAnswer>;

/** A route's body, checked at compile time to be what its answer schema says (the tests check it at run time). */
export const answered = <S extends z.ZodType>(_schema: S, body: z.input<S>): z.input<S> => body;

import { z } from 'zod';
import { LiveStatusSchema } from '../events/contracts.ts';
import {
  LinkUpdateTypes,
  PriorRevisionsModes,
  ROLES,
  SERVICE_SCOPES,
  SPACE_VERBS,
  TOOLCHAIN_TYPES,
} from '../model/entities.ts';

/** Zod schemas shared by the routes, the CLI and the tests: one per request shape. */
export const SLUG_PATTERN = /^[A-Za-z0-9]([-_A-Za-z0-9]*[A-Za-z0-9])?$/;
export const Slug = z
  .string()
  .max(128, 'must be at most 128 characters')
  .regex(SLUG_PATTERN, 'must be letters, digits, - and _, starting and ending with a letter or digit');
const LabelKey = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9]([-_./A-Za-z0-9]*[A-Za-z0-9])?$/, 'must be a label key (letters, digits, - _ . /)');
/** Labels as written: a null value removes the key (merge-patch). */
export const LabelPatch = z.record(LabelKey, z.string().max(255).nullable());
export const Labels = z.record(LabelKey, z.string().max(255));
export const Annotations = z.record(z.string().min(1).max(253), z.string().max(65536));
export const AnnotationPatch = z.record(z.string().min(1).max(253), z.string().max(65536).nullable());
export const Uuid = z.uuid();
export const Version = z.number().int().nonnegative();
export const Ref = z.string().min(1).max(300);

export const commonCreate = {
  Slug,
  DisplayName: z.string().max(256).optional(),
  Labels: Labels.optional(),
  Annotations: Annotations.optional(),
};
export const commonUpdate = {
  Version,
  Slug: Slug.optional(),
  DisplayName: z.string().max(256).optional(),
  Labels: LabelPatch.optional(),
  Annotations: AnnotationPatch.optional(),
};

export const CreateSpace = z.strictObject({
  ...commonCreate,
  ComponentID: Ref.optional(),
  ReleaseTargetID: Ref.optional(),
  UpstreamSpaceID: Ref.optional(),
});
/** Who a verb is granted to, by user and group slug or ID; null gives the verb back to the role defaults. */
export const PermissionsPatch = z.partialRecord(
  z.enum(SPACE_VERBS),
  z.strictObject({ UserIDs: z.array(Ref).max(100).optional(), GroupIDs: z.array(Ref).max(100).optional() }).nullable(),
);

export const UpdateSpace = z.strictObject({
  ...commonUpdate,
  ComponentID: Ref.nullable().optional(),
  ReleaseTargetID: Ref.nullable().optional(),
  Permissions: PermissionsPatch.optional(),
});

export const Role = z.enum(ROLES);
export const CreateUser = z.strictObject({ Slug, DisplayName: z.string().max(256).optional(), Role: Role.optional() });
export const UpdateUser = z.strictObject({
  Version,
  DisplayName: z.string().max(256).optional(),
  Role: Role.optional(),
});
export const CreateGroup = z.strictObject({
  Slug,
  DisplayName: z.string().max(256).optional(),
  Members: z.array(Ref).max(1000).optional(),
});
export const ChangeMembers = z.strictObject({
  Add: z.array(Ref).max(1000).optional(),
  Remove: z.array(Ref).max(1000).optional(),
});
export const CreateToken = z.strictObject({
  User: Ref.optional(),
  Service: Slug.optional(),
  Scope: z.enum(SERVICE_SCOPES).optional(),
  Spaces: z.array(Ref).max(1000).optional(),
  RequireSignature: z.boolean().optional(),
  ExpiresIn: z.string().max(16).optional(),
  Description: z.string().max(1024).optional(),
});

export const CreateComponent = z.strictObject({ ...commonCreate });

export const ToolchainType = z.enum(TOOLCHAIN_TYPES);
/** Unit data travels as text; the cap keeps a request well inside what a Lambda accepts. */
const Data = z.string().max(6 * 1024 * 1024);

export const CreateUnit = z.strictObject({
  ...commonCreate,
  ToolchainType: ToolchainType.default('Kubernetes/YAML'),
  Data,
  TargetID: Ref.optional(),
  LastChangeDescription: z.string().max(4096).optional(),
  ChangeSetID: Ref.optional(),
});
export const UpdateUnit = z.strictObject({
  ...commonUpdate,
  Data: Data.optional(),
  TargetID: Ref.nullable().optional(),
  LastChangeDescription: z.string().max(4096).optional(),
  ChangeSetID: Ref.optional(),
});

export const InvokeFunction = z.strictObject({
  FunctionName: z.string().min(1).max(100),
  Arguments: z.array(z.string().max(4096)).max(20).default([]),
  Where: z.string().max(4096).optional(),
  UnitIDs: z.array(Ref).max(1000).optional(),
  ChangeDescription: z.string().max(4096).optional(),
  Protect: z.boolean().optional(),
  ChangeSetID: Ref.optional(),
  DryRun: z.boolean().optional(),
});

/** A revision named as a number, `HeadRevisionNum`, `LastReleasedRevisionNum`, `Tag:<tag>` or `Before:Tag:<tag>`. */
export const RevisionRef = z.union([z.number().int().positive(), z.string().min(1).max(300)]);

export const MarkUnit = z.strictObject({
  Tag: Ref,
  Revision: RevisionRef.default('HeadRevisionNum'),
  Move: z.boolean().optional(),
});

export const CreateTag = z.strictObject({ ...commonCreate });
export const UpdateTag = z.strictObject({ ...commonUpdate });

export const CreateChangeSet = z.strictObject({ ...commonCreate, Description: z.string().max(4096).optional() });
export const UpdateChangeSet = z.strictObject({
  ...commonUpdate,
  Description: z.string().max(4096).optional(),
  State: z.enum(['Open', 'Closed']).optional(),
});

export const CreateFilter = z.strictObject({
  ...commonCreate,
  From: z.string().min(1),
  Where: z.string().min(1).max(4096),
});
export const UpdateFilter = z.strictObject({ ...commonUpdate, Where: z.string().min(1).max(4096).optional() });

const InvocationCalls = z
  .array(
    z.strictObject({
      FunctionName: z.string().min(1).max(128),
      // ParameterName may be left out: positional arguments are named in the function's order.
      Arguments: z
        .array(
          z.strictObject({
            ParameterName: z.string().min(1).max(128).optional(),
            Value: z.string().max(4096),
            Evaluator: z.literal('template').optional(),
          }),
        )
        .max(20),
    }),
  )
  .min(1)
  .max(20);
const InvocationParameters = z
  .array(
    z.strictObject({
      ParameterName: z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]{0,62}$/, 'must be a name: letters, digits, - and _'),
      DataType: z.enum(['string', 'int', 'bool']),
      Required: z.boolean(),
    }),
  )
  .max(20);
export const CreateInvocation = z.strictObject({
  ...commonCreate,
  ToolchainType: z.enum(TOOLCHAIN_TYPES),
  FunctionInvocations: InvocationCalls,
  Parameters: InvocationParameters.optional(),
});
export const UpdateInvocation = z.strictObject({
  ...commonUpdate,
  FunctionInvocations: InvocationCalls.optional(),
  Parameters: InvocationParameters.optional(),
});

export const Facts = z.record(z.string().min(1).max(128), z.string().max(4096));
/** A Kubernetes object name (DNS subdomain). */
const k8sName = '[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?';
/** The deploy tool's object that deploys a Target: an Argo CD Application (`argocd:[NAMESPACE/]NAME`) or a Flux Kustomization or HelmRelease (`flux:KIND/NAMESPACE/NAME`). */
const DeployObject = z
  .string()
  .max(600)
  .regex(
    new RegExp(`^(argocd:(${k8sName}/)?${k8sName}|flux:(Kustomization|HelmRelease)/${k8sName}/${k8sName})$`),
    'a deploy object is argocd:[NAMESPACE/]NAME (an Argo CD Application) or flux:Kustomization|HelmRelease/NAMESPACE/NAME (a Flux object), lowercase Kubernetes names',
  );
export const CreateTarget = z.strictObject({
  ...commonCreate,
  Facts: Facts.optional(),
  DeployObject: DeployObject.optional(),
});
export const UpdateTarget = z.strictObject({
  ...commonUpdate,
  Facts: z.record(z.string().min(1).max(128), z.string().max(4096).nullable()).optional(),
  DeployObject: DeployObject.nullable().optional(),
});

export const ListQuery = z.strictObject({
  where: z.string().max(4096).optional(),
  filter: Ref.optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  // A list over many parts (Spaces, Units) carries the part's slug and its own cursor: 2 KB holds the longest.
  continue: z.string().max(2048).optional(),
});
/** The paging parameters alone, for a list no `where` describes (what a Unit's revisions changed). */
export const PageQuery = ListQuery.pick({ limit: true, continue: true });
export const DataQuery = z.strictObject({ revision: z.string().max(300).optional() });
export const DiffQuery = z.strictObject({
  from: z.coerce.number().int().nonnegative(),
  to: z.coerce.number().int().positive().optional(),
});
export const NoQuery = z.strictObject({});
/** `GET /job/{id}?brief=true`: where the job stands only (no per-Space list, no answer): what a follower polls. */
export const JobQuery = z.strictObject({ brief: z.enum(['true', 'false']).optional() });
export const NoBody = z.undefined();

export const CreateVariant = z.strictObject({
  Name: Slug,
  UpstreamSpaceID: Ref,
  Slug: Slug.optional(),
  ReleaseTargetID: Ref.optional(),
  Namespace: z
    .string()
    .min(1)
    .max(63)
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a Kubernetes namespace name')
    .optional(),
  Stage: z.string().min(1).max(63).optional(),
  Environment: z.string().min(1).max(63).optional(),
  Region: z.string().min(1).max(63).optional(),
  SpaceLabels: Labels.optional(),
  UnitDeleteGates: z.array(Slug).max(10).optional(),
});
/** One step, one transaction: the Component, the Space and every Unit must fit in 100 items. */
export const MAX_UPLOAD_UNITS = 24;
export const UploadVariant = z.strictObject({
  Component: Slug,
  Variant: Slug,
  Units: z
    .array(
      z.strictObject({
        Slug,
        Data: z.string().max(6 * 1024 * 1024),
        ToolchainType: ToolchainType.default('Kubernetes/YAML'),
      }),
    )
    .min(1)
    .max(MAX_UPLOAD_UNITS, `at most ${MAX_UPLOAD_UNITS} units can be uploaded in one step`),
  Stage: z.string().min(1).max(63).optional(),
  Environment: z.string().min(1).max(63).optional(),
  Region: z.string().min(1).max(63).optional(),
  SpaceLabels: Labels.optional(),
});
export const UpgradeUnit = z.strictObject({
  ChangeOrderID: Ref.optional(),
  PriorRevisions: z.enum(PriorRevisionsModes).optional(),
  MergeSourceID: Ref.optional(),
  MergeBaseRevisionNum: z.number().int().nonnegative().optional(),
  MergeEndRevisionNum: z.number().int().positive().optional(),
  Squash: z.boolean().optional(),
  DryRun: z.boolean().optional(),
});
/** `cub unit update --patch --resolve Link:*`: resolve TransformPaths Links at the upstream's head or MergeEndRevisionNum. */
export const ResolveLinks = z.strictObject({
  Resolve: z.string().min(1).max(300),
  MergeEndRevisionNum: z.number().int().positive().optional(),
  ChangeDescription: z.string().max(4096).optional(),
  DryRun: z.boolean().optional(),
});
export const RestoreUnit = z.strictObject({
  Revision: RevisionRef,
  ChangeDescription: z.string().max(4096).optional(),
});
export const RevertUnit = z.strictObject({
  Range: z.string().regex(/^\d+((-|\.\.)\d+)?$/, "must be 'N' or 'A-B' (revision numbers)"),
  ChangeDescription: z.string().max(4096).optional(),
});
export const ResolveConflicts = z.strictObject({
  Action: z.enum(['Apply', 'Dismiss']),
  DryRun: z.boolean().optional(),
});
export const CreateLink = z.strictObject({
  Slug: Slug.optional(),
  DisplayName: z.string().max(256).optional(),
  Labels: Labels.optional(),
  Annotations: Annotations.optional(),
  FromUnitID: Ref,
  ToUnitID: Ref,
  ToSpaceID: Ref.optional(),
  UpdateType: z.enum(LinkUpdateTypes).default('MergeUnits'),
  AutoUpdate: z.boolean().optional(),
  Protect: z.boolean().optional(),
  Squash: z.boolean().optional(),
  UpstreamPaths: z
    .array(
      z.strictObject({
        Name: z.string().min(1).max(128),
        Path: z.string().min(1).max(1024).optional(),
        Resource: z.strictObject({ ResourceType: z.string().min(1), ResourceName: z.string().min(1) }).optional(),
      }),
    )
    .max(50)
    .optional(),
  DownstreamSetters: z
    .array(
      z.strictObject({
        Parameters: z.array(z.string().min(1)).max(20),
        FunctionInvocation: z.strictObject({
          FunctionName: z.string().min(1),
          Arguments: z
            .array(
              z.strictObject({
                ParameterName: z.string().min(1),
                Value: z.string(),
                Evaluator: z.enum(['template', '']).optional(),
              }),
            )
            .max(20),
        }),
      }),
    )
    .max(20)
    .optional(),
});
export const DeleteWithGates = z.strictObject({
  recursive: z.enum(['true', 'false']).optional(),
  force: z.enum(['true', 'false']).optional(),
});

export const PublishRelease = z.strictObject({
  Revision: RevisionRef.optional(),
  DryRun: z.boolean().optional(),
  Description: z.string().max(4096).optional(),
});
export const UpdateRelease = z.strictObject({
  Version: Version.optional(),
  LiveStatus: LiveStatusSchema.optional(),
  Labels: LabelPatch.optional(),
  Annotations: AnnotationPatch.optional(),
});
export const HookBody = z
  .unknown()
  .refine((v) => v !== undefined && v !== null && typeof v === 'object', 'a JSON object body is required');

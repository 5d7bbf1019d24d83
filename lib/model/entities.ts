/** The entities as the API speaks them (PascalCase JSON). */

export type StringMap = Record<string, string>;

/** Fields every entity carries. */
export interface Common {
  OrganizationID: string;
  Slug: string;
  DisplayName?: string;
  Labels: StringMap;
  Annotations: StringMap;
  CreatedAt: string;
  UpdatedAt: string;
  Version: number;
}

export interface Organization {
  OrganizationID: string;
  Slug: string;
  CreatedAt: string;
}

export interface User {
  OrganizationID: string;
  UserID: string;
  Slug: string;
  Admin?: boolean;
  CreatedAt: string;
}

/** Who is calling: resolved from the bearer token by the authorizer. */
export interface Caller {
  OrganizationID: string;
  UserID: string;
}

export interface Space extends Common {
  SpaceID: string;
  ComponentID?: string;
  ReleaseTargetID?: string;
  UpstreamSpaceID?: string;
}

export interface Component extends Common {
  ComponentID: string;
  AllowedChangeWorkflowIDs?: string[];
  ChangeWorkflowRequired?: boolean;
}

export interface InSpace extends Common {
  SpaceID: string;
  SpaceSlug?: string;
}

/** A path a downstream decided for itself; merges leave it alone. */
export interface ProtectedPath {
  Resource: string;
  Path: string;
}

/** An upstream change a merge did not take because the downstream protected the path. */
export interface MergeConflict {
  Resource: string;
  Path: string;
  Op: string;
  UpstreamValue?: unknown;
  DownstreamValue?: unknown;
  MergeSourceID: string;
  UpstreamRevisionNum: number;
}

export interface Unit extends InSpace {
  UnitID: string;
  ToolchainType: string;
  TargetID?: string;
  HeadRevisionNum: number;
  LastReleasedRevisionNum: number;
  LastChangeDescription?: string;
  UpstreamUnitID?: string;
  UpstreamSpaceID?: string;
  UpstreamRevisionNum: number;
  ChangeSetID?: string;
  /** The head before the first write under the open ChangeSet: where its start Tag goes. */
  ChangeSetStartRevisionNum?: number;
  Conflicts: MergeConflict[];
  ProtectedPaths: ProtectedPath[];
  /** Gates that refuse deleting the Unit (and its Space) without --recursive-force: name → "". */
  DeleteGates?: StringMap;
  DataHash: string;
  DataSize: number;
  ValidationErrors: StringMap;
}

export interface Revision {
  OrganizationID: string;
  SpaceID: string;
  UnitID: string;
  RevisionID: string;
  RevisionNum: number;
  Description?: string;
  Source: string;
  UserID: string;
  ChangeSetID?: string;
  DataHash: string;
  DataSize: number;
  CreatedAt: string;
  ValidationErrors?: StringMap;
  /** Tag ID → "" for each Tag marking this revision (filled when read). */
  Tags?: StringMap;
}

export interface Mutation {
  OrganizationID: string;
  SpaceID: string;
  UnitID: string;
  MutationID: string;
  RevisionNum: number;
  Source: string;
  FunctionInvocation?: { FunctionName: string; Arguments: string[] };
  MergeSourceID?: string;
  MergeBaseRevisionNum?: number;
  MergeEndRevisionNum?: number;
  RestoredRevisionNum?: number;
  Changes: { Resource: string; Path: string; Op: string; Value?: unknown; Protected?: boolean }[];
  CreatedAt: string;
}

export interface Tag extends InSpace {
  TagID: string;
  ChangeOrderID?: string;
  ChangeSetID?: string;
  ReleaseID?: string;
}

export interface Mark {
  TagID: string;
  UnitID: string;
  SpaceID: string;
  RevisionNum: number;
  UpdatedAt: string;
  /** For a ChangeOrder's own Tags: which ChangeOrder, and which of its Tags. */
  ChangeOrderID?: string;
  Role?: 'start' | 'end' | 'publish';
}

/** ChangeSet states. */
export const ChangeSetState = {
  /** Writes may be made under it; its Units are locked to it. */
  Open: 'Open',
  /** Finished: its start and end Tags mark the change. */
  Closed: 'Closed',
} as const;

export interface ChangeSet extends InSpace {
  ChangeSetID: string;
  Description?: string;
  StartTagID?: string;
  EndTagID?: string;
  State: (typeof ChangeSetState)[keyof typeof ChangeSetState];
}

export interface Filter extends InSpace {
  FilterID: string;
  From: string;
  Where: string;
}

export interface Target extends InSpace {
  TargetID: string;
  Facts: StringMap;
  /** The last ReleaseNum given out for this Target; Releases count up from it. */
  LastReleaseNum?: number;
}

/** What a deploy tool last reported about one Release. */
export interface ReleaseLiveStatus {
  Sync?: 'Synced' | 'OutOfSync' | 'Unknown';
  Health?: 'Healthy' | 'Progressing' | 'Degraded' | 'Suspended' | 'Missing' | 'Unknown';
  Operation?: 'Running' | 'Succeeded' | 'Failed' | '';
  Reporter?: string;
  DataSource?: string;
  Message?: string;
  ObservedAt?: string;
}

/** One Unit's revision in a Release. */
export interface BundledUnit {
  UnitID: string;
  Slug: string;
  RevisionNum: number;
  DataHash: string;
}

export interface Release extends InSpace {
  ReleaseID: string;
  ReleaseNum: number;
  TargetID: string;
  TagID: string;
  ChangeOrderID?: string;
  Published: boolean;
  Digest: string;
  UnitCount: number;
  Units: BundledUnit[];
  UserID: string;
  Description?: string;
  LiveStatus?: ReleaseLiveStatus;
  PublishedAt: string;
  WithdrawnAt?: string;
}

/** How a Link carries changes. UpgradeUnit and MergeUnits merge; the others write values (later issues). */
export const LinkUpdateTypes = ['UpgradeUnit', 'MergeUnits', 'TransformPaths', 'Insert', 'Upsert', 'NeedsProvides', 'None'] as const;
export type LinkUpdateType = (typeof LinkUpdateTypes)[number];

export interface Link extends InSpace {
  LinkID: string;
  /** The downstream Unit, in this Space. */
  FromUnitID: string;
  ToUnitID: string;
  ToSpaceID: string;
  UpdateType: LinkUpdateType;
  AutoUpdate?: boolean;
  Protect?: boolean;
  Squash?: boolean;
  /** The merge cursor: the upstream revision last merged, and the downstream revision it produced. */
  UpstreamLastMergedRevisionNum: number;
  DownstreamLastMergedRevisionNum: number;
  UpstreamPaths?: { Name: string; Path: string; Resource?: { ResourceType: string; ResourceName: string } }[];
  DownstreamSetters?: { Parameters: string[]; FunctionInvocation: { FunctionName: string; Arguments: { ParameterName: string; Value: string; Evaluator?: string }[] } }[];
  /** Derived when read: the upstream has revisions past the cursor. */
  Stale?: boolean;
}

/** The built-in prerequisites. */
export const BUILTIN_PREREQUISITES = {
  /** No Unit the change changed in the Space has validation errors in what a Release of the change would bundle. */
  Validated: 'Validated',
  /** The Space published a Release carrying the change (a Space with no release Target passes). */
  Released: 'Released',
  /** The Space's latest published Release carries the change and is Synced, Healthy, with no operation Running or Failed. */
  Healthy: 'Healthy',
} as const;

export interface WorkflowStage {
  Name: string;
  WhereSpace: string;
  Prerequisites?: string[];
  ReleasePrerequisites?: string[];
}

export interface CustomPrerequisite {
  Name: string;
  Expression: string;
  Description?: string;
}

export interface AttestationPrerequisite {
  Name: string;
  Type?: string;
  Count?: number;
  FromUserIDs?: string[];
  FromGroupIDs?: string[];
  AllowAuthors?: boolean;
  IgnoreFail?: boolean;
  MaxAge?: string;
  Description?: string;
}

/** The definition a ChangeOrder copies. */
export interface WorkflowDefinition {
  Stages: WorkflowStage[];
  Final?: { Prerequisites?: string[] };
  CustomPrerequisites?: CustomPrerequisite[];
  AttestationPrerequisites?: AttestationPrerequisite[];
}

export interface ChangeWorkflow extends InSpace, WorkflowDefinition {
  ChangeWorkflowID: string;
}

/** How promotion treats revisions a Space wrote before the ChangeOrder's start. */
export const PriorRevisionsModes = ['Include', 'Skip', 'Error', 'All'] as const;
export type PriorRevisions = (typeof PriorRevisionsModes)[number];

/** A ChangeOrder's states, derived when read. */
export const ChangeOrderState = {
  /** No Space beyond the base has taken it. */
  New: 'New',
  /** Some Spaces in scope took it, not all. */
  InProgress: 'InProgress',
  /** Every Space in scope took it. */
  Resolved: 'Resolved',
  /** Every Space in scope with a release Target released it. */
  Released: 'Released',
  /** Aborted, nothing restored. */
  Aborted: 'Aborted',
  Restored: 'Restored',
  RestoreReleased: 'RestoreReleased',
} as const;

export interface GateResult {
  Prerequisite: string;
  Satisfied: boolean;
  SpaceID: string;
  SpaceSlug: string;
  Message: string;
}

export interface PromotionFailure {
  FailedAt: string;
  UserID: string;
  Stage?: string;
  Spaces: { SpaceID: string; SpaceSlug: string; Action: string; Error?: string; Units: { UnitID: string; UnitSlug: string; Error: string }[] }[];
}

export interface PromotionOverride {
  FailedGates: GateResult[];
  OverriddenAt: string;
  Reason: string;
  SpaceIDs: string[];
  Stage?: string;
  UserID: string;
}

export interface ChangeOrder extends InSpace {
  ChangeOrderID: string;
  Description?: string;
  UpdateType: 'UpgradeUnit' | 'MergeUnits';
  ChangeWorkflowID?: string;
  ChangeWorkflow?: WorkflowDefinition;
  InScopeSpaceIDs: string[];
  WhereSpace?: string;
  SpaceFilterID?: string;
  StartTagID: string;
  EndTagID: string;
  PublishTagID: string;
  AbortedReason?: string;
  SkippedUnits: StringMap;
  PriorRevisions: PriorRevisions;
  /** Recorded: the latest Stage every Space of which took the change, or Completed; never moves back. */
  Stage?: string;
  Promotions: { PromotedAt: string; SpaceIDs: string[]; Stage?: string; UserID: string }[];
  PromotionFailures: PromotionFailure[];
  PromotionOverrides: PromotionOverride[];
  // Derived when read:
  State?: string;
  Completed?: boolean;
  ResolvedSpaceIDs?: string[];
  ReleasedSpaceIDs?: string[];
  Releases?: { ReleaseID: string; ReleaseNum: number; SpaceID: string }[];
}

/** One Space's progress with one ChangeOrder: written when the Space takes it, and when it releases it. */
export interface Progress {
  ChangeOrderID: string;
  SpaceID: string;
  ResolvedAt: string;
  ReleaseID?: string;
  ReleaseNum?: number;
  ReleasedAt?: string;
  Version: number;
}

/**
 * The entities as stored (PascalCase, as the API speaks them). What is added for reading only (a Space's
 * slug, a Link's staleness, a ChangeOrder's derived State) lives in the `…View` types, never here.
 */

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
}

/** An entity as read: with the slug of its Space, which is looked up, not stored, so a rename never leaves it stale. */
export type WithSpaceSlug<T> = T & { SpaceSlug: string };

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

/** The toolchains a Unit's data can be written in. */
export const TOOLCHAIN_TYPES = ['Kubernetes/YAML', 'AppConfig/YAML', 'AppConfig/Properties', 'AppConfig/JSON', 'AppConfig/Env', 'AppConfig/Text', 'ConfigHub/YAML'] as const;
export type ToolchainType = (typeof TOOLCHAIN_TYPES)[number];

/** The toolchain whose Units describe rather than deploy: never released, never promoted. */
export const DESCRIBING_TOOLCHAIN = 'ConfigHub/YAML' satisfies ToolchainType;

export interface Unit extends InSpace {
  UnitID: string;
  ToolchainType: ToolchainType;
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
}

/** A revision as stored: its fields and its compressed data. */
export type StoredRevision = Revision & { Data: string };

/** A revision as read: Tag ID → "" for each Tag marking it. */
export type RevisionView = Revision & { Tags: StringMap };

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

/** The three Tags of a ChangeOrder, by what each marks. */
export const MarkRole = {
  /** The revision the change starts from (what the Space had before). */
  start: 'start',
  /** The revision the change ends at: the Unit carries the change. */
  end: 'end',
  /** What a Release of the change bundles; a fix moves it past the end. */
  publish: 'publish',
} as const;
export type MarkRole = (typeof MarkRole)[keyof typeof MarkRole];

export interface Mark {
  TagID: string;
  UnitID: string;
  SpaceID: string;
  RevisionNum: number;
  UpdatedAt: string;
  /** For a ChangeOrder's own Tags: which ChangeOrder, and which of its Tags. */
  ChangeOrderID?: string;
  Role?: MarkRole;
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
}

/** A Link as read: `Stale` when its upstream has revisions past the cursor. */
export type LinkView = Link & { Stale: boolean };

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

/** How a ChangeOrder carries its change: along the clone lineage, or along MergeUnits Links. */
export const ChangeOrderUpdateTypes = ['UpgradeUnit', 'MergeUnits'] as const;
export type ChangeOrderUpdateType = (typeof ChangeOrderUpdateTypes)[number];

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
  /** Aborted, and every Space that took it has had it taken back out. */
  Restored: 'Restored',
  /** Restored, and every Space with a release Target has released the restore. */
  RestoreReleased: 'RestoreReleased',
} as const;
export type ChangeOrderState = (typeof ChangeOrderState)[keyof typeof ChangeOrderState];

/** The Stage a ChangeOrder records once its last Stage has taken it and Final holds. */
export const COMPLETED = 'Completed';

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
  UpdateType: ChangeOrderUpdateType;
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
}

/** What a ChangeOrder's progress says, derived when read. */
export interface ChangeOrderProgress {
  State: ChangeOrderState;
  Completed: boolean;
  ResolvedSpaceIDs: string[];
  ReleasedSpaceIDs: string[];
  Releases: { ReleaseID: string; ReleaseNum: number; SpaceID: string }[];
}

/** A ChangeOrder as read: stored fields and derived ones. */
export type ChangeOrderView = ChangeOrder & ChangeOrderProgress;

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

/** The fields every new entity starts with: its organization, slug, display name, labels, times and Version 1. */
export function newEntity(clock: { now(): Date }, orgId: string, f: { Slug: string; DisplayName?: string; Labels?: StringMap; Annotations?: StringMap }): Common {
  const now = clock.now().toISOString();
  return { OrganizationID: orgId, Slug: f.Slug, DisplayName: f.DisplayName ?? f.Slug, Labels: f.Labels ?? {}, Annotations: f.Annotations ?? {}, CreatedAt: now, UpdatedAt: now, Version: 1 };
}

/** Applies a JSON merge-patch to a string map: null removes a key. */
export function patchMap(have: StringMap, patch: Record<string, string | null> | undefined): StringMap {
  if (!patch) return have;
  const out = { ...have };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

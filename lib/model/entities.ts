/**
 * The entities as stored (PascalCase, as the API speaks them). What is added for reading only (a Space's
 * slug, a Link's staleness, a ChangeOrder's derived State) lives in the `…View` types, never here.
 */

import type { Common, InSpace, StringMap } from './common.ts';
import type { Permissions } from './people.ts';

export * from './common.ts';
export * from './change-orders.ts';
export * from './people.ts';
export * from './holds.ts';
export * from './windows.ts';
export * from './timeline.ts';
export * from './notifications.ts';

export interface Organization {
  OrganizationID: string;
  Slug: string;
  CreatedAt: string;
}

export interface Space extends Common {
  SpaceID: string;
  ComponentID?: string;
  ReleaseTargetID?: string;
  UpstreamSpaceID?: string;
  /** Who may do what here, by verb; a verb not named falls back to the role defaults (ROLE_DEFAULTS). */
  Permissions?: Permissions;
}

export interface Component extends Common {
  ComponentID: string;
  AllowedChangeWorkflowIDs?: string[];
  ChangeWorkflowRequired?: boolean;
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

/** The toolchains a Unit's data can be written in. */
export const TOOLCHAIN_TYPES = [
  'Kubernetes/YAML',
  'AppConfig/YAML',
  'AppConfig/Properties',
  'AppConfig/JSON',
  'AppConfig/Env',
  'AppConfig/Text',
  'ConfigHub/YAML',
] as const;
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
  /** The path-level changes; a value over VALUE_KEPT bytes is left out (`ValueOmitted`), and past the budget only their count is kept. */
  Changes: {
    Resource: string;
    Path: string;
    Op: string;
    Value?: unknown;
    ValueOmitted?: boolean;
    Protected?: boolean;
  }[];
  /** How many further changes the revision made that this record does not list (read them with a diff of the revisions). */
  ChangesOmitted?: number;
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
  /** The revision a demote restored the Unit to (`<slug>-co-restore`): the change was taken back out. */
  restore: 'restore',
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
  /** The deploy tool's object that deploys it: `argocd:[NAMESPACE/]NAME` or `flux:KIND/NAMESPACE/NAME`; its reports apply to the Spaces releasing here. */
  DeployObject?: string;
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

/** A transition a deploy tool reported: the status it moved to, when it was observed, and who said so. */
export interface LiveStatusTransition {
  Sync?: ReleaseLiveStatus['Sync'];
  Health?: ReleaseLiveStatus['Health'];
  Operation?: ReleaseLiveStatus['Operation'];
  ObservedAt: string;
  Reporter?: string;
}

/** How many transitions a Release keeps (an item must stay small; Soak needs only the latest run). */
export const LIVE_STATUS_HISTORY = 50;

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
  /** Each reported transition of Sync, Health or Operation, oldest first (the last LIVE_STATUS_HISTORY kept): what Soak reads. */
  LiveStatusHistory?: LiveStatusTransition[];
  PublishedAt: string;
  WithdrawnAt?: string;
}

/** How a Link carries changes. UpgradeUnit and MergeUnits merge; the others write values (later issues). */
export const LinkUpdateTypes = [
  'UpgradeUnit',
  'MergeUnits',
  'TransformPaths',
  'Insert',
  'Upsert',
  'NeedsProvides',
  'None',
] as const;
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
  UpstreamPaths?: { Name: string; Path?: string; Resource?: { ResourceType: string; ResourceName: string } }[];
  DownstreamSetters?: {
    Parameters: string[];
    FunctionInvocation: {
      FunctionName: string;
      Arguments: { ParameterName: string; Value: string; Evaluator?: string }[];
    };
  }[];
}

/** A Link as read: `Stale` when its upstream has revisions past the cursor. */
export type LinkView = Link & { Stale: boolean };

/** One argument of a saved function call: a literal, or a template over the Invocation's parameters. */
export interface InvocationArgument {
  ParameterName: string;
  Value: string;
  /** `template`: Value is rendered with `{{ .Params.<name> }}` from the parameter values. */
  Evaluator?: 'template';
}

/** A parameter an Invocation declares, given a value by each ChangeOrder that runs it. */
export interface InvocationParameter {
  ParameterName: string;
  DataType: 'string' | 'int' | 'bool';
  Required: boolean;
}

/** A saved operation: function calls with arguments, to run in each Space a ChangeOrder is promoted into. */
export interface Invocation extends InSpace {
  InvocationID: string;
  ToolchainType: ToolchainType;
  FunctionInvocations: { FunctionName: string; Arguments: InvocationArgument[] }[];
  Parameters: InvocationParameter[];
}

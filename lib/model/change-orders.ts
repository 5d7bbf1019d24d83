import type { InSpace, StringMap } from './common.ts';
import type { OverrideApproval } from './windows.ts';

/** The built-in prerequisites. */
export const BUILTIN_PREREQUISITES = {
  /** No Unit the change changed in the Space has validation errors in what a Release of the change would bundle. */
  Validated: 'Validated',
  /** The Space published a Release carrying the change (a Space with no release Target passes). */
  Released: 'Released',
  /** The Space's latest published Release carries the change and is Synced, Healthy, with no operation Running or Failed. */
  Healthy: 'Healthy',
  /** `Soak=<duration>`: Healthy, continuously, for at least that long (a Degraded or Progressing report restarts the clock). */
  Soak: 'Soak',
} as const;

export interface WorkflowStage {
  Name: string;
  WhereSpace: string;
  Prerequisites?: string[];
  ReleasePrerequisites?: string[];
  /** How many of the Stage's Spaces may fail: a promotion into it stops starting Spaces past it; the next Stage's gates tolerate that many. */
  FailureBudget?: { MaxFailedSpaces?: number; MaxFailedPercent?: number };
  /** The next Stage's deploy gates (Taken, Released, Healthy, Soak) hold when at least this share of the Stage's Spaces pass them (and the rest are within the budget). */
  MinHealthyPercent?: number;
  /** Recall on failure: a Space of this Stage reporting, for the change's Release, a status in On within Within of taking it freezes the ChangeOrder (and with Demote, takes it back out). */
  Recall?: StageRecall;
}

/** What a Stage's recall watches for: Health values, or Failed (the deploy tool's operation failed). */
export const RECALL_ON = ['Degraded', 'Missing', 'Suspended', 'Unknown', 'Failed'] as const;
export type RecallOn = (typeof RECALL_ON)[number];

export interface StageRecall {
  /** How long after a Space took the change a report still recalls it (a duration: 30m, 2h). */
  Within: string;
  On: RecallOn[];
  /** Also demote the change from every Space that took it, in reverse wave order. */
  Demote?: boolean;
}

/** What a recall did: the report that set it off, the hold that froze the ChangeOrder, and whether it demotes. */
export interface RecallRecord {
  RecalledAt: string;
  Stage: string;
  SpaceID: string;
  SpaceSlug: string;
  ReleaseID: string;
  ReleaseNum: number;
  /** The live status reported (Health, Operation, Sync, Message, ObservedAt, Reporter). */
  Report: Record<string, unknown>;
  /** What in the report matched the Stage's On. */
  Matched: RecallOn;
  TakenAt: string;
  Within: string;
  /** The hold that freezes it (owner baton): lifted by an Admin. */
  Hold: string;
  Demote: boolean;
}

/** A take-back: the change demoted from every Space that took it, latest first, each step as it went. */
export interface DemotionRecord {
  StartedAt: string;
  FinishedAt: string;
  UserID: string;
  Reason: string;
  Recall: boolean;
  Spaces: { SpaceID: string; SpaceSlug: string; Restored: boolean; Error?: string }[];
}

/** How many Spaces of `total` a Stage's failure budget allows to fail (undefined: no budget). */
export function failureAllowance(
  stage: Pick<WorkflowStage, 'FailureBudget'> | undefined,
  total: number,
): number | undefined {
  const b = stage?.FailureBudget;
  if (!b) return undefined;
  if (b.MaxFailedSpaces !== undefined) return b.MaxFailedSpaces;
  return Math.floor(((b.MaxFailedPercent ?? 0) * total) / 100);
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
export const ChangeOrderUpdateTypes = [
  'UpgradeUnit',
  'MergeUnits',
  'Invoke',
  'TransformPaths',
  'Insert',
  'Upsert',
] as const;
/** The ChangeOrder types whose change was made in sources outside their scope, reached by Links of that type. */
export const LINK_CHANGE_TYPES = ['TransformPaths', 'Insert', 'Upsert'] as const;

/** Whether a ChangeOrder carries a change made in sources outside its scope, which its Spaces take by resolving Links. */
export function isLinkChange(co: { UpdateType: string }): boolean {
  return (LINK_CHANGE_TYPES as readonly string[]).includes(co.UpdateType);
}
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

/** Whether a ChangeOrder is in flight: neither Completed nor aborted (neither comes undone). */
export const inFlight = (c: { Stage?: unknown; AbortedReason?: unknown }): boolean =>
  c.Stage !== COMPLETED && !c.AbortedReason;

export interface GateResult {
  Prerequisite: string;
  Satisfied: boolean;
  SpaceID: string;
  SpaceSlug: string;
  Message: string;
  /** What the gate read (an explanation only): Releases and digests, live status, CEL values, attestations counted and excluded, the hold. */
  Evidence?: Record<string, unknown>;
  /** What would open a failing gate (an explanation only). */
  Opens?: string;
}

export interface PromotionFailure {
  FailedAt: string;
  UserID: string;
  Stage?: string;
  /** How many Spaces it failed, was blocked or did not start in, when more than Spaces lists (200: lib/changes/promote/record.ts). */
  SpaceCount?: number;
  Spaces: {
    SpaceID: string;
    SpaceSlug: string;
    Action: string;
    Error?: string;
    Units: { UnitID: string; UnitSlug: string; Error: string }[];
  }[];
}

export interface PromotionOverride {
  FailedGates: GateResult[];
  /** The override approvals the windows among the failed gates asked for, as counted. */
  Approvals?: OverrideApproval[];
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
  /** Where the workflow it copied lives, and its slug then (the delivery report names workflows by them). */
  ChangeWorkflowSpaceID?: string;
  ChangeWorkflowSlug?: string;
  ChangeWorkflow?: WorkflowDefinition;
  InScopeSpaceIDs: string[];
  /** Spaces taken out of its scope (cub changeorder update --remove-space), by whom and when; a refresh leaves them out. */
  RemovedSpaces?: { SpaceID: string; SpaceSlug: string; RemovedAt: string; UserID: string }[];
  /** The Component its Spaces were chosen from (--component; an Invoke order without a scope, the base's). */
  ComponentID?: string;
  WhereSpace?: string;
  SpaceFilterID?: string;
  StartTagID: string;
  EndTagID: string;
  PublishTagID: string;
  AbortedReason?: string;
  /** When the abort was recorded, and by whom. */
  AbortedAt?: string;
  AbortedBy?: string;
  /** Invoke: the Invocation run in each Space (copied, so every Space gets the same), its parameter values, and the Units it selects. */
  InvocationID?: string;
  Invocation?: {
    Slug: string;
    ToolchainType: string;
    FunctionInvocations: {
      FunctionName: string;
      Arguments: { ParameterName: string; Value: string; Evaluator?: 'template' }[];
    }[];
  };
  Parameters?: Record<string, string>;
  WhereUnit?: string;
  UnitFilterID?: string;
  /** The Tag marking what each demoted Unit was restored to; made by the first demote. */
  RestoreTagID?: string;
  SkippedUnits: StringMap;
  PriorRevisions: PriorRevisions;
  /** Recorded: the latest Stage every Space of which took the change, or Completed; never moves back. */
  Stage?: string;
  Promotions: { PromotedAt: string; SpaceIDs: string[]; Stage?: string; UserID: string }[];
  PromotionFailures: PromotionFailure[];
  PromotionOverrides: PromotionOverride[];
  /** Set when a Space's report recalled it (a Stage's Recall): it is frozen by the hold named there. */
  Recall?: RecallRecord;
  /** Each `cub changeorder demote` (or a recall's demote): what every Space came to. */
  Demotions?: DemotionRecord[];
  /** Approvals to force this ChangeOrder through windows that ask for them (cub changeorder approve-override). */
  OverrideApprovals?: OverrideApproval[];
  /** Promotions that stopped starting Spaces because more than the Stage's failure budget had failed. */
  PromotionHalts?: {
    HaltedAt: string;
    Stage?: string;
    UserID: string;
    Allowance: number;
    FailedSpaceIDs: string[];
    NotStartedSpaceIDs: string[];
  }[];
  /** Held while a promotion runs, so a second one waits (409) instead of racing it; lapses at ExpiresAt if its holder dies. */
  PromotionLease?: { LeaseID: string; UserID: string; AcquiredAt: string; ExpiresAt: string };
}

/** What a ChangeOrder's progress says, derived when read. */
export interface ChangeOrderProgress {
  State: ChangeOrderState;
  Completed: boolean;
  ResolvedSpaceIDs: string[];
  ReleasedSpaceIDs: string[];
  Releases: { ReleaseID: string; ReleaseNum: number; SpaceID: string }[];
  /** Spaces a demote took the change back out of, and those of them that released what it restored. */
  RestoredSpaceIDs: string[];
  ReleasedRestoredSpaceIDs: string[];
}

/** A ChangeOrder as read: stored fields and derived ones. */
export type ChangeOrderView = ChangeOrder & ChangeOrderProgress;

/** One Space's progress with one ChangeOrder: written when the Space takes it, and when it releases it. */
export interface Progress {
  ChangeOrderID: string;
  SpaceID: string;
  /** The ChangeOrder's own Space: with its ID, the key it is read by from the Spaces it reached (absent on progress written before it was kept). */
  BaseSpaceID?: string;
  ResolvedAt: string;
  ReleaseID?: string;
  ReleaseNum?: number;
  ReleasedAt?: string;
  /** Demoted: every Unit the start Tag marks here carries the restore mark. */
  RestoredAt?: string;
  /** The Release that published what the restore marks here. */
  RestoreReleaseID?: string;
  RestoreReleaseNum?: number;
  Version: number;
}

/** Whether a Space's progress has a Release still to record: the change's, or after a demote the restore's. */
export const releaseToRecord = (p: Pick<Progress, 'ReleaseID' | 'RestoredAt' | 'RestoreReleaseID'>): boolean =>
  !p.ReleaseID || (!!p.RestoredAt && !p.RestoreReleaseID);

/** What `cub changeorder explain` answers (and `promote --dry-run --explain` prints). */
export interface Explanation {
  /** The ChangeOrder was recalled: what set it off, and (when its Stage does not demote) the one command that takes it back out. */
  Recall?: RecallRecord & { Command?: string };
  ChangeOrderID: string;
  Slug: string;
  /** The Stage a promotion would go into, and the Spaces it would take the change to. */
  Stage?: string;
  Targets: { SpaceID: string; SpaceSlug: string }[];
  /** The Spaces the Stage's gates are evaluated over (the Stage before, or the base). */
  Over: { SpaceID: string; SpaceSlug: string }[];
  /** Whether a promotion would go ahead now (without --force). */
  Open: boolean;
  Gates: GateResult[];
  Message?: string;
  /** Spaces of the Stage whose last promotion failed (or was blocked) and have not taken the change since: why. */
  Failed?: { SpaceID: string; SpaceSlug: string; FailedAt: string; Error: string }[];
}

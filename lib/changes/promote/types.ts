/** What the steps of a promotion pass between them: its options, the plan gated and ready to run, and what each Space and Unit came to. */
import type { CoMarks } from '../marks.ts';

import type { GateContext } from '../stages.ts';
import type { GateResult, PriorRevisions, Space } from '../../model/entities.ts';
import type { JobRecord } from '../../ports/jobs.ts';
import type { UnitResult } from '../../variants/merge.ts';

/** Spaces of one Stage promoted at once. */
export const PROMOTE_CONCURRENCY = 16;

/** What one promotion did. */
export interface PromoteResult {
  ChangeOrderID: string;
  Stage?: string;
  DryRun: boolean;
  Forced: boolean;
  Gates: GateResult[];
  Spaces: SpaceResult[];
  Landed: number;
  Total: number;
  Message?: string;
  /** Set when the failures could not be recorded on the ChangeOrder (the database did not answer): the answer is the only record. */
  Unrecorded?: boolean;
}

/**
 * How a promotion ended: every Space took the change (`Done`), or some did not (`Partial`; a rerun
 * repairs), or it runs on as a job (`Accepted`). A gate refusal is thrown as `GateRefused`.
 */
export type PromoteOutcome =
  { outcome: 'Done' | 'Partial'; result: PromoteResult } | { outcome: 'Accepted'; job: JobRecord };

/** Options of a promotion with a ChangeOrder. */
export interface PromoteOptions {
  targetStage?: string;
  spaces?: string[];
  whereSpace?: string;
  dryRun?: boolean;
  priorRevisions?: PriorRevisions;
  force?: boolean;
  forceReason?: string;
  /** Invoke only: protect the paths the Invocation writes. */
  protect?: boolean;
  /** Run as a job (true), in the request (false), or as the size of the plan decides (unset). */
  async?: boolean;
  /** Evaluate the gates with what each read and what would open it, and stop there (nothing is written). */
  explain?: boolean;
}

/** A promotion planned and gated, ready to run: in the request, or as a job. */
export interface Gated {
  stageName?: string;
  targets: Space[];
  /** The targets in the order they run: MergeUnits waves one after another, otherwise one wave. */
  waves: Space[][];
  gates: GateResult[];
  failedGates: GateResult[];
  /** The Spaces that had taken the change when the promotion was planned. */
  taken: Set<string>;
  marks: CoMarks;
  /** The organization's Spaces, as read for the plan. */
  spaces: Space[];
  /** What the gates read (Stages, progress, the CEL view), for the Stage reached afterwards. */
  context: GateContext;
  /** How many of the target Stage's Spaces may fail before the promotion stops starting more (its failure budget). */
  allowance?: number;
}

/** What a promotion did in one Space. */
export const SpaceAction = {
  /** The Space took the change in this promotion. */
  Promote: 'Promote',
  /** The Space had taken it before. */
  Unchanged: 'Unchanged',
  /** Not started: more of the Stage's Spaces had failed than its failure budget allows. */
  NotStarted: 'NotStarted',
  /** Not promoted: a gate refused, or its upstream Space has not taken the change. */
  Blocked: 'Blocked',
  /** A Unit's write failed; the rest landed and a rerun repairs. */
  Failed: 'Failed',
} as const;

export type SpaceAction = (typeof SpaceAction)[keyof typeof SpaceAction];

/** Why a Unit was left as it was, or only marked. */
export const UnitReason = {
  /** It carries the change already (a rerun, or a repair). */
  AlreadyTaken: 'AlreadyTaken',
  /** The change changes nothing in it: only marked, where its followers (or its release) have it. */
  NoChange: 'NoChange',
  /** Its upstream Unit is not covered by the change (made after it, or with nothing to carry). */
  NotCovered: 'NotCovered',
  /** Made in this Space: the change has nothing to bring it. */
  CreatedInSpace: 'CreatedInSpace',
  /** Its upstream was made after the ChangeOrder. */
  CreatedAfterChangeOrder: 'CreatedAfterChangeOrder',
  /** It merged its upstream to exactly the change's end before the ChangeOrder reached it (a variant made after the change): both Tags on its head. */
  AlreadyHasChange: 'AlreadyHasChange',
} as const;

export type UnitReason = (typeof UnitReason)[keyof typeof UnitReason];

/** One Unit's part of a promotion: merged as any upgrade, or, in a ChangeOrder of Invoke or of the Links' type, its Invocation run (`Invoke`) or its Links resolved (`Resolve`). */
export type PromotedUnit = Omit<UnitResult, 'Action'> & {
  Action: UnitResult['Action'] | 'Invoke' | 'Resolve';
  Reason?: UnitReason;
};

/** The result of promoting one Space. */
export interface SpaceResult {
  SpaceID: string;
  SpaceSlug: string;
  Action: SpaceAction;
  Error?: string;
  Units: PromotedUnit[];
}

export interface Explained {
  stageName?: string;
  stageIndex: number;
  targets: Space[];
  before: Space[];
  gates: GateResult[];
  failedGates: GateResult[];
  message?: string;
}

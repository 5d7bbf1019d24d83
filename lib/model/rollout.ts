import type { ChangeOrderView, Explanation, GateResult, HoldView, ReleaseLiveStatus, WindowView } from './entities.ts';

/** One Space of a Stage as the rollout page shows it: has it taken the change, its Release, live status, approvals, what went wrong. */
export interface RolloutSpace {
  SpaceID: string;
  SpaceSlug: string;
  /** The Space took the change (its progress is recorded), and when. */
  Taken: boolean;
  TakenAt?: string;
  /** A demote took the change back out of it, and when. */
  RestoredAt?: string;
  /** Has a release Target: a Release can be published from it and deployed. */
  HasTarget: boolean;
  /** Its latest published Release, whether that carries the change, and what the deploy tool last said of it. */
  Release?: {
    ReleaseNum: number;
    Digest: string;
    PublishedAt: string;
    CarriesChange: boolean;
    LiveStatus: ReleaseLiveStatus;
  };
  /** What this Space must meet before the change goes on from its Stage (the next Stage's prerequisites, or Final), with evidence; empty when nothing is asked or it has not taken the change. */
  Gates: GateResult[];
  /** The attestation requirements among those gates: how many each changed Unit has, and how many more it needs. */
  Approvals: { Name: string; Type: string; Count: number; Counted: string[]; Missing: number }[];
  /** The latest promotion that failed here, when none has taken the change here since. */
  Failure?: { FailedAt: string; Action: string; Error?: string; Units: { UnitSlug: string; Error: string }[] };
  /** Promotions into this Space that went past failing gates with --force. */
  Overrides: { OverriddenAt: string; Reason: string; UserID: string; Gates: string[] }[];
  /** A promotion that stopped at its Stage's failure budget did not start this Space. */
  NotStarted?: boolean;
}

/** A Stage of the rollout: its Spaces and where the change is with them. */
export interface RolloutStage {
  Name: string;
  Prerequisites: string[];
  /** `Reached`: every Space took it (or the failing ones are within budget); `Partial`: some did; `Next`: the next promotion goes here; `Waiting`: later. */
  Status: 'Reached' | 'Partial' | 'Next' | 'Waiting';
  /** What this Stage's Spaces must meet before the next Stage (or, for the last, Final). */
  Guards: string[];
  Spaces: RolloutSpace[];
}

/** `GET /space/{s}/change_order/{co}/rollout`: where a ChangeOrder has got to, Space by Space, and why it waits. Reads only. */
export interface Rollout {
  ChangeOrder: ChangeOrderView & { SpaceSlug: string };
  Base: { SpaceID: string; SpaceSlug: string };
  Stages: RolloutStage[];
  /** The next promotion: its Stage, gates and evidence (absent once every Stage is reached, or when aborted). */
  Next?: Explanation;
  /** Holds in force over the ChangeOrder's Spaces, its workflow, or the organization. */
  Holds: HoldView[];
  /** Deploy windows over the ChangeOrder's Spaces (or its workflow's Stages), with the Spaces each covers: open or closed now, and until when. */
  Windows: (WindowView & { CoveredSpaces: string[] })[];
  /** A promotion job running now. */
  Job?: { JobID: string; Kind: string; Done: number; Total: number };
  ReadAt: string;
}

/** `GET …/change_order/{id}/timeline` (cub changeorder timeline): how long a change waited at each Stage, on what, and when it should arrive. */

/** The kinds of gate a Stage's wait is told by. */
export const WAIT_KINDS = ['Release', 'Health', 'Soak', 'Approvals', 'Holds', 'Windows'] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

export interface TimelineStage {
  Name: string;
  Spaces: string[];
  /** When its gates could start to hold: the Stage before it reached (the change order made, for the first). */
  ReadyAt?: string;
  /** When its first Space took the change. */
  EnteredAt?: string;
  /** When its last Space took it (the Stage reached). */
  LeftAt?: string;
  /** Seconds from ReadyAt until it was entered, or until now while it waits. */
  WaitedSeconds?: number;
  /**
   * Seconds of that wait each kind of gate was not yet satisfied. Release, Health and Soak follow each other
   * (each from when the one before was satisfied); approvals, holds and windows may overlap them, so the kinds
   * can sum past the wait.
   */
  Waiting: Partial<Record<WaitKind, number>>;
  /** What it waits on now (not entered yet): the kinds of its gates that do not hold. */
  Open?: string[];
}

export interface Timeline {
  ChangeOrderID: string;
  Slug: string;
  CreatedAt: string;
  Stages: TimelineStage[];
  /**
   * When the last Stage can take the change if each promotion is run as soon as its gates open: At is null
   * when something it waits on is up to people or tools (Because says what), not the clock.
   */
  ETA: { Stage?: string; At: string | null; Because: string[] };
  ReadAt: string;
}

/** `GET …/change_order/{id}/timeline` (cub changeorder timeline): how long a change waited at each Stage, on what, and when it should arrive. */

/** The kinds of gate a Stage's wait is told by. */
export const WAIT_KINDS = ['Release', 'Health', 'Soak', 'Approvals', 'Holds', 'Windows'] as const;
export type WaitKind = (typeof WAIT_KINDS)[number];

/** A number of seconds as a person reads it: 45s, 12m, 3h20m, 2d4h. */
export function span(sec: number): string {
  if (sec < 120) return `${sec}s`;
  if (sec < 7200) return `${Math.floor(sec / 60)}m`;
  if (sec < 172800)
    return `${Math.floor(sec / 3600)}h${Math.floor((sec % 3600) / 60) ? `${Math.floor((sec % 3600) / 60)}m` : ''}`;
  return `${Math.floor(sec / 86400)}d${Math.floor((sec % 86400) / 3600) ? `${Math.floor((sec % 86400) / 3600)}h` : ''}`;
}

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

/** The four DORA figures of one workflow's ChangeOrders over a period (`cub report delivery`). */
export interface WorkflowDelivery {
  /** `<space>/<workflow>`, or "(no workflow)". */
  Workflow: string;
  ChangeOrders: number;
  /** Spaces of the workflow's last Stage that took a change in the period, and per day. */
  Deployments: number;
  DeploymentsPerDay: number;
  /** From the change's first revision to each Stage reached (every Space of it took the change). */
  LeadTime: { Stage: string; Count: number; P50Seconds: number; P90Seconds: number }[];
  /** Aborted or recalled, of the ChangeOrders that left their base. */
  Failed: number;
  ChangeFailureRate: number | null;
  /** From the abort to the last Space restored, of those taken back out everywhere. */
  TimeToRestore: { Count: number; P50Seconds: number; P90Seconds: number } | null;
}

export interface DeliveryReport {
  Since: string;
  From: string;
  To: string;
  Workflows: WorkflowDelivery[];
}

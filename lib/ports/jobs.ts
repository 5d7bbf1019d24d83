/** The records of jobs: what a long promotion, approval or demote carries from its request to its workers, and each part they finish. */

/** The operations that run as jobs. */
export type JobKind = 'Promote' | 'Approve' | 'Demote';

/**
 * A long operation running as a job. Its Spaces are split into waves (run one after another) of parts
 * (run by workers at once); `Parts[w]` is how many parts wave `w` has. What the request planned is kept
 * beside the Job, compressed and cut into `PlanChunks` pieces (JobPlanRecord), so a plan of any size is
 * stored and the Job item stays small; once `Done`, `Result` is the head of the body the request would
 * have answered with `Status` (compressed JSON) — the body without what each Space came to, which its
 * parts keep (a job's answer is put together when it is read, so no job is too large to end).
 */
export interface JobRecord {
  JobID: string;
  OrganizationID: string;
  UserID: string;
  Kind: JobKind;
  State: 'Running' | 'Done';
  /** Who asked, as the request saw them: the job acts with exactly their permissions. */
  Caller: object;
  /** What it works on (e.g. the ChangeOrder), shown while it runs. */
  Subject?: Record<string, unknown>;
  /** How many pieces (JobPlanRecord) its plan is kept in. */
  PlanChunks: number;
  Total: number;
  Parts: number[];
  /** Spaces per part. */
  PartSpaces: number;
  Wave: number;
  PartsDone: number;
  SpacesDone: number;
  /** Spaces of the written parts that failed (a promotion's failure budget counts them). */
  SpacesFailed?: number;
  Status?: number;
  Result?: string;
  CreatedAt: string;
  UpdatedAt: string;
  FinishedAt?: string;
  ExpiresAtEpoch?: number;
  Version: number;
}

/** A piece of a job's plan: the plans' compressed JSON is cut into pieces (`Chunk` 0, 1, …), each under DynamoDB's item size. */
export interface JobPlanRecord {
  JobID: string;
  Chunk: number;
  Data: string;
  ExpiresAtEpoch?: number;
}

/** One finished part of a job; `Result` is its compressed JSON (what happened in each of its Spaces). */
export interface JobPartRecord {
  JobID: string;
  /** `w<wave>p<index>`, zero-padded, so parts list in order. */
  Part: string;
  Wave: number;
  Index: number;
  Result: string;
  /** Its worker gave up on it (every attempt failed): its Spaces are reported failed. */
  GaveUp?: boolean;
  CreatedAt: string;
  ExpiresAtEpoch?: number;
}

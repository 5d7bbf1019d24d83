/** The kinds of job and what runs each: the registry the workers (and `GET /job/{id}`) use. */
import type { Caller } from '../model/entities.ts';
import type { JobMessage } from '../ports/deps.ts';
import { jobView, resumeJob, runJobPart, type JobHandlers, type JobView } from './jobs.ts';
import { approveJob } from './attest.ts';
import { demoteJob } from './demote.ts';
import { promoteJob } from './promote/job.ts';
import type { ChangeDeps } from './ports.ts';

export const JOB_HANDLERS: JobHandlers = { Promote: promoteJob, Approve: approveJob, Demote: demoteJob };

/** Runs one part of a job (a worker's message); `giveUp` writes its Spaces as failed instead (the last attempt failed). */
export const runPart = (
  deps: ChangeDeps,
  msg: JobMessage,
  giveUp?: string,
  o?: { firstDelivery?: boolean },
): Promise<void> => runJobPart(deps, JOB_HANDLERS, msg, giveUp, o);
/** Takes up a job from what the table says (after a restart). */
export const resume = (deps: ChangeDeps, jobId: string): Promise<void> => resumeJob(deps, JOB_HANDLERS, jobId);
/** `GET /job/{id}`. */
export const getJob = (deps: ChangeDeps, caller: Caller, jobId: string, o?: { brief?: boolean }): Promise<JobView> =>
  jobView(deps, JOB_HANDLERS, caller, jobId, o);

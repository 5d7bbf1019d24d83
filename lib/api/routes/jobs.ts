import { answered, JobAccepted, JobAnswer } from '../answers.ts';
import { getJob } from '../../changes/job-kinds.ts';
import type { JobRecord } from '../../ports/jobs.ts';
import { route, type Reply } from '../route.ts';
import { JobQuery, NoBody } from '../schemas.ts';

/** The answer to a request that runs on as a job: 202, its ID, and where to follow it. */
export function accepted(job: JobRecord): Reply {
  return {
    status: 202,
    headers: { location: `/job/${job.JobID}` },
    body: answered(JobAccepted, {
      JobID: job.JobID,
      Kind: job.Kind,
      State: job.State,
      Total: job.Total,
      ...(job.Subject ? { Subject: job.Subject } : {}),
      Message: `running as job ${job.JobID} over ${job.Total} space(s): GET /job/${job.JobID} (cub job get ${job.JobID}) reports its progress and, when done, its answer`,
    }),
  };
}

/** Jobs: long promotions, approvals and demotes, followed until they end. */
export const jobRoutes = [
  route({
    method: 'GET',
    path: '/job/{job_id}',
    name: 'GetJob',
    query: JobQuery,
    body: NoBody,
    answer: JobAnswer,
    async handle({ deps, caller, params, query }) {
      return {
        body: answered(JobAnswer, await getJob(deps, caller, params.job_id!, { brief: query.brief === 'true' })),
      };
    },
  }),
];

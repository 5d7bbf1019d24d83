import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { runPart } from '../lib/changes/job-kinds.ts';
import { JOB_ATTEMPTS } from '../lib/changes/jobs.ts';
import type { JobMessage } from '../lib/ports/deps.ts';
import { logger, observed } from './observability.ts';
import { lambdaDeps } from './wiring.ts';

/**
 * The job worker: runs one part of a long promotion, approval or demote per message. A part that fails
 * is reported back, so SQS delivers it again; on its last delivery its Spaces are written as failed
 * instead, so the job still ends (and says which). Only if even that fails does the message go to the
 * dead-letter queue (alarmed); the job is then resumed from the table.
 */
export const handler = observed(async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const deps = lambdaDeps();
  const failed: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    const msg = JSON.parse(record.body) as JobMessage;
    const receives = Number(record.attributes.ApproximateReceiveCount ?? 1);
    try {
      await runPart(deps, msg, undefined, { firstDelivery: receives === 1 });
      logger.info('job part done', { jobId: msg.JobID, wave: msg.Wave, part: msg.Part });
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      logger.error('job part failed', { jobId: msg.JobID, wave: msg.Wave, part: msg.Part, receives, error: why });
      if (receives >= JOB_ATTEMPTS) {
        try {
          await runPart(deps, msg, why);
          continue;
        } catch (e2) {
          logger.error('recording a job part given up failed', {
            jobId: msg.JobID,
            error: e2 instanceof Error ? e2.message : String(e2),
          });
        }
      }
      failed.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failed };
});

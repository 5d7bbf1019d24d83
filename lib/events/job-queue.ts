/**
 * The job queue on AWS: an SQS FIFO queue. Each part is its own message group, so no two workers hold
 * the same part at once, and its deduplication ID is the part itself, so a part sent again within five
 * minutes (a wave resumed after a redelivery) is dropped rather than run twice.
 */
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { JobMessage, JobQueue } from '../ports/deps.ts';

export class SqsJobQueue implements JobQueue {
  readonly client = new SQSClient({ endpoint: process.env.AWS_ENDPOINT_URL });
  constructor(private readonly queueUrl: string) {}

  async send(messages: JobMessage[]): Promise<void> {
    for (let i = 0; i < messages.length; i += 10) {
      const batch = messages.slice(i, i + 10);
      const r = await this.client.send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: batch.map((m, n) => {
            const part = `${m.JobID}.${m.Wave}.${m.Part}`;
            return {
              Id: String(n),
              MessageBody: JSON.stringify(m),
              MessageGroupId: part,
              MessageDeduplicationId: part,
            };
          }),
        }),
      );
      if (r.Failed?.length)
        throw new Error(
          `SQS refused ${r.Failed.length} job part(s): ${r.Failed[0]?.Message ?? r.Failed[0]?.Code ?? ''}`,
        );
    }
  }
}

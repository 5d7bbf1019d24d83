import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { EventBridgeEvent } from 'aws-lambda';
import { consumeDeployToolEvent } from '../lib/releases/deploy-events.ts';
import type { DetailType } from '../lib/events/contracts.ts';
import { logger, observed, tracer } from './observability.ts';
import { lambdaDeps } from './wiring.ts';

const dropped = process.env.DROPPED_QUEUE_URL;
const sqs = dropped ? tracer.captureAWSv3Client(new SQSClient({ endpoint: process.env.AWS_ENDPOINT_URL })) : undefined;

/**
 * The deploy-tool consumer: Argo CD and Flux events on the bus to their Release's LiveStatus. An event
 * that cannot be applied (malformed, about no Space or Release Baton has) is counted (DroppedEvents) and
 * recorded whole, with why, in the rule's dead-letter queue (alarmed), never only logged. A throw is
 * retried by Lambda, then dead-lettered.
 */
export const handler = observed(async (event: EventBridgeEvent<string, Record<string, unknown>>) => {
  const outcome = await consumeDeployToolEvent(lambdaDeps(), {
    source: event.source,
    detailType: event['detail-type'] as DetailType,
    detail: event.detail,
  });
  logger.info('deploy-tool event', { detailType: event['detail-type'], eventId: event.id, outcome });
  if (!outcome.applied && sqs) {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: dropped,
        MessageBody: JSON.stringify(event),
        MessageAttributes: { Reason: { DataType: 'String', StringValue: outcome.reason.slice(0, 1024) } },
      }),
    );
  }
});

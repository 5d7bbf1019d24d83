import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { outboxEvent } from '../lib/events/outbox.ts';
import type { OutboxItem } from '../lib/ports/store.ts';
import { logger, metrics, observed } from './observability.ts';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { lambdaDeps } from './wiring.ts';

/**
 * The outbox publisher: each outbox item the table's stream shows (the event source filters to their
 * inserts) is put on the bus, then deleted. A record that fails is reported back so the stream retries
 * from it (bounded, then dead-lettered); one published twice carries the same EventID.
 */
export const handler = observed(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const deps = lambdaDeps();
  for (const record of event.Records) {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) continue;
    const item = unmarshall(image as Record<string, AttributeValue>) as OutboxItem;
    try {
      await deps.bus.put([outboxEvent(item)]);
      await deps.store.deletePendingEvent(item.EventID);
      metrics.addMetric('EventsPublished', MetricUnit.Count, 1);
    } catch (e) {
      logger.error('publishing an outbox event failed', {
        eventId: item.EventID,
        detailType: item.DetailType,
        error: e instanceof Error ? e.message : String(e),
      });
      // Everything from this record on is retried; what went before is done.
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
});

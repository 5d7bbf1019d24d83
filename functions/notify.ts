import type { EventBridgeEvent } from 'aws-lambda';
import type { DetailType } from '../lib/events/contracts.ts';
import { logger, observed } from './observability.ts';
import { lambdaDeps } from './wiring.ts';
import { consumeNotifyEvent } from '../lib/changes/notifications.ts';

/**
 * The notifications consumer: a ChangeOrder advanced a Stage, was recalled or completed, so each notification
 * of its organization that asks for it is posted to (retried with backoff, each delivery recorded). A
 * redelivered event is dropped by its EventID; a throw is retried by EventBridge, then dead-lettered.
 */
export const handler = observed(async (event: EventBridgeEvent<string, Record<string, unknown>>) => {
  const outcome = await consumeNotifyEvent(lambdaDeps(), {
    source: event.source,
    detailType: event['detail-type'] as DetailType,
    detail: event.detail,
  });
  logger.info('notifications', { detailType: event['detail-type'], eventId: event.detail.EventID, outcome });
});

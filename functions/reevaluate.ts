import type { EventBridgeEvent } from 'aws-lambda';
import type { DetailType } from '../lib/events/contracts.ts';
import { logger, observed } from './observability.ts';
import { lambdaDeps } from './wiring.ts';
import { consumeStageEvent } from '../lib/changes/stage-events.ts';

/**
 * The Stage re-evaluation consumer: a Release's live status changed or an attestation was recorded or
 * revoked, so the ChangeOrders its Space took may advance (or complete). Idempotent, and a redelivered
 * event is dropped by its EventID. A throw is retried by EventBridge, then dead-lettered with an alarm.
 */
export const handler = observed(async (event: EventBridgeEvent<string, Record<string, unknown>>) => {
  const outcome = await consumeStageEvent(lambdaDeps(), {
    source: event.source,
    detailType: event['detail-type'] as DetailType,
    detail: event.detail,
  });
  logger.info('stage re-evaluation', { detailType: event['detail-type'], eventId: event.detail.EventID, outcome });
});

import type { EventBridgeEvent } from 'aws-lambda';
import { consumeDeployToolEvent } from '../lib/releases/deploy-events.ts';
import type { DetailType } from '../lib/events/contracts.ts';
import { logger, observed } from './observability.ts';
import { lambdaDeps } from './wiring.ts';

/** The deploy-tool consumer: Argo CD and Flux events to their Release's LiveStatus. A throw is retried by EventBridge, then dead-lettered. */
export const handler = observed(async (event: EventBridgeEvent<string, Record<string, unknown>>) => {
  const outcome = await consumeDeployToolEvent(lambdaDeps(), { source: event.source, detailType: event['detail-type'] as DetailType, detail: event.detail });
  logger.info('deploy-tool event', { detailType: event['detail-type'], eventId: event.id, outcome });
});

import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { consumeDeployToolEvent } from '../lib/api/deploy-events.ts';
import type { DetailType } from '../lib/events/contracts.ts';
import { lambdaDeps } from './wiring.ts';

/** The EventBridge consumer of Argo CD and Flux events: maps each to its Release's LiveStatus. */
export const handler = middy<EventBridgeEvent<string, Record<string, unknown>>>().handler(async (event) => {
  await consumeDeployToolEvent(lambdaDeps(), { source: event.source, detailType: event['detail-type'] as DetailType, detail: event.detail });
});

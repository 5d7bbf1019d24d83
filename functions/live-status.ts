import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import { consumeEvent } from '../lib/changes/consumers.ts';
import type { DetailType } from '../lib/events/contracts.ts';
import { lambdaDeps } from './wiring.ts';

/** The EventBridge consumer: Argo CD and Flux events to their Release's LiveStatus; live-status changes to Stage re-evaluation. */
export const handler = middy<EventBridgeEvent<string, Record<string, unknown>>>().handler(async (event) => {
  await consumeEvent(lambdaDeps(), { source: event.source, detailType: event['detail-type'] as DetailType, detail: event.detail });
});

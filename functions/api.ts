import middy from '@middy/core';
import { handleApiEvent, type ApiEvent } from '../lib/api/handler.ts';
import { lambdaDeps } from './wiring.ts';

/** Every HTTP API route: the route key picks the operation from lib/api's route table. */
export const handler = middy<ApiEvent>().handler((event) => handleApiEvent(lambdaDeps(), event));

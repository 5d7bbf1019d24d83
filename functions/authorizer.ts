import middy from '@middy/core';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { authorizeRequest } from '../lib/api/auth.ts';
import { lambdaDeps } from './wiring.ts';

/** The HTTP API's Lambda authorizer (simple responses): bearer token → the caller, passed to the API as context. */
export const handler = middy<APIGatewayRequestAuthorizerEventV2>().handler(async (event) => {
  const deps = lambdaDeps();
  const { isAuthorized, context } = await authorizeRequest(deps.store, event.headers ?? {}, deps.now());
  return { isAuthorized, context };
});

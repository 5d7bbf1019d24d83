import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { authorizeRequest } from '../lib/api/auth.ts';
import { observed } from './observability.ts';
import { lambdaDeps } from './wiring.ts';

/** The HTTP API's Lambda authorizer (simple responses): bearer token → the caller, passed to the API as context. It logs nothing of the request. */
export const handler = observed(async (event: APIGatewayRequestAuthorizerEventV2) => {
  const deps = lambdaDeps();
  const { isAuthorized, context } = await authorizeRequest(deps.store, event.headers ?? {}, deps.now());
  return { isAuthorized, context };
});

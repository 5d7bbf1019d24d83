import { handleApiEvent, type ApiEvent } from '../lib/api/handler.ts';
import { encodeAnswer } from '../lib/api/encoding.ts';
import { logger, metrics, observed } from './observability.ts';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { lambdaDeps } from './wiring.ts';

/** The caller the authorizer put in the request's context, for the log only (never the token). */
function callerKeys(event: ApiEvent): Record<string, string> {
  try {
    const c = JSON.parse(event.requestContext.authorizer?.lambda?.caller ?? '{}') as {
      OrganizationID?: string;
      UserID?: string;
    };
    return {
      ...(c.OrganizationID ? { organizationId: c.OrganizationID } : {}),
      ...(c.UserID ? { userId: c.UserID } : {}),
    };
  } catch {
    return {};
  }
}

/** Every HTTP API route: the route key picks the operation from lib/api's route table. */
export const handler = observed(async (event: ApiEvent) => {
  logger.appendKeys({ apiRequestId: event.requestContext.requestId, route: event.routeKey, ...callerKeys(event) });
  const result = await handleApiEvent(lambdaDeps(), event);
  const status = result.statusCode ?? 200;
  if (status >= 400) metrics.addMetric(status >= 500 ? 'Http5xx' : 'Http4xx', MetricUnit.Count, 1);
  logger.info('answered', { status });
  // Large answers gzipped for a client that accepts it: a Lambda may answer 6 MB at most.
  return encodeAnswer(result, event.headers?.['accept-encoding']);
});

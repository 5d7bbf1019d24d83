/**
 * Powertools for AWS Lambda, wired once per container and applied to every handler through middy, so
 * the handlers stay thin: JSON logs with the Lambda request ID (and, on API requests, the API request ID
 * and the caller's organization), metrics flushed after each invocation, X-Ray traces of the handler and
 * of every AWS SDK call. Events and headers are never logged: a token never reaches the log.
 */
import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { Context } from 'aws-lambda';
import type { Telemetry } from '../lib/ports/deps.ts';

export const logger = new Logger();
/** Metrics' own warnings go to the same JSON log, but not the one for an invocation that counted nothing (most do not). */
const metricsLog = {
  trace: (...a: unknown[]) => logger.debug(String(a[0])),
  debug: (...a: unknown[]) => logger.debug(String(a[0])),
  info: (...a: unknown[]) => logger.info(String(a[0])),
  warn: (...a: unknown[]) =>
    void (String(a[0]).startsWith('No application metrics') ? undefined : logger.warn(String(a[0]))),
  error: (...a: unknown[]) => logger.error(String(a[0])),
};
export const metrics = new Metrics({
  defaultDimensions: { Stage: process.env.BATON_STAGE ?? 'local' },
  logger: metricsLog,
});
export const tracer = new Tracer();

/** The Telemetry port over Powertools: counts as CloudWatch metrics (with their dimensions), errors as log lines. */
export const powertoolsTelemetry: Telemetry = {
  count(name, value = 1, dimensions) {
    if (!dimensions) return void metrics.addMetric(name, MetricUnit.Count, value);
    const one = metrics.singleMetric();
    for (const [k, v] of Object.entries(dimensions)) one.addDimension(k, v);
    one.addMetric(name, MetricUnit.Count, value);
  },
  error(message, error) {
    logger.error(message, error instanceof Error ? error : String(error));
  },
};

/** A handler with logging, metrics and tracing around it. */
export function observed<E, R>(handler: (event: E, context: Context) => Promise<R>) {
  return middy<E, R>()
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics, { captureColdStartMetric: true }))
    .handler(handler);
}

import { JobAccepted } from './answers.ts';
import { checkAccess } from './access.ts';
import { idempotencyKey, once, requestHash } from './idempotency.ts';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { z } from 'zod';
import type { Caller } from '../model/entities.ts';
import { BatonError, ErrorCode, GateRefused, Invalid, NotFound, TooLarge, Unauthorized } from '../model/errors.ts';
import { MAX_BODY } from './route.ts';
import { consoleTelemetry, type Deps, type Telemetry } from '../ports/deps.ts';
import { PUBLIC_ROUTES, ROUTES } from './routes/index.ts';

/** An HTTP API (payload 2.0) event whose Lambda authorizer put the Caller in its context. */
export type ApiEvent = APIGatewayProxyEventV2 & { requestContext: { authorizer?: { lambda?: { caller?: string } } } };

const BY_KEY = new Map(ROUTES.map((r) => [`${r.method} ${r.path}`, r]));
const PUBLIC_BY_KEY = new Map(PUBLIC_ROUTES.map((r) => [`${r.method} ${r.path}`, r]));

/** The largest body a route takes (bytes). */
/**
 * Where an answer is not what its route's schema says (lib/api/answers.ts), what differs; undefined where it
 * is, or the route declares no answer. The tests' servers check every answer with it.
 */
export function answerIssues(routeKey: string, status: number, body: string | undefined): string | undefined {
  const route = BY_KEY.get(routeKey);
  const schema = status === 202 && route?.runsAsJob ? JobAccepted : status < 300 ? route?.answer : undefined;
  if (!schema) return undefined;
  const parsed = schema.safeParse(body ? JSON.parse(body) : undefined);
  return parsed.success ? undefined : describeIssues(`the ${status} answer of ${routeKey}`, parsed.error);
}

export function bodyLimit(routeKey: string): number {
  return BY_KEY.get(routeKey)?.maxBody ?? MAX_BODY;
}

/** Whether a route key is open without a token. */
export const isPublicRoute = (routeKey: string): boolean => PUBLIC_BY_KEY.has(routeKey);

/** Finds the route for a method and concrete path, as API Gateway would: its route key and path parameters. */
export function matchRoute(
  method: string,
  path: string,
): { routeKey: string; params: Record<string, string> } | { allowed: string[] } | undefined {
  const parts = path.split('/').filter(Boolean);
  const allowed: string[] = [];
  for (const r of [...ROUTES, ...PUBLIC_ROUTES]) {
    const want = r.path.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = want.every((w, i) => {
      const p = parts[i]!;
      if (w.startsWith('{')) {
        try {
          params[w.slice(1, -1)] = decodeURIComponent(p);
        } catch {
          throw new Invalid(`the path segment '${p.slice(0, 64)}' has a malformed %-escape`);
        }
        return true;
      }
      return w === p;
    });
    if (!ok) continue;
    if (r.method === method) return { routeKey: `${r.method} ${r.path}`, params };
    allowed.push(r.method);
  }
  return allowed.length ? { allowed } : undefined;
}

/** Turns zod issues into one message naming each field. */
export function describeIssues(where: string, error: z.ZodError): string {
  const parts = error.issues.map((i) => {
    if (i.code === 'unrecognized_keys')
      return i.keys.map((k) => `unknown field '${[...i.path, k].join('.')}'`).join('; ');
    const field = i.path.join('.');
    // A bad map key reports its own reason one level down.
    const message = i.code === 'invalid_key' ? (i.issues[0]?.message ?? i.message) : i.message;
    return field ? `${field}: ${message}` : message;
  });
  return `invalid ${where}: ${parts.join('; ')}`;
}

function reply(status: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? '' : JSON.stringify(body),
  };
}

/** The HTTP status of each domain error: the one place errors meet HTTP. */
export const STATUS: Record<ErrorCode, number> = {
  [ErrorCode.Invalid]: 400,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.GateRefused]: 409,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.Unprocessable]: 422,
  [ErrorCode.Unavailable]: 503,
};

/** AWS SDK errors that mean the database is away or throttling, not that the request is wrong. */
const UNAVAILABLE = new Set([
  'TimeoutError',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TransactionInProgressException',
]);
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

/** Whether an error (or what caused it, as ElectroDB wraps the SDK's) says the database could not answer. */
export function isUnavailable(e: unknown, depth = 0): boolean {
  if (!e || typeof e !== 'object' || depth > 4) return false;
  const x = e as {
    name?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: unknown;
    errors?: unknown[];
  };
  if (
    (x.name && UNAVAILABLE.has(x.name)) ||
    (x.code && NETWORK.has(x.code)) ||
    (x.$metadata?.httpStatusCode ?? 0) >= 500
  )
    return true;
  return (
    isUnavailable(x.cause, depth + 1) || (Array.isArray(x.errors) && x.errors.some((y) => isUnavailable(y, depth + 1)))
  );
}

/**
 * Maps any error to `{Code, Message}`: domain errors keep their message under their status (a gate
 * refusal with what was decided: the gates and the Spaces held back); anything else is a 500 that
 * hides internals.
 */
export function errorReply(e: unknown, telemetry: Telemetry = consoleTelemetry): APIGatewayProxyStructuredResultV2 {
  if (e instanceof GateRefused) return reply(STATUS[e.code], { ...e.details, Code: e.code, Message: e.message });
  if (e instanceof BatonError)
    return reply(
      STATUS[e.code],
      { Code: e.code, Message: e.message },
      e.code === ErrorCode.Unavailable ? { 'retry-after': '2' } : {},
    );
  // The `yaml` library stops expanding aliases past its count: data built to do that is the caller's, not a fault.
  if (e instanceof ReferenceError && /alias/i.test(e.message))
    return reply(400, {
      Code: ErrorCode.Invalid,
      Message: `the data repeats aliases too often to be edited: ${e.message}`,
    });
  if (isUnavailable(e)) {
    telemetry.error('the database did not answer: 503', e);
    return reply(
      503,
      {
        Code: ErrorCode.Unavailable,
        Message:
          'the database is not answering right now: retry the request shortly (a rerun finishes what this one began)',
      },
      { 'retry-after': '2' },
    );
  }
  telemetry.error('unhandled error answered 500', e);
  return reply(500, { Code: 'Internal', Message: 'internal error; the server log has the details' });
}

function parseBody(event: ApiEvent): unknown {
  if (!event.body) return undefined;
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (!text.trim()) return undefined;
  let proto = false;
  let parsed: unknown;
  try {
    // `__proto__` as a key would reach objects' prototypes through later copies: refused wherever it is.
    parsed = JSON.parse(text, (k, v: unknown) => {
      if (k === '__proto__') proto = true;
      return v;
    });
  } catch (e) {
    throw new Invalid(`request body is not JSON: ${(e as Error).message}`);
  }
  if (proto)
    throw new Invalid(
      "request body has a key '__proto__', which is not allowed anywhere (it names an object's prototype)",
    );
  return parsed;
}

/** The API's one entry: validate, call the operation, shape the reply. Used by the Lambda and the local server. */
export async function handleApiEvent(deps: Deps, event: ApiEvent): Promise<APIGatewayProxyStructuredResultV2> {
  try {
    const open = PUBLIC_BY_KEY.get(event.routeKey);
    if (open) {
      const out = await open.handle();
      return reply(out.status ?? 200, out.body, out.headers);
    }
    const route = BY_KEY.get(event.routeKey);
    if (!route) throw new NotFound(`no route ${event.routeKey}`);
    const context = event.requestContext.authorizer?.lambda?.caller;
    if (!context) throw new Unauthorized('no caller: the authorizer did not run for this route');
    const caller = JSON.parse(context) as Caller;
    const size = event.body
      ? event.isBase64Encoded
        ? Math.floor((event.body.length * 3) / 4)
        : Buffer.byteLength(event.body)
      : 0;
    if (size > (route.maxBody ?? MAX_BODY))
      throw new TooLarge(
        `the request body is ${Math.ceil(size / 1024)} KB, more than this route takes (${(route.maxBody ?? MAX_BODY) / 1024} KB)`,
      );
    const query = route.query.safeParse(event.queryStringParameters ?? {});
    if (!query.success) throw new Invalid(describeIssues('query', query.error));
    const raw = parseBody(event);
    const body = route.body.safeParse(raw);
    if (!body.success)
      throw new Invalid(
        raw !== undefined && route.body instanceof z.ZodUndefined
          ? 'this route takes no request body'
          : describeIssues('request body', body.error),
      );
    const params = (event.pathParameters ?? {}) as Record<string, string>;
    const space = await checkAccess(deps, caller, route, params);
    const rawText = event.body
      ? event.isBase64Encoded
        ? Buffer.from(event.body, 'base64').toString('utf8')
        : event.body
      : '';
    const run = async (): Promise<APIGatewayProxyStructuredResultV2> => {
      const out = await route.handle({
        deps,
        caller,
        params,
        query: query.data,
        body: body.data,
        raw: { body: rawText, headers: event.headers ?? {} },
        get space() {
          if (!space) throw new Error(`${route.name} (${route.path}) names no Space`);
          return space;
        },
      });
      const status = out.status ?? 200;
      if (out.text !== undefined)
        return {
          statusCode: status,
          headers: { 'content-type': out.contentType ?? 'text/plain', ...out.headers },
          body: out.text,
        };
      return reply(status, out.body, out.headers);
    };
    // A POST with an Idempotency-Key runs once; its retries get the first answer.
    const key = route.method === 'POST' ? idempotencyKey(event.headers ?? {}) : undefined;
    return key
      ? await once(deps, caller, key, requestHash(event.routeKey, params, query.data, rawText), run)
      : await run();
  } catch (e) {
    return errorReply(e, deps.telemetry);
  }
}

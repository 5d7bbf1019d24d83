/**
 * `Idempotency-Key` on POST: a retried request (the same key, from the same user, asking the same
 * thing) gets the first answer again and writes nothing twice. The key is claimed before the operation
 * runs; its answer (any but a 5xx, which gives the key back) is kept a day, gzipped, beside the data.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Caller } from '../model/entities.ts';
import { Conflict, Invalid, Unprocessable } from '../model/errors.ts';
import type { Deps } from '../ports/deps.ts';
import type { IdempotencyRecord } from '../ports/store.ts';

/** How long a key and its answer are kept (seconds). */
export const IDEMPOTENCY_SECONDS = 24 * 3600;
/** An answer larger than this (gzipped) is not kept: a replay says the request was done, and where to read its result. */
const MAX_KEPT = 300 * 1024;

/** The Idempotency-Key of a request, checked: 1–255 visible ASCII characters. */
export function idempotencyKey(headers: Record<string, string | undefined>): string | undefined {
  const key =
    headers['idempotency-key'] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === 'idempotency-key')?.[1];
  if (key === undefined) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(key))
    throw new Invalid('Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say)');
  return key;
}

/** What makes two requests the same request: the route, its path parameters, query and body. */
export function requestHash(routeKey: string, params: Record<string, string>, query: unknown, body: string): string {
  return createHash('sha256')
    .update(JSON.stringify([routeKey, params, query ?? {}, body]))
    .digest('hex');
}

function replay(r: IdempotencyRecord): APIGatewayProxyStructuredResultV2 {
  const headers = { ...(r.Headers ?? {}), 'idempotent-replayed': 'true' };
  if (r.Body === undefined)
    return {
      statusCode: r.Status ?? 200,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        Replayed: true,
        Message: 'this request was done already; its answer was too large to keep: read what it made with GET',
      }),
    };
  return { statusCode: r.Status ?? 200, headers, body: gunzipSync(Buffer.from(r.Body, 'base64')).toString('utf8') };
}

/**
 * Runs `work` once per key: a first request claims the key and keeps its answer; a retry with the same
 * request gets that answer; a different request with the key is a 422; one while the first runs, a 409.
 */
export async function once(
  deps: Deps,
  caller: Caller,
  key: string,
  hash: string,
  work: () => Promise<APIGatewayProxyStructuredResultV2>,
): Promise<APIGatewayProxyStructuredResultV2> {
  const now = deps.now();
  const claim: IdempotencyRecord = {
    OrganizationID: caller.OrganizationID,
    UserID: caller.UserID,
    Key: key,
    RequestHash: hash,
    State: 'InProgress',
    CreatedAt: now.toISOString(),
    ExpiresAtEpoch: Math.floor(now.getTime() / 1000) + IDEMPOTENCY_SECONDS,
  };
  try {
    await deps.store.claimIdempotency(claim);
  } catch (e) {
    if (!(e instanceof Conflict)) throw e;
    const first = await deps.store.getIdempotency(caller.OrganizationID, caller.UserID, key);
    // Gone already (expired, or given back by a 5xx): this request takes the key as a first one would.
    if (!first || first.ExpiresAtEpoch * 1000 < now.getTime()) {
      if (first) await deps.store.releaseIdempotency(caller.OrganizationID, caller.UserID, key);
      return once(deps, caller, key, hash, work);
    }
    if (first.RequestHash !== hash)
      throw new Unprocessable(
        `Idempotency-Key '${key}' was used for a different request; use a new key for a new request`,
      );
    if (first.State === 'InProgress')
      throw new Conflict(`a request with Idempotency-Key '${key}' is still running; retry it in a moment`);
    return replay(first);
  }
  let result: APIGatewayProxyStructuredResultV2;
  try {
    result = await work();
  } catch (e) {
    await deps.store.releaseIdempotency(caller.OrganizationID, caller.UserID, key);
    throw e;
  }
  const status = result.statusCode ?? 200;
  if (status >= 500) {
    await deps.store.releaseIdempotency(caller.OrganizationID, caller.UserID, key);
    return result;
  }
  const body = gzipSync(Buffer.from(result.body ?? '', 'utf8')).toString('base64');
  await deps.store.finishIdempotency({
    ...claim,
    State: 'Done',
    Status: status,
    Body: body.length <= MAX_KEPT ? body : undefined,
    Headers: result.headers as Record<string, string> | undefined,
  });
  return result;
}

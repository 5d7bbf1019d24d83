import type { Caller } from '../model/entities.ts';
import { Unauthorized } from '../model/errors.ts';
import { createHash } from 'node:crypto';
import type { Store } from '../ports/store.ts';

/** Tokens are stored only as this hash. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Resolves `Authorization: Bearer <token>` to its user; the Lambda authorizer and the local server both call this. */
export async function authenticate(store: Store, authorization: string | undefined): Promise<Caller> {
  if (!authorization) throw new Unauthorized('no bearer token; send Authorization: Bearer <token>');
  const m = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  if (!m) throw new Unauthorized('the Authorization header must be "Bearer <token>"');
  const caller = await store.tokenOwner(tokenHash(m[1]!));
  if (!caller) throw new Unauthorized('the bearer token is not valid');
  return caller;
}

/** The Lambda authorizer's answer (HTTP API simple response), computed the same way locally. */
export async function authorizeRequest(store: Store, headers: Record<string, string | undefined>): Promise<{ isAuthorized: boolean; context?: Caller; error?: string }> {
  try {
    const caller = await authenticate(store, headers.authorization ?? headers.Authorization);
    return { isAuthorized: true, context: caller };
  } catch (e) {
    if (e instanceof Unauthorized) return { isAuthorized: false, error: e.message };
    throw e;
  }
}

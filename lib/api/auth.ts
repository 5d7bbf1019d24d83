import type { ApiToken, Caller } from '../model/entities.ts';
import { Unauthorized } from '../model/errors.ts';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Store } from '../ports/store.ts';
import { tokenHash } from '../people/people.ts';

export { tokenHash };

/** The secret of `Authorization: Bearer <secret>`. */
export function bearerSecret(authorization: string | undefined): string {
  if (!authorization) throw new Unauthorized('no bearer token; send Authorization: Bearer <token>');
  const m = /^Bearer\s+(\S+)$/i.exec(authorization.trim());
  if (!m) throw new Unauthorized('the Authorization header must be "Bearer <token>"');
  return m[1]!;
}

/**
 * Resolves `Authorization: Bearer <token>` to who is calling, at `now`: a revoked or expired token, or
 * one whose user was deleted, is refused at once. A user's caller carries their role and groups; a
 * service token's carries its scope instead. The Lambda authorizer and the local server both call this.
 */
export async function authenticate(store: Store, authorization: string | undefined, now: Date): Promise<Caller> {
  const token = await store.getToken(tokenHash(bearerSecret(authorization)));
  if (!token) throw new Unauthorized('the bearer token is not valid');
  if (token.RevokedAt) throw new Unauthorized(`the bearer token was revoked at ${token.RevokedAt}`);
  if (token.ExpiresAt && Date.parse(token.ExpiresAt) <= now.getTime())
    throw new Unauthorized(`the bearer token expired at ${token.ExpiresAt}`);
  return callerOf(store, token);
}

async function callerOf(store: Store, token: ApiToken): Promise<Caller> {
  const org = token.OrganizationID;
  if (token.Service) {
    return {
      OrganizationID: org,
      UserID: token.TokenID,
      Service: {
        Name: token.Service,
        Scope: token.Scope ?? 'ReportStatus',
        SpaceIDs: token.SpaceIDs ?? [],
        RequireSignature: !!token.RequireSignature,
      },
    };
  }
  const [user, groups] = await Promise.all([store.getUser(org, token.UserID ?? ''), store.listGroups(org)]);
  if (!user) throw new Unauthorized('the bearer token belongs to a user who no longer exists');
  return {
    OrganizationID: org,
    UserID: user.UserID,
    Role: user.Role,
    GroupIDs: groups
      .filter((g) => g.MemberUserIDs.includes(user.UserID))
      .map((g) => g.GroupID)
      .sort(),
  };
}

/**
 * The Lambda authorizer's answer (HTTP API simple response), computed the same way locally. The caller
 * travels as one JSON string: authorizer context values must be flat.
 */
export async function authorizeRequest(
  store: Store,
  headers: Record<string, string | undefined>,
  now: Date,
): Promise<{ isAuthorized: boolean; context?: { caller: string }; error?: string }> {
  try {
    const caller = await authenticate(store, headers.authorization ?? headers.Authorization, now);
    return { isAuthorized: true, context: { caller: JSON.stringify(caller) } };
  } catch (e) {
    if (e instanceof Unauthorized) return { isAuthorized: false, error: e.message };
    throw e;
  }
}

/**
 * Flux's generic-hmac provider signs each body: `X-Signature: sha256=<hex HMAC-SHA256 of the body>`,
 * keyed by the provider secret's token, which for Baton is the bearer token itself (only its hash is
 * stored, so the key comes with the request). True when the signature matches.
 */
export function signatureMatches(body: string, secret: string, header: string | undefined): boolean {
  const m = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '');
  if (!m) return false;
  const want = createHmac('sha256', secret).update(body, 'utf8').digest();
  const got = Buffer.from(m[1]!, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

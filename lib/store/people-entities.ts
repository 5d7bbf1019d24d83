import { Entity } from 'electrodb';
import { ROLES } from '../model/entities.ts';
import { any, key, num, primary, reqAny, reqNum, reqStr, service, str } from './entity-kit.ts';

/** Organizations, their members, groups and tokens, and the Idempotency-Keys their requests claim. */

export const Organization = new Entity({
  model: { entity: 'organization', version: '1', service },
  attributes: { OrganizationID: reqStr, Slug: reqStr, CreatedAt: reqStr },
  indexes: { primary: primary(['OrganizationID'], []) },
});

/** An organization member. */
export const User = new Entity({
  model: { entity: 'user', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    UserID: reqStr,
    Slug: reqStr,
    DisplayName: str,
    Role: { type: ROLES, required: true },
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    Version: reqNum,
  },
  indexes: { primary: primary(['OrganizationID'], ['UserID']) },
});

export const Group = new Entity({
  model: { entity: 'group', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    GroupID: reqStr,
    Slug: reqStr,
    DisplayName: str,
    MemberUserIDs: reqAny,
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    Version: reqNum,
  },
  indexes: { primary: primary(['OrganizationID'], ['GroupID']) },
});

/**
 * An API token, stored only as the sha256 of the secret: the authorizer's one GetItem. Its indexes: an
 * organization's tokens by ID (revoke by ID), oldest first (a page at a time), and one user's oldest first
 * (a member's page, a deleted user's tokens; a service token has no user and is not in it).
 */
export const ApiToken = new Entity({
  model: { entity: 'token', version: '1', service },
  attributes: {
    TokenHash: reqStr,
    TokenID: str,
    OrganizationID: reqStr,
    UserID: str,
    Service: str,
    Scope: str,
    SpaceIDs: any,
    RequireSignature: { type: 'boolean' },
    Description: str,
    ExpiresAt: str,
    RevokedAt: str,
    CreatedAt: reqStr,
    CreatedBy: str,
    Version: reqNum,
    // The keys of one user's part of the index (`<org>#<user>`, `<CreatedAt>#<TokenID>`), written by the store with a user's token only (indexKeys).
    UserKey: { type: 'string', hidden: true },
    UserOrder: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['TokenHash'], []),
    byOrg: { index: 'gsi1', pk: key(['OrganizationID'], 'gsi1pk'), sk: key(['TokenID'], 'gsi1sk') },
    byCreated: { index: 'gsi2', pk: key(['OrganizationID'], 'gsi2pk'), sk: key(['CreatedAt', 'TokenID'], 'gsi2sk') },
    byUser: {
      index: 'gsi3',
      condition: (t: Record<string, unknown>) => !!t.UserKey,
      pk: key(['UserKey'], 'gsi3pk'),
      sk: key(['UserOrder'], 'gsi3sk'),
    },
  },
});

/** A POST made with an Idempotency-Key: what it asked (hashed) and, once done, what it answered; kept a day (TTL). */
export const IdempotencyRecord = new Entity({
  model: { entity: 'idempotency', version: '1', service },
  attributes: {
    OrganizationID: reqStr,
    UserID: reqStr,
    Key: reqStr,
    RequestHash: reqStr,
    State: { type: ['InProgress', 'Done'] as const, required: true },
    Status: num,
    Body: str,
    Headers: any,
    CreatedAt: reqStr,
    ExpiresAtEpoch: reqNum,
  },
  indexes: { primary: primary(['OrganizationID', 'UserID', 'Key'], []) },
});

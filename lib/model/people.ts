/** People and what they may do: users with a role, groups, bearer tokens, a Space's permissions, and attestations. */
import type { Common, InSpace, StringMap } from './common.ts';
import { Forbidden } from './errors.ts';

/** An organization member's role: what they may do wherever a Space says nothing else. */
export const ROLES = ['Admin', 'Member', 'Viewer'] as const;
export type Role = (typeof ROLES)[number];

/** What a Space's permissions grant. */
export const SPACE_VERBS = ['View', 'Edit', 'Approve', 'Manage', 'ReportStatus'] as const;
export type SpaceVerb = (typeof SPACE_VERBS)[number];

/**
 * The verbs a role has in a Space whose Permissions do not name that verb. Admins have every verb in
 * every Space, whatever its Permissions say (someone must be able to fix them).
 */
export const ROLE_DEFAULTS: Record<Role, readonly SpaceVerb[]> = {
  Admin: SPACE_VERBS,
  Member: ['View', 'Edit', 'Approve'],
  Viewer: ['View'],
};

/** Who a Space grants a verb to. Naming a verb replaces the role defaults for it in that Space. */
export interface Grant {
  UserIDs: string[];
  GroupIDs: string[];
}
export type Permissions = Partial<Record<SpaceVerb, Grant>>;

export interface User extends Omit<Common, 'Labels' | 'Annotations'> {
  UserID: string;
  Role: Role;
}

export interface Group extends Omit<Common, 'Labels' | 'Annotations'> {
  GroupID: string;
  MemberUserIDs: string[];
}

/** The only scope a service token can carry: report live status (hooks, PATCH …/release/{n}). */
export const SERVICE_SCOPES = ['ReportStatus'] as const;
export type ServiceScope = (typeof SERVICE_SCOPES)[number];

/** A bearer token, stored by the sha256 of its secret (the secret itself is shown once and never kept). */
export interface ApiToken {
  TokenHash: string;
  TokenID: string;
  OrganizationID: string;
  /** The user it acts as; absent on a service token. */
  UserID?: string;
  /** A service token: the deploy tool's name, its scope, and the Spaces it may report on (none = all). */
  Service?: string;
  Scope?: ServiceScope;
  SpaceIDs?: string[];
  /** Hooks sent with it must carry an `X-Signature: sha256=<hmac of the body keyed by the token>` (Flux generic-hmac). */
  RequireSignature?: boolean;
  Description?: string;
  ExpiresAt?: string;
  RevokedAt?: string;
  CreatedAt: string;
  CreatedBy: string;
  Version: number;
}

/** A token as listed: never its hash. */
export type TokenView = Omit<ApiToken, 'TokenHash'>;

/** Who is calling: resolved from the bearer token by the authorizer. */
export interface Caller {
  OrganizationID: string;
  /** The user; for a service token, the token's ID. */
  UserID: string;
  /** Absent only for the system's own work (event consumers): every request through the API has one. */
  Role?: Role;
  GroupIDs?: string[];
  /** Set for a service token: it may only report status, in these Spaces (none = all). */
  Service?: { Name: string; Scope: ServiceScope; SpaceIDs: string[]; RequireSignature: boolean };
}

/** One revision an attestation speaks for: its content hash, so later identical content is covered too. */
export interface AttestedRevision {
  UnitID: string;
  RevisionNum: number;
  DataHash: string;
}

/** Immutable: revoking records another Attestation naming it in RevokedAttestationID. */
export interface Attestation extends InSpace {
  AttestationID: string;
  UserID: string;
  Type: string;
  Result: 'Pass' | 'Fail';
  Note?: string;
  Claims: StringMap;
  ChangeOrderID?: string;
  ReleaseID?: string;
  ExpiresAt?: string;
  RevokedAttestationID?: string;
  Revisions: AttestedRevision[];
}

/** An attestation as read: whether (and by which record) it was revoked. */
export type AttestationView = Attestation & { RevokedBy?: string };

/**
 * Whether the caller may do `verb` in `space`: Admins always; a service token only ReportStatus, in its
 * Spaces; otherwise whom the Space's Permissions name for that verb (users, or members of groups), or,
 * when they do not name it, the caller's role defaults. The system's own work (no Role) may do anything.
 */
export function allows(
  caller: Caller,
  space: { SpaceID: string; Permissions?: Permissions },
  verb: SpaceVerb,
): boolean {
  if (caller.Service)
    return (
      verb === 'ReportStatus' && (!caller.Service.SpaceIDs.length || caller.Service.SpaceIDs.includes(space.SpaceID))
    );
  if (!caller.Role || caller.Role === 'Admin') return true;
  const grant = space.Permissions?.[verb];
  if (grant) return grant.UserIDs.includes(caller.UserID) || grant.GroupIDs.some((g) => caller.GroupIDs?.includes(g));
  return ROLE_DEFAULTS[caller.Role].includes(verb);
}

/** Durations as users write them: 90s, 15m, 720h, 30d. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d{1,7})([smhd])$/.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

/** Refuses (403, naming the verb and the Space) unless the caller may `verb` in every one of the Spaces. */
export function requireVerb(
  caller: Caller,
  spaces: Iterable<{ SpaceID: string; Slug: string; Permissions?: Permissions }>,
  verb: SpaceVerb,
  what: string,
): void {
  for (const s of spaces)
    if (!allows(caller, s, verb)) throw new Forbidden(`${verb} permission in space '${s.Slug}' is needed to ${what}`);
}

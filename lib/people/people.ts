/**
 * Users, groups and tokens of an organization: who can call Baton and as what. Only Admins manage
 * users and groups; anyone manages their own tokens, an Admin anyone's. A token's secret is returned
 * once, when it is made; only its sha256 is stored.
 */
import { createHash } from 'node:crypto';
import { isId } from '../model/ids.ts';
import type {
  ApiToken,
  Caller,
  Grant,
  Group,
  Permissions,
  Role,
  ServiceScope,
  SpaceVerb,
  TokenView,
  User,
} from '../model/entities.ts';
import { Conflict, Forbidden, Invalid, NotFound, expectVersion } from '../model/errors.ts';
import { parseDuration } from '../model/entities.ts';
import { TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import type { PeopleDeps } from './ports.ts';

/** The hash a token is stored (and found) by. */
export function tokenHash(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function adminOnly(caller: Caller, what: string): void {
  if (caller.Role && caller.Role !== 'Admin') throw new Forbidden(`only an Admin may ${what}`);
}

export async function findUser(deps: PeopleDeps, caller: Caller, ref: string): Promise<User> {
  const id = isId(ref) ? ref.toLowerCase() : await deps.store.idInOrg(caller.OrganizationID, 'User', ref);
  const user = id ? await deps.store.getUser(caller.OrganizationID, id) : undefined;
  if (!user) throw new NotFound(`user '${ref}' not found`);
  return user;
}

export async function findGroup(deps: PeopleDeps, caller: Caller, ref: string): Promise<Group> {
  const id = isId(ref) ? ref.toLowerCase() : await deps.store.idInOrg(caller.OrganizationID, 'Group', ref);
  const group = id ? await deps.store.getGroup(caller.OrganizationID, id) : undefined;
  if (!group) throw new NotFound(`group '${ref}' not found`);
  return group;
}

/** A token view: never the hash. */
export function tokenView(t: ApiToken): TokenView {
  const { TokenHash: _h, ...view } = t;
  return view;
}

function expiry(deps: PeopleDeps, expiresIn: string | undefined): string | undefined {
  if (expiresIn === undefined) return undefined;
  const ms = parseDuration(expiresIn);
  if (!ms) throw new Invalid(`ExpiresIn '${expiresIn}' must be a duration such as 720h, 30d or 15m`);
  return new Date(deps.now().getTime() + ms).toISOString();
}

/** Creates a user with a first token; the secret is in the answer only. */
export async function createUser(
  deps: PeopleDeps,
  caller: Caller,
  body: { Slug: string; DisplayName?: string; Role?: Role },
): Promise<{ User: User; Token: string }> {
  adminOnly(caller, 'create users');
  const now = deps.now().toISOString();
  const user: User = {
    OrganizationID: caller.OrganizationID,
    UserID: deps.newId(),
    Slug: body.Slug,
    DisplayName: body.DisplayName ?? body.Slug,
    Role: body.Role ?? 'Member',
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  const secret = deps.newToken();
  const token: ApiToken = {
    TokenHash: tokenHash(secret),
    TokenID: deps.newId(),
    OrganizationID: caller.OrganizationID,
    UserID: user.UserID,
    Description: `first token of ${user.Slug}`,
    CreatedAt: now,
    CreatedBy: caller.UserID,
    Version: 1,
  };
  await deps.store.transact([
    { op: 'create', kind: 'User', item: user },
    { op: 'create', kind: 'ApiToken', item: token },
  ]);
  return { User: user, Token: secret };
}

export async function updateUser(
  deps: PeopleDeps,
  caller: Caller,
  user: User,
  body: { Version: number; Role?: Role; DisplayName?: string },
): Promise<User> {
  adminOnly(caller, 'change users');
  expectVersion(`user '${user.Slug}'`, user.Version, body.Version);
  if (user.UserID === caller.UserID && body.Role && body.Role !== 'Admin') await keepAnAdmin(deps, caller, user);
  const next: User = {
    ...user,
    Role: body.Role ?? user.Role,
    DisplayName: body.DisplayName ?? user.DisplayName,
    UpdatedAt: deps.now().toISOString(),
    Version: user.Version + 1,
  };
  await deps.store.transact([
    { op: 'update', kind: 'User', item: next, expectedVersion: user.Version, oldSlug: user.Slug },
  ]);
  return next;
}

/** An organization keeps at least one Admin. */
async function keepAnAdmin(deps: PeopleDeps, caller: Caller, leaving: User): Promise<void> {
  const admins = (await deps.store.listUsers(caller.OrganizationID)).filter(
    (u) => u.Role === 'Admin' && u.UserID !== leaving.UserID,
  );
  if (!admins.length)
    throw new Conflict(`'${leaving.Slug}' is the organization's last Admin; make another Admin first`);
}

/** Deletes a user with every token of theirs in the same transaction, so their tokens stop working at once. */
export async function deleteUser(
  deps: PeopleDeps,
  caller: Caller,
  user: User,
): Promise<{ Deleted: string; RevokedTokens: number }> {
  adminOnly(caller, 'delete users');
  if (user.Role === 'Admin') await keepAnAdmin(deps, caller, user);
  const tokens = await deps.store.tokensOfUser(caller.OrganizationID, user.UserID);
  const groups = (await deps.store.listGroups(caller.OrganizationID)).filter((g) =>
    g.MemberUserIDs.includes(user.UserID),
  );
  const now = deps.now().toISOString();
  // Each token as read: its Version guards the delete and its entry in the organization's order goes with it
  // (two items), where they fit one transaction; past that by its hash alone (the entry, left, is passed over when read).
  const whole = 1 + 2 * tokens.length + groups.length <= TRANSACTION_MAX_ITEMS;
  await deps.store.transact([
    { op: 'delete', kind: 'User', item: user },
    ...tokens.map((t) => ({
      op: 'delete' as const,
      kind: 'ApiToken' as const,
      item: whole ? t : { TokenHash: t.TokenHash },
    })),
    ...groups.map((g) => ({
      op: 'update' as const,
      kind: 'Group' as const,
      item: {
        ...g,
        MemberUserIDs: g.MemberUserIDs.filter((m) => m !== user.UserID),
        UpdatedAt: now,
        Version: g.Version + 1,
      },
      expectedVersion: g.Version,
    })),
  ]);
  return { Deleted: user.Slug, RevokedTokens: tokens.length };
}

export async function createGroup(
  deps: PeopleDeps,
  caller: Caller,
  body: { Slug: string; DisplayName?: string; Members?: string[] },
): Promise<Group> {
  adminOnly(caller, 'create groups');
  const members = await Promise.all((body.Members ?? []).map(async (m) => (await findUser(deps, caller, m)).UserID));
  const now = deps.now().toISOString();
  const group: Group = {
    OrganizationID: caller.OrganizationID,
    GroupID: deps.newId(),
    Slug: body.Slug,
    DisplayName: body.DisplayName ?? body.Slug,
    MemberUserIDs: [...new Set(members)],
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  await deps.store.transact([{ op: 'create', kind: 'Group', item: group }]);
  return group;
}

/** Adds or removes members (by slug or ID). */
export async function changeMembers(
  deps: PeopleDeps,
  caller: Caller,
  group: Group,
  add: string[],
  remove: string[],
): Promise<Group> {
  adminOnly(caller, 'change groups');
  const adding = await Promise.all(add.map(async (m) => (await findUser(deps, caller, m)).UserID));
  const removing = new Set(await Promise.all(remove.map(async (m) => (await findUser(deps, caller, m)).UserID)));
  const members = [...new Set([...group.MemberUserIDs, ...adding])].filter((m) => !removing.has(m));
  const next: Group = {
    ...group,
    MemberUserIDs: members,
    UpdatedAt: deps.now().toISOString(),
    Version: group.Version + 1,
  };
  await deps.store.transact([
    { op: 'update', kind: 'Group', item: next, expectedVersion: group.Version, oldSlug: group.Slug },
  ]);
  return next;
}

export async function deleteGroup(deps: PeopleDeps, caller: Caller, group: Group): Promise<void> {
  adminOnly(caller, 'delete groups');
  await deps.store.transact([{ op: 'delete', kind: 'Group', item: group }]);
}

/** What a token is made with: for a user (default the caller), or a service token with a scope. */
export interface TokenInput {
  User?: string;
  Service?: string;
  Scope?: ServiceScope;
  Spaces?: string[];
  RequireSignature?: boolean;
  ExpiresIn?: string;
  Description?: string;
}

/** Makes a token; its secret is in the answer only. A service token carries a scope instead of a user's rights. */
export async function createToken(
  deps: PeopleDeps,
  caller: Caller,
  body: TokenInput,
  spaceIds: (refs: string[]) => Promise<string[]>,
): Promise<{ Token: string; TokenInfo: TokenView }> {
  if (caller.Service) throw new Forbidden('a service token cannot make tokens');
  const now = deps.now().toISOString();
  let token: ApiToken;
  if (body.Service) {
    adminOnly(caller, 'create service tokens');
    if (body.User) throw new Invalid('a token is for a user or a service, not both');
    if (body.Scope !== 'ReportStatus')
      throw new Invalid(
        "a service token needs Scope 'ReportStatus' (the only scope there is: post to /hooks and write live status)",
      );
    token = {
      TokenHash: '',
      TokenID: deps.newId(),
      OrganizationID: caller.OrganizationID,
      Service: body.Service,
      Scope: body.Scope,
      SpaceIDs: await spaceIds(body.Spaces ?? []),
      RequireSignature: body.RequireSignature || undefined,
      CreatedAt: now,
      CreatedBy: caller.UserID,
      Version: 1,
    };
  } else {
    if (body.Scope || body.Spaces?.length || body.RequireSignature)
      throw new Invalid('Scope, Spaces and RequireSignature apply to a service token (--service)');
    const user = body.User ? await findUser(deps, caller, body.User) : undefined;
    if (user && user.UserID !== caller.UserID) adminOnly(caller, "create another user's tokens");
    token = {
      TokenHash: '',
      TokenID: deps.newId(),
      OrganizationID: caller.OrganizationID,
      UserID: user?.UserID ?? caller.UserID,
      CreatedAt: now,
      CreatedBy: caller.UserID,
      Version: 1,
    };
  }
  const secret = deps.newToken();
  token = {
    ...token,
    TokenHash: tokenHash(secret),
    ExpiresAt: expiry(deps, body.ExpiresIn),
    Description: body.Description,
    Version: 1,
  };
  await deps.store.transact([{ op: 'create', kind: 'ApiToken', item: token }]);
  return { Token: secret, TokenInfo: tokenView(token) };
}

/** The tokens the caller may see: their own; an Admin every token of the organization. Oldest first (then by ID), as a page is. */
export async function listTokens(deps: PeopleDeps, caller: Caller): Promise<TokenView[]> {
  // A member's own are read from their part of the entries' index, not found among the organization's.
  const seen =
    caller.Role === 'Admin'
      ? await deps.store.tokensOf(caller.OrganizationID)
      : await deps.store.tokensOfUser(caller.OrganizationID, caller.UserID);
  return seen
    .map(tokenView)
    .sort((a, b) => (a.CreatedAt < b.CreatedAt ? -1 : a.CreatedAt > b.CreatedAt ? 1 : a.TokenID < b.TokenID ? -1 : 1));
}

/** A page of the tokens the caller may see (as `listTokens`), with the store's cursor: the database keeps a member's own. */
export async function tokenPage(
  deps: PeopleDeps,
  caller: Caller,
  want: number,
  after?: string,
): Promise<{ items: { item: TokenView; cursor: string }[]; next?: string }> {
  const p = await deps.store.tokenPage(
    caller.OrganizationID,
    want,
    after,
    caller.Role === 'Admin' ? {} : { userId: caller.UserID },
  );
  return { items: p.items.map((x) => ({ item: tokenView(x.token), cursor: x.cursor })), next: p.next };
}

/** Revokes a token by its ID: it stops working at once (the AWS authorizer's cache aside, see docs/guide.md). */
export async function revokeToken(deps: PeopleDeps, caller: Caller, tokenId: string): Promise<TokenView> {
  const t = await deps.store.tokenById(caller.OrganizationID, tokenId.toLowerCase());
  if (!t || (caller.Role !== 'Admin' && t.UserID !== caller.UserID)) throw new NotFound(`token '${tokenId}' not found`);
  if (t.RevokedAt) return tokenView(t);
  const next: ApiToken = { ...t, RevokedAt: deps.now().toISOString(), Version: t.Version + 1 };
  await deps.store.transact([{ op: 'update', kind: 'ApiToken', item: next, expectedVersion: t.Version }]);
  return tokenView(next);
}

/** A Space's Permissions after a merge-patch: each verb named is replaced (users and groups by slug or ID), null removes it. */
export async function patchPermissions(
  deps: PeopleDeps,
  caller: Caller,
  have: Permissions | undefined,
  patch: Partial<Record<SpaceVerb, { UserIDs?: string[]; GroupIDs?: string[] } | null>>,
): Promise<Permissions | undefined> {
  const out: Permissions = { ...(have ?? {}) };
  for (const [verb, grant] of Object.entries(patch) as [
    SpaceVerb,
    { UserIDs?: string[]; GroupIDs?: string[] } | null,
  ][]) {
    if (grant === null) {
      delete out[verb];
      continue;
    }
    const g: Grant = {
      UserIDs: [
        ...new Set(await Promise.all((grant.UserIDs ?? []).map(async (u) => (await findUser(deps, caller, u)).UserID))),
      ],
      GroupIDs: [
        ...new Set(
          await Promise.all((grant.GroupIDs ?? []).map(async (x) => (await findGroup(deps, caller, x)).GroupID)),
        ),
      ],
    };
    out[verb] = g;
  }
  return Object.keys(out).length ? out : undefined;
}

import { createConversions } from 'electrodb';
import type { ApiToken, Group, User } from '../model/entities.ts';
import { Conflict } from '../model/errors.ts';
import type { IdempotencyRecord, PeopleStore } from '../ports/store.ts';
import * as E from './entities.ts';
import { checkCursor, orgScope, type Table } from './table.ts';
import { GLOBAL, REASONS, type Writes } from './transact.ts';

const tokenConversions = createConversions(E.ApiToken).byAccessPattern;
/** In the organization's order (the cursors a token list hands out) and in one user's part of the index. */
const [tokenCursors, byUserCursors] = [tokenConversions.byCreated!, tokenConversions.byUser!];

/** Organizations, their users, groups and tokens, and the Idempotency-Keys their requests claim. */
export function people(t: Table, w: Writes): PeopleStore {
  const { db } = t;
  return {
    async createOrganization(org, admin, token) {
      await w.run(
        (e) => [e.Organization!.create(org).commit(), w.claim(GLOBAL, 'organization', org.Slug, org.OrganizationID)],
        ['organization exists', REASONS.slugTaken('organization', org.Slug)],
      );
      await w.transact([
        { op: 'create', kind: 'User', item: admin },
        { op: 'create', kind: 'ApiToken', item: token },
      ]);
    },
    async firstOrganization() {
      const { data } = await db.SlugClaim.query.primary({ Scope: GLOBAL }).go({ limit: 1 });
      const claim = data[0];
      if (!claim) return undefined;
      return (await db.Organization.get({ OrganizationID: claim.ID }).go()).data ?? undefined;
    },

    async getToken(tokenHash) {
      return ((await db.ApiToken.get({ TokenHash: tokenHash }).go()).data ?? undefined) as ApiToken | undefined;
    },
    async tokensOf(orgId) {
      return (await db.ApiToken.query.byOrg({ OrganizationID: orgId }).go({ pages: 'all' })).data as ApiToken[];
    },
    async tokenById(orgId, tokenId) {
      // The organization's index is keyed by TokenID: the one item, whatever the organization holds.
      return (
        (await db.ApiToken.query.byOrg({ OrganizationID: orgId, TokenID: tokenId }).go()).data as ApiToken[]
      ).find((tk) => tk.TokenID === tokenId);
    },
    async tokensOfUser(orgId, userId) {
      return (await db.ApiToken.query.byUser({ UserKey: `${orgId}#${userId}` }).go({ pages: 'all' }))
        .data as ApiToken[];
    },
    /**
     * A page of an organization's tokens, oldest first (CreatedAt, then ID), with DynamoDB's cursor over their
     * index; with `userId`, from that user's part of it (the database reads no other's). One query.
     */
    async tokenPage(orgId, limit, after, o = {}) {
      checkCursor(tokenCursors, after, { OrganizationID: orgId });
      const at =
        after === undefined ? undefined : (tokenCursors.fromCursor.toComposite(after) as Record<string, unknown>);
      // The cursor handed out is the organization's order's either way: the same place in both.
      const page = o.userId
        ? await db.ApiToken.query.byUser({ UserKey: `${orgId}#${o.userId}` }).go({
            limit,
            cursor: at
              ? byUserCursors.fromComposite.toCursor({
                  ...at,
                  UserKey: `${orgId}#${o.userId}`,
                  UserOrder: `${String(at.CreatedAt)}#${String(at.TokenID)}`,
                } as never)
              : null,
          })
        : await db.ApiToken.query.byCreated({ OrganizationID: orgId }).go({ limit, cursor: after ?? null });
      const tokens = page.data as ApiToken[];
      const last = tokens[tokens.length - 1];
      return {
        items: tokens.map((token) => ({ token, cursor: tokenCursors.fromComposite.toCursor(token as never) })),
        next: page.cursor && last ? tokenCursors.fromComposite.toCursor(last as never) : undefined,
      };
    },

    async getUser(orgId, userId) {
      return ((await db.User.get({ OrganizationID: orgId, UserID: userId }).go()).data ?? undefined) as
        User | undefined;
    },
    async listUsers(orgId) {
      return (await db.User.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data as User[];
    },
    async getGroup(orgId, groupId) {
      return ((await db.Group.get({ OrganizationID: orgId, GroupID: groupId }).go()).data ?? undefined) as
        Group | undefined;
    },
    async listGroups(orgId) {
      return (await db.Group.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data as Group[];
    },
    idInOrg(orgId, kind, slug) {
      return t.claimed(orgScope(orgId), kind.toLowerCase(), slug);
    },

    async getIdempotency(orgId, userId, key) {
      return ((await db.IdempotencyRecord.get({ OrganizationID: orgId, UserID: userId, Key: key }).go()).data ??
        undefined) as IdempotencyRecord | undefined;
    },
    async claimIdempotency(record) {
      try {
        await db.IdempotencyRecord.create(record).go();
      } catch (e) {
        if ((e as Error).message.includes('conditional request failed'))
          throw new Conflict(`Idempotency-Key '${record.Key}' is taken`);
        throw e;
      }
    },
    async finishIdempotency(record) {
      await db.IdempotencyRecord.put(record).go();
    },
    async releaseIdempotency(orgId, userId, key) {
      await db.IdempotencyRecord.delete({ OrganizationID: orgId, UserID: userId, Key: key }).go();
    },
  };
}

import { createConversions } from 'electrodb';
import type { ApiToken, Attestation, AttestationView, ChangeOrder, Release } from '../model/entities.ts';
import { COMPLETED } from '../model/change-orders.ts';
import { Invalid } from '../model/errors.ts';
import type { AttestationPage, ChangeOrderPage, ReleasePage, TokenPage } from '../ports/store.ts';
import { DynamoRecords, tryCursor, type AnyEntity } from './dynamo-records.ts';
import * as E from './entities.ts';

export const releaseEntryOf = (r: Record<string, unknown>) => ({
  SpaceID: String(r.SpaceID),
  ReleaseNum: Number(r.ReleaseNum),
  ReleaseID: String(r.ReleaseID),
});
/** A Release's entry under the ChangeOrder it was published at (none for one published at a revision). */
export const changeOrderReleaseOf = (r: Record<string, unknown>) =>
  r.ChangeOrderID
    ? { SpaceID: String(r.SpaceID), ChangeOrderID: String(r.ChangeOrderID), ReleaseID: String(r.ReleaseID) }
    : undefined;
/** The entry items of one Attestation (its place in the order; the revoked one's mark), as puts for a transaction. */
export const attestationEntryOps = (e: Record<string, AnyEntity>, a: Record<string, unknown>): unknown[] => [
  e.AttestationEntry.put({
    SpaceID: String(a.SpaceID),
    CreatedAt: String(a.CreatedAt),
    AttestationID: String(a.AttestationID),
  }).commit(),
  ...(a.RevokedAttestationID
    ? [
        e.AttestationRevoked.put({
          SpaceID: String(a.SpaceID),
          RevokedAttestationID: String(a.RevokedAttestationID),
          RevokedBy: String(a.AttestationID),
        }).commit(),
      ]
    : []),
];
/** The cover entries of one Attestation: one per Unit and content it names (a revocation names none). */
export function attestationCoversOf(
  a: Record<string, unknown>,
): { UnitID: string; DataHash: string; AttestationID: string; SpaceID: string }[] {
  const seen = new Map<string, { UnitID: string; DataHash: string; AttestationID: string; SpaceID: string }>();
  for (const r of (a.Revisions ?? []) as { UnitID: string; DataHash: string }[])
    seen.set(`${r.UnitID}#${r.DataHash}`, {
      UnitID: r.UnitID,
      DataHash: r.DataHash,
      AttestationID: String(a.AttestationID),
      SpaceID: String(a.SpaceID),
    });
  return [...seen.values()];
}
/**
 * A Space with at most this many attestations has them read whole for a gate, in one request (fewer than a
 * query per Unit weighed, and as bounded); past it, by the cover entries of the Units and content weighed.
 */
export const ATTESTATIONS_READ_WHOLE = 50;
/** A Space's attestations, all of them, each marked with the record among them that revoked it. */
function withRevokedBy(all: Attestation[]): AttestationView[] {
  const revokedBy = new Map(
    all.filter((a) => a.RevokedAttestationID).map((a) => [a.RevokedAttestationID!, a.AttestationID]),
  );
  return all.map((a) => (revokedBy.has(a.AttestationID) ? { ...a, RevokedBy: revokedBy.get(a.AttestationID) } : a));
}
/** Attestation entries' keys as DynamoDB cursors and back. */
const attestationCursors = createConversions(E.AttestationEntry);
/** Refuses (Invalid) a cursor that is not one of this Space's pages of these entries, before it is sent. */
function spaceCursor(
  conversions: { fromCursor: { toComposite(c: string): unknown } },
  after: string | undefined,
  spaceId: string,
): void {
  if (after === undefined) return;
  let start: { SpaceID?: unknown } | undefined;
  try {
    start = conversions.fromCursor.toComposite(after) as { SpaceID?: unknown } | undefined;
  } catch {
    start = undefined;
  }
  if (!start || start.SpaceID !== spaceId) throw new Invalid('continue token is not one this list issued');
}
export const changeOrderEntryOf = (c: Record<string, unknown>) => ({
  OrganizationID: String(c.OrganizationID),
  Slug: String(c.Slug),
  ChangeOrderID: String(c.ChangeOrderID),
  SpaceID: String(c.SpaceID),
});
/** ChangeOrder entries' keys as DynamoDB cursors and back. */
const changeOrderCursors = createConversions(E.ChangeOrderEntry);
/** A token's entry; a service token's is kept under the user '' of its organization. */
export const tokenEntryOf = (t: Record<string, unknown>) => ({
  OrganizationID: String(t.OrganizationID),
  CreatedAt: String(t.CreatedAt),
  TokenID: String(t.TokenID),
  TokenHash: String(t.TokenHash),
  UserID: t.UserID ? String(t.UserID) : '',
});
/** Token entries' keys as DynamoDB cursors and back. */
const tokenConversions = createConversions(E.TokenEntry);
/** In the organization's order (the cursors a token list hands out) and in one user's part of the index. */
const [tokenCursors, byUserCursors] = [
  tokenConversions.byAccessPattern.primary,
  tokenConversions.byAccessPattern.byUser,
];
/** Release entries' keys as DynamoDB cursors and back. */
const entryCursors = createConversions(E.ReleaseEntry);

/**
 * The entries that page lists with DynamoDB's own cursor (a Space's Releases and attestations newest
 * first, an organization's ChangeOrders and tokens) and the cover entries the gates read attestations by.
 * DynamoWrites (the transaction path, which writes entries with their items) extends it.
 */
export abstract class DynamoEntries extends DynamoRecords {
  async releasePage(spaceId: string, limit: number, after?: string): Promise<ReleasePage> {
    spaceCursor(entryCursors, after, spaceId);
    const page = await this.db.ReleaseEntry.query
      .primary({ SpaceID: spaceId })
      .go({ order: 'desc', limit, cursor: after ?? null });
    const byId = new Map(
      (
        await this.batchRead<Release>(
          this.db.Release,
          page.data.map((x) => ({ SpaceID: spaceId, ReleaseID: x.ReleaseID })),
        )
      ).map((r) => [r.ReleaseID, r]),
    );
    // Newest first, as the entries are (equal numbers, two Targets', by ID); each with the cursor that resumes after it.
    const items = page.data.flatMap((x) => {
      const release = byId.get(x.ReleaseID);
      return release
        ? [
            {
              release,
              cursor: entryCursors.fromComposite.toCursor({
                SpaceID: spaceId,
                ReleaseNum: x.ReleaseNum,
                ReleaseID: x.ReleaseID,
              }),
            },
          ]
        : [];
    });
    return { items, next: page.cursor ?? undefined };
  }

  async releasesAtChangeOrder(spaceId: string, changeOrderId: string): Promise<Release[]> {
    const entries = (
      await this.db.ChangeOrderRelease.query
        .primary({ SpaceID: spaceId, ChangeOrderID: changeOrderId })
        .go({ pages: 'all' })
    ).data.filter((x) => x.ChangeOrderID === changeOrderId);
    return this.batchRead<Release>(
      this.db.Release,
      entries.map((x) => ({ SpaceID: spaceId, ReleaseID: x.ReleaseID })),
    );
  }

  async attestationPage(spaceId: string, limit: number, after?: string): Promise<AttestationPage> {
    spaceCursor(attestationCursors, after, spaceId);
    const page = await this.db.AttestationEntry.query
      .primary({ SpaceID: spaceId })
      .go({ order: 'desc', limit, cursor: after ?? null });
    const ids = page.data.map((x) => x.AttestationID);
    const [found, revoked] = await Promise.all([
      this.batchRead<Attestation>(
        this.db.Attestation,
        ids.map((id) => ({ SpaceID: spaceId, AttestationID: id })),
      ),
      this.batchRead<{ RevokedAttestationID: string; RevokedBy: string }>(
        this.db.AttestationRevoked,
        ids.map((id) => ({ SpaceID: spaceId, RevokedAttestationID: id })),
      ),
    ]);
    const byId = new Map(found.map((a) => [a.AttestationID, a]));
    const revokedBy = new Map(revoked.map((r) => [r.RevokedAttestationID, r.RevokedBy]));
    const items = page.data.flatMap((x) => {
      const a = byId.get(x.AttestationID);
      if (!a) return [];
      const by = revokedBy.get(a.AttestationID);
      return [
        {
          attestation: by ? { ...a, RevokedBy: by } : a,
          cursor: attestationCursors.fromComposite.toCursor({
            SpaceID: spaceId,
            CreatedAt: x.CreatedAt,
            AttestationID: x.AttestationID,
          }),
        },
      ];
    });
    return { items, next: page.cursor ?? undefined };
  }

  async changeOrderPage(
    orgId: string,
    limit: number,
    after?: string,
    o: { notCompleted?: boolean; notAborted?: boolean } = {},
  ): Promise<ChangeOrderPage> {
    if (
      after !== undefined &&
      tryCursor(() => changeOrderCursors.fromCursor.toComposite(after))?.OrganizationID !== orgId
    )
      throw new Invalid('continue token is not one this list issued');
    const page = await this.db.ChangeOrderEntry.query
      .primary({ OrganizationID: orgId })
      .go({ limit, cursor: after ?? null });
    const byId = new Map(
      (
        await this.batchRead<ChangeOrder>(
          this.db.ChangeOrder,
          page.data.map((x) => ({ SpaceID: x.SpaceID, ChangeOrderID: x.ChangeOrderID })),
        )
      ).map((c) => [c.ChangeOrderID, c]),
    );
    // In the entries' order; what `o` leaves out is left out here (the entries do not carry a ChangeOrder's state).
    const kept = (c: ChangeOrder) => (!o.notCompleted || c.Stage !== COMPLETED) && (!o.notAborted || !c.AbortedReason);
    const items = page.data.flatMap((x) => {
      const changeOrder = byId.get(x.ChangeOrderID);
      return changeOrder && kept(changeOrder)
        ? [{ changeOrder, cursor: changeOrderCursors.fromComposite.toCursor(changeOrderEntryOf(x)) }]
        : [];
    });
    return { items, next: page.cursor ?? undefined };
  }

  /**
   * A page of an organization's tokens, oldest first (CreatedAt, then ID), with DynamoDB's cursor over
   * their entries; with `userId`, the database keeps only that user's. One query, one batch read.
   */
  async tokenPage(orgId: string, limit: number, after?: string, o: { userId?: string } = {}): Promise<TokenPage> {
    const at = after === undefined ? undefined : tryCursor(() => tokenCursors.fromCursor.toComposite(after));
    if (after !== undefined && at?.OrganizationID !== orgId)
      throw new Invalid('continue token is not one this list issued');
    // One user's from their own part of the index (the database reads no other's); the cursor handed out is the
    // organization's order's either way, the same place in both.
    const page = o.userId
      ? await this.db.TokenEntry.query.byUser({ OrganizationID: orgId, UserID: o.userId }).go({
          limit,
          cursor: at
            ? byUserCursors.fromComposite.toCursor({
                OrganizationID: orgId,
                UserID: o.userId,
                CreatedAt: String(at.CreatedAt),
                TokenID: String(at.TokenID),
              })
            : null,
        })
      : await this.db.TokenEntry.query.primary({ OrganizationID: orgId }).go({ limit, cursor: after ?? null });
    const last = page.cursor && o.userId ? byUserCursors.fromCursor.toComposite(page.cursor) : undefined;
    const next = last
      ? tokenCursors.fromComposite.toCursor({
          OrganizationID: orgId,
          CreatedAt: String(last.CreatedAt),
          TokenID: String(last.TokenID),
        })
      : page.cursor;
    const found = await this.tokensOfEntries(page.data);
    return {
      items: found.map(({ token, entry }) => ({
        token,
        cursor: tokenCursors.fromComposite.toCursor(tokenEntryOf(entry)),
      })),
      next: next ?? undefined,
    };
  }

  async tokensOfUser(orgId: string, userId: string): Promise<ApiToken[]> {
    return (
      await this.tokensOfEntries(
        (await this.db.TokenEntry.query.byUser({ OrganizationID: orgId, UserID: userId }).go({ pages: 'all' })).data,
      )
    ).map((x) => x.token);
  }

  /** The tokens of entries, in their order: a token deleted with its user by its hash alone (past what one transaction holds) leaves its entry, passed over. */
  private async tokensOfEntries<E extends { TokenHash: string }>(
    entries: E[],
  ): Promise<{ token: ApiToken; entry: E }[]> {
    const byHash = new Map(
      (
        await this.batchRead<ApiToken>(
          this.db.ApiToken,
          entries.map((x) => ({ TokenHash: x.TokenHash })),
        )
      ).map((t) => [t.TokenHash, t]),
    );
    return entries.flatMap((entry) => {
      const token = byHash.get(entry.TokenHash);
      return token ? [{ token, entry }] : [];
    });
  }

  async attestationById(spaceId: string, attestationId: string): Promise<AttestationView | undefined> {
    // Whether it was revoked is its AttestationRevoked entry.
    return (await this.attestationsById(spaceId, [attestationId])).get(attestationId);
  }

  /**
   * A Space's attestations by ID, each with RevokedBy if its revocation mark (AttestationRevoked) says so:
   * read with their marks in one batch read per 50. Those missing are left out.
   */
  private async attestationsById(spaceId: string, ids: string[]): Promise<Map<string, AttestationView>> {
    const out = new Map<string, AttestationView>();
    for (let i = 0; i < ids.length; i += 50) {
      const part = ids.slice(i, i + 50);
      const read = await this.getAcross(
        part.flatMap((id) => [
          { entity: this.db.Attestation, key: { SpaceID: spaceId, AttestationID: id } },
          { entity: this.db.AttestationRevoked, key: { SpaceID: spaceId, RevokedAttestationID: id } },
        ]),
      );
      part.forEach((id, j) => {
        const a = read[2 * j] as Attestation | undefined;
        const revoked = read[2 * j + 1] as { RevokedBy: string } | undefined;
        if (a) out.set(id, revoked ? { ...a, RevokedBy: revoked.RevokedBy } : a);
      });
    }
    return out;
  }

  /**
   * The attestations of a Space that name one of these Units with this content (with `anyContent`, any
   * content of them), each with RevokedBy if revoked. A Space with at most ATTESTATIONS_READ_WHOLE
   * attestations is read whole, in one request; past that, one query per Unit and content asked for, by
   * the cover entries, then the attestations they name in one batch: never the Space's history.
   */
  async attestationsNaming(
    spaceId: string,
    units: { UnitID: string; DataHash: string }[],
    o: { anyContent?: boolean } = {},
  ): Promise<AttestationView[]> {
    if (!units.length) return [];
    const asked = new Map(
      units.map((u) =>
        o.anyContent
          ? [u.UnitID, { UnitID: u.UnitID }]
          : [`${u.UnitID}#${u.DataHash}`, { UnitID: u.UnitID, DataHash: u.DataHash }],
      ),
    );
    const naming = (a: Attestation) =>
      a.Revisions.some((r) => asked.has(o.anyContent ? r.UnitID : `${r.UnitID}#${r.DataHash}`));
    const first = await this.db.Attestation.query.primary({ SpaceID: spaceId }).go({ limit: ATTESTATIONS_READ_WHOLE });
    if (!first.cursor) return withRevokedBy(first.data as unknown as Attestation[]).filter(naming);
    const covers = (
      await Promise.all([...asked.values()].map((k) => this.db.AttestationCover.query.primary(k).go({ pages: 'all' })))
    ).flatMap((r) => r.data);
    const ids = [...new Set(covers.filter((c) => c.SpaceID === spaceId).map((c) => c.AttestationID))];
    // A cover whose attestation is missing was written for one whose transaction did not land: passed over.
    return [...(await this.attestationsById(spaceId, ids)).values()];
  }
}

import { createConversions } from 'electrodb';
import type { ApiToken, Attestation, AttestationView, ChangeOrder, Release } from '../model/entities.ts';
import { COMPLETED } from '../model/change-orders.ts';
import { Invalid } from '../model/errors.ts';
import type { AttestationPage, ChangeOrderPage, ReleasePage, TokenPage } from '../ports/store.ts';
import { DynamoRecords, tryCursor } from './dynamo-records.ts';
import * as E from './entities.ts';

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
/** Refuses (Invalid) a cursor that is not one of this list's (`scope`: the attributes it must carry), before it is sent. */
function checkCursor(
  conversions: { fromCursor: { toComposite(c: string): unknown } },
  after: string | undefined,
  scope: Record<string, string>,
): void {
  if (after === undefined) return;
  const at = tryCursor(() => conversions.fromCursor.toComposite(after)) as Record<string, unknown> | undefined;
  if (!at || Object.entries(scope).some(([k, v]) => at[k] !== v))
    throw new Invalid('continue token is not one this list issued');
}
const releaseCursors = createConversions(E.Release).byAccessPattern.byNum!;
const attestationCursors = createConversions(E.Attestation).byAccessPattern.byTime!;
const changeOrderCursors = createConversions(E.ChangeOrder).byAccessPattern.byOrg!;
const tokenConversions = createConversions(E.ApiToken).byAccessPattern;
/** In the organization's order (the cursors a token list hands out) and in one user's part of the index. */
const [tokenCursors, byUserCursors] = [tokenConversions.byCreated!, tokenConversions.byUser!];

/**
 * The lists that page with DynamoDB's own cursor over an entity's index (a Space's Releases and attestations
 * newest first, an organization's ChangeOrders and tokens) and the cover items the gates read attestations by.
 */
export abstract class DynamoEntries extends DynamoRecords {
  async releasePage(spaceId: string, limit: number, after?: string): Promise<ReleasePage> {
    checkCursor(releaseCursors, after, { SpaceID: spaceId });
    const page = await this.db.Release.query
      .byNum({ SpaceID: spaceId })
      .go({ order: 'desc', limit, cursor: after ?? null });
    // Newest first (equal numbers, two Targets', by ID); each with the cursor that resumes after it.
    const items = (page.data as Release[]).map((release) => ({
      release,
      cursor: releaseCursors.fromComposite.toCursor(release as never),
    }));
    return { items, next: page.cursor ?? undefined };
  }

  async releasesAtChangeOrder(spaceId: string, changeOrderId: string): Promise<Release[]> {
    return (
      await this.db.Release.query.atChangeOrder({ AtChangeOrder: `${spaceId}#${changeOrderId}` }).go({ pages: 'all' })
    ).data as Release[];
  }

  /**
   * The Space's revocations, by the attestation each revokes: what marks an attestation revoked, and by which.
   * Of one attestation, its own key in the index; of more, the Space's revocations in one query.
   */
  private async revokedIn(spaceId: string, ids?: string[]): Promise<Map<string, string>> {
    if (ids && !ids.length) return new Map();
    const one = ids?.length === 1 ? { Revokes: ids[0]! } : {};
    const all = (
      await this.db.Attestation.query
        .revocations({ RevocationIn: spaceId, ...one })
        .go({ pages: 'all', attributes: ['AttestationID', 'RevokedAttestationID'] })
    ).data;
    return new Map(all.map((r) => [String(r.RevokedAttestationID), r.AttestationID]));
  }

  async attestationPage(spaceId: string, limit: number, after?: string): Promise<AttestationPage> {
    checkCursor(attestationCursors, after, { SpaceID: spaceId });
    const [page, revokedBy] = await Promise.all([
      this.db.Attestation.query.byTime({ SpaceID: spaceId }).go({ order: 'desc', limit, cursor: after ?? null }),
      this.revokedIn(spaceId),
    ]);
    const items = (page.data as unknown as Attestation[]).map((a) => {
      const by = revokedBy.get(a.AttestationID);
      return {
        attestation: by ? { ...a, RevokedBy: by } : a,
        cursor: attestationCursors.fromComposite.toCursor(a as never),
      };
    });
    return { items, next: page.cursor ?? undefined };
  }

  async changeOrderPage(
    orgId: string,
    limit: number,
    after?: string,
    o: { notCompleted?: boolean; notAborted?: boolean } = {},
  ): Promise<ChangeOrderPage> {
    checkCursor(changeOrderCursors, after, { OrganizationID: orgId });
    const page = await this.db.ChangeOrder.query.byOrg({ OrganizationID: orgId }).go({ limit, cursor: after ?? null });
    // In slug order; what `o` leaves out is left out of the page (its cursor still resumes after the last read).
    const kept = (c: ChangeOrder) => (!o.notCompleted || c.Stage !== COMPLETED) && (!o.notAborted || !c.AbortedReason);
    const items = (page.data as ChangeOrder[]).flatMap((changeOrder) =>
      kept(changeOrder)
        ? [{ changeOrder, cursor: changeOrderCursors.fromComposite.toCursor(changeOrder as never) }]
        : [],
    );
    return { items, next: page.cursor ?? undefined };
  }

  /**
   * A page of an organization's tokens, oldest first (CreatedAt, then ID), with DynamoDB's cursor over their
   * index; with `userId`, from that user's part of it (the database reads no other's). One query.
   */
  async tokenPage(orgId: string, limit: number, after?: string, o: { userId?: string } = {}): Promise<TokenPage> {
    checkCursor(tokenCursors, after, { OrganizationID: orgId });
    const at =
      after === undefined ? undefined : (tokenCursors.fromCursor.toComposite(after) as Record<string, unknown>);
    // The cursor handed out is the organization's order's either way: the same place in both.
    const page = o.userId
      ? await this.db.ApiToken.query.byUser({ UserKey: `${orgId}#${o.userId}` }).go({
          limit,
          cursor: at
            ? byUserCursors.fromComposite.toCursor({
                ...at,
                UserKey: `${orgId}#${o.userId}`,
                UserOrder: `${String(at.CreatedAt)}#${String(at.TokenID)}`,
              } as never)
            : null,
        })
      : await this.db.ApiToken.query.byCreated({ OrganizationID: orgId }).go({ limit, cursor: after ?? null });
    const tokens = page.data as ApiToken[];
    const last = tokens[tokens.length - 1];
    return {
      items: tokens.map((token) => ({ token, cursor: tokenCursors.fromComposite.toCursor(token as never) })),
      next: page.cursor && last ? tokenCursors.fromComposite.toCursor(last as never) : undefined,
    };
  }

  async tokensOfUser(orgId: string, userId: string): Promise<ApiToken[]> {
    return (await this.db.ApiToken.query.byUser({ UserKey: `${orgId}#${userId}` }).go({ pages: 'all' }))
      .data as ApiToken[];
  }

  async attestationById(spaceId: string, attestationId: string): Promise<AttestationView | undefined> {
    return (await this.attestationsById(spaceId, [attestationId])).get(attestationId);
  }

  /** A Space's attestations by ID, each with RevokedBy if a revocation names it: one batch read, and their revocations. */
  private async attestationsById(spaceId: string, ids: string[]): Promise<Map<string, AttestationView>> {
    const [found, revokedBy] = await Promise.all([
      this.batchRead<Attestation>(
        this.db.Attestation,
        ids.map((id) => ({ SpaceID: spaceId, AttestationID: id })),
      ),
      this.revokedIn(spaceId, ids),
    ]);
    return new Map(
      found.map((a) => {
        const by = revokedBy.get(a.AttestationID);
        return [a.AttestationID, by ? { ...a, RevokedBy: by } : a];
      }),
    );
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

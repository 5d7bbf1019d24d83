import { createConversions } from 'electrodb';
import type { Attestation, AttestationView, Release } from '../model/entities.ts';
import type { ReleaseStore } from '../ports/store.ts';
import * as E from './entities.ts';
import { checkCursor, type Table } from './table.ts';
import { releaseCounterName } from './transact.ts';

/**
 * A Space with at most this many attestations has them read whole for a gate, in one request (fewer than a
 * query per Unit weighed, and as bounded); past it, by the cover entries of the Units and content weighed.
 */
export const ATTESTATIONS_READ_WHOLE = 50;

const releaseCursors = createConversions(E.Release).byAccessPattern.byNum!;
const attestationCursors = createConversions(E.Attestation).byAccessPattern.byTime!;

/** Attestations, each marked with the revocation that revoked it, if one did. */
const marked = (all: Attestation[], revokedBy: Map<string, string>): AttestationView[] =>
  all.map((a) => {
    const by = revokedBy.get(a.AttestationID);
    return by ? { ...a, RevokedBy: by } : a;
  });

/** A Space's Releases and their counters, and its attestations. */
export function releases(t: Table): ReleaseStore {
  const { db } = t;

  /**
   * The Space's revocations, by the attestation each revokes: what marks an attestation revoked, and by which.
   * Of one attestation, its own key in the index; of more, the Space's revocations in one query.
   */
  async function revokedIn(spaceId: string, ids?: string[]): Promise<Map<string, string>> {
    if (ids && !ids.length) return new Map();
    const one = ids?.length === 1 ? { Revokes: ids[0]! } : {};
    const all = (
      await db.Attestation.query
        .revocations({ RevocationIn: spaceId, ...one })
        .go({ pages: 'all', attributes: ['AttestationID', 'RevokedAttestationID'] })
    ).data;
    return new Map(all.map((r) => [String(r.RevokedAttestationID), r.AttestationID]));
  }

  /** A Space's attestations by ID, each with RevokedBy if a revocation names it: one batch read, and their revocations. */
  async function attestationsById(spaceId: string, ids: string[]): Promise<Map<string, AttestationView>> {
    const [found, revokedBy] = await Promise.all([
      t.batchRead<Attestation>(
        'Attestation',
        ids.map((id) => ({ SpaceID: spaceId, AttestationID: id })),
      ),
      revokedIn(spaceId, ids),
    ]);
    return new Map(marked(found, revokedBy).map((a) => [a.AttestationID, a]));
  }

  return {
    async releaseCounter(targetId) {
      const { data } = await db.Counter.get({ Name: releaseCounterName(targetId) }).go();
      return { TargetID: targetId, Value: data?.Value ?? 0, Version: data?.Version ?? 0 };
    },
    async releasePage(spaceId, limit, after) {
      checkCursor(releaseCursors, after, { SpaceID: spaceId });
      const page = await db.Release.query
        .byNum({ SpaceID: spaceId })
        .go({ order: 'desc', limit, cursor: after ?? null });
      // Newest first (equal numbers, two Targets', by ID); each with the cursor that resumes after it.
      const items = (page.data as Release[]).map((release) => ({
        release,
        cursor: releaseCursors.fromComposite.toCursor(release as never),
      }));
      return { items, next: page.cursor ?? undefined };
    },
    async releasesAtChangeOrder(spaceId, changeOrderId) {
      return (
        await db.Release.query.atChangeOrder({ AtChangeOrder: `${spaceId}#${changeOrderId}` }).go({ pages: 'all' })
      ).data as Release[];
    },

    async attestationPage(spaceId, limit, after) {
      checkCursor(attestationCursors, after, { SpaceID: spaceId });
      const [page, revokedBy] = await Promise.all([
        db.Attestation.query.byTime({ SpaceID: spaceId }).go({ order: 'desc', limit, cursor: after ?? null }),
        revokedIn(spaceId),
      ]);
      const items = marked(page.data as unknown as Attestation[], revokedBy).map((attestation) => ({
        attestation,
        cursor: attestationCursors.fromComposite.toCursor(attestation as never),
      }));
      return { items, next: page.cursor ?? undefined };
    },
    async attestationById(spaceId, attestationId) {
      return (await attestationsById(spaceId, [attestationId])).get(attestationId);
    },
    /**
     * The attestations of a Space that name one of these Units with this content (with `anyContent`, any
     * content of them), each with RevokedBy if revoked. A Space with at most ATTESTATIONS_READ_WHOLE
     * attestations is read whole, in one request; past that, one query per Unit and content asked for, by
     * the cover entries, then the attestations they name in one batch: never the Space's history.
     */
    async attestationsNaming(spaceId, units, o = {}) {
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
      const first = await db.Attestation.query.primary({ SpaceID: spaceId }).go({ limit: ATTESTATIONS_READ_WHOLE });
      if (!first.cursor) {
        // The whole Space's attestations: the revocations among them mark the ones they revoke.
        const all = first.data as unknown as Attestation[];
        const revokedBy = new Map(
          all.filter((a) => a.RevokedAttestationID).map((a) => [a.RevokedAttestationID!, a.AttestationID]),
        );
        return marked(all, revokedBy).filter(naming);
      }
      const covers = (
        await Promise.all([...asked.values()].map((k) => db.AttestationCover.query.primary(k).go({ pages: 'all' })))
      ).flatMap((r) => r.data);
      const ids = [...new Set(covers.filter((c) => c.SpaceID === spaceId).map((c) => c.AttestationID))];
      // A cover whose attestation is missing was written for one whose transaction did not land: passed over.
      return [...(await attestationsById(spaceId, ids)).values()];
    },
  };
}

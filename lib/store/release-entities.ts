import { Entity } from 'electrodb';
import { any, inSpace, key, num, primary, reqAny, reqStr, service, str } from './entity-kit.ts';

/** Releases and their counters, attestations and the covers the gates read them by. */

/**
 * A published bundle of a Space's Units; content fields never change, LiveStatus and labels do. Its indexes: a
 * Space's Releases by number (newest first, a page at a time), and those published at a ChangeOrder.
 */
export const Release = new Entity({
  model: { entity: 'release', version: '1', service },
  attributes: {
    ...inSpace,
    ReleaseID: reqStr,
    ReleaseNum: { type: 'number', required: true, padding: { length: 10, char: '0' } },
    TargetID: reqStr,
    TagID: reqStr,
    ChangeOrderID: str,
    Published: { type: 'boolean' },
    Digest: reqStr,
    UnitCount: num,
    Units: any,
    UserID: str,
    Description: str,
    LiveStatus: any,
    LiveStatusHistory: any,
    PublishedAt: str,
    WithdrawnAt: str,
    // The key of the Releases published at one ChangeOrder in one Space (`<space>#<change order>`), written by the store (indexKeys).
    AtChangeOrder: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['SpaceID'], ['ReleaseID']),
    byNum: { index: 'gsi1', pk: key(['SpaceID'], 'gsi1pk'), sk: key(['ReleaseNum', 'ReleaseID'], 'gsi1sk') },
    atChangeOrder: {
      index: 'gsi2',
      condition: (r: Record<string, unknown>) => !!r.AtChangeOrder,
      pk: key(['AtChangeOrder'], 'gsi2pk'),
      sk: key([], 'gsi2sk'),
    },
  },
});

/** A named counter (e.g. the last ReleaseNum of a Target), advanced under its Version in a transaction. */
export const Counter = new Entity({
  model: { entity: 'counter', version: '1', service },
  attributes: { Name: reqStr, Value: { type: 'number', required: true }, Version: { type: 'number', required: true } },
  indexes: { primary: primary(['Name'], []) },
});

/**
 * Immutable once written; a revocation is another Attestation naming it. Its indexes: a Space's attestations
 * newest first (a page at a time), and the Space's revocations by the attestation each revokes.
 */
export const Attestation = new Entity({
  model: { entity: 'attestation', version: '1', service },
  attributes: {
    ...inSpace,
    AttestationID: reqStr,
    UserID: reqStr,
    Type: reqStr,
    Result: reqStr,
    Note: str,
    Claims: reqAny,
    ChangeOrderID: str,
    ReleaseID: str,
    ExpiresAt: str,
    RevokedAttestationID: str,
    Revisions: reqAny,
    // A revocation's Space and the attestation it revokes, the keys of the Space's revocations, written by the store (indexKeys).
    RevocationIn: { type: 'string', hidden: true },
    Revokes: { type: 'string', hidden: true },
  },
  indexes: {
    primary: primary(['SpaceID'], ['AttestationID']),
    byTime: { index: 'gsi1', pk: key(['SpaceID'], 'gsi1pk'), sk: key(['CreatedAt', 'AttestationID'], 'gsi1sk') },
    revocations: {
      index: 'gsi2',
      condition: (a: Record<string, unknown>) => !!a.RevocationIn,
      pk: key(['RevocationIn'], 'gsi2pk'),
      sk: key(['Revokes'], 'gsi2sk'),
    },
  },
});

/**
 * What an Attestation speaks for, by content: one per Unit and content hash it names, under the Unit, so
 * the gates read the attestations of the exact content they weigh (or, explaining, every one naming the
 * Unit) without a Space's whole history. Written just before its Attestation (which may name more Units
 * than one transaction holds): an entry whose Attestation is missing is passed over when read.
 */
export const AttestationCover = new Entity({
  model: { entity: 'attestationcover', version: '1', service },
  attributes: { UnitID: reqStr, DataHash: reqStr, AttestationID: reqStr, SpaceID: reqStr },
  indexes: { primary: primary(['UnitID'], ['DataHash', 'AttestationID']) },
});

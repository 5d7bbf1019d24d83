import { Entity } from 'electrodb';
import { any, key, num, primary, reqAny, reqNum, reqStr, service, str } from './entity-kit.ts';

/** The records beside the domain's entities: the outbox and handled events, idempotency keys, jobs, and the entries that page lists or answer one question by key (a Space's Releases and attestations, a ChangeOrder's Releases, the ChangeOrders in flight). */

/**
 * An event waiting to be published: written in the same transaction as the change it reports, published
 * from there (DynamoDB Streams on AWS, drained in-process locally), then deleted. The GSI lists what is
 * still pending, oldest first, for a local drain after a crash.
 */
export const Outbox = new Entity({
  model: { entity: 'outbox', version: '1', service },
  attributes: {
    EventID: reqStr,
    OrganizationID: reqStr,
    Source: reqStr,
    DetailType: reqStr,
    Detail: reqAny,
    CreatedAt: reqStr,
  },
  indexes: {
    primary: primary(['EventID'], []),
    pending: { index: 'gsi1', pk: key([], 'gsi1pk'), sk: key(['CreatedAt', 'EventID'], 'gsi1sk') },
  },
});

/** An event a consumer has handled, kept a week (TTL on ExpiresAtEpoch) so a second delivery is dropped. */
export const ProcessedEvent = new Entity({
  model: { entity: 'processed', version: '1', service },
  attributes: { EventID: reqStr, Consumer: reqStr, ExpiresAtEpoch: reqNum },
  indexes: { primary: primary(['EventID'], ['Consumer']) },
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

/**
 * A long operation run as a job (a promotion, an approval, a demote): its plan (compressed), where its
 * parts stand, and once done the answer the request would have given (compressed). Kept a week after it
 * ends (TTL).
 */
export const Job = new Entity({
  model: { entity: 'job', version: '1', service },
  attributes: {
    JobID: reqStr,
    OrganizationID: reqStr,
    UserID: reqStr,
    Kind: { type: ['Promote', 'Approve', 'Demote'] as const, required: true },
    State: { type: ['Running', 'Done'] as const, required: true },
    Caller: reqAny,
    Subject: any,
    Plan: reqStr,
    Total: reqNum,
    Parts: reqAny,
    PartSpaces: reqNum,
    Wave: reqNum,
    PartsDone: reqNum,
    SpacesDone: reqNum,
    SpacesFailed: num,
    Status: num,
    Result: str,
    CreatedAt: reqStr,
    UpdatedAt: reqStr,
    FinishedAt: str,
    ExpiresAtEpoch: num,
    Version: reqNum,
  },
  indexes: { primary: primary(['JobID'], []) },
});

/** One finished part of a job: what its Spaces came to (compressed). Written with the job's count, once. */
export const JobPart = new Entity({
  model: { entity: 'jobpart', version: '1', service },
  attributes: {
    JobID: reqStr,
    Part: reqStr,
    Wave: reqNum,
    Index: reqNum,
    Result: reqStr,
    GaveUp: { type: 'boolean' },
    CreatedAt: reqStr,
    ExpiresAtEpoch: num,
  },
  indexes: { primary: primary(['JobID'], ['Part']) },
});

/** A job still running: one item per job under one key, so a restarted server finds the jobs it must resume; deleted when the job ends. */
export const RunningJob = new Entity({
  model: { entity: 'runningjob', version: '1', service },
  attributes: { JobID: reqStr, CreatedAt: reqStr },
  indexes: { primary: primary([], ['JobID']) },
});

/**
 * A Release's place in its Space's order, newest first by number: written (and deleted) by the store in
 * the transaction that writes (or deletes) its Release, so a Space's Releases page with DynamoDB's own
 * cursor instead of being read whole and sorted.
 */
export const ReleaseEntry = new Entity({
  model: { entity: 'releaseentry', version: '1', service },
  attributes: {
    SpaceID: reqStr,
    ReleaseNum: { type: 'number', required: true, padding: { length: 10, char: '0' } },
    ReleaseID: reqStr,
  },
  indexes: { primary: primary(['SpaceID'], ['ReleaseNum', 'ReleaseID']) },
});

/**
 * A ChangeOrder in flight (neither Completed nor aborted), under its organization: written by the store with
 * the ChangeOrder and deleted by the write that completes or aborts it (which never comes undone), so what a
 * live-status report re-evaluates is read from the organization's ChangeOrders in flight, not its history.
 */
export const InFlightChangeOrder = new Entity({
  model: { entity: 'inflightco', version: '1', service },
  attributes: { OrganizationID: reqStr, ChangeOrderID: reqStr, SpaceID: reqStr },
  indexes: { primary: primary(['OrganizationID'], ['ChangeOrderID']) },
});

/**
 * A Release published at a ChangeOrder (`ChangeOrder:<co>`), under its Space and that ChangeOrder: written
 * (and deleted) by the store in the transaction that writes (or deletes) the Release, so whether the change
 * was released in a Space is one query of the few Releases made at it, not a read of the Space's history.
 */
export const ChangeOrderRelease = new Entity({
  model: { entity: 'coreleaseentry', version: '1', service },
  attributes: { SpaceID: reqStr, ChangeOrderID: reqStr, ReleaseID: reqStr },
  indexes: { primary: primary(['SpaceID'], ['ChangeOrderID', 'ReleaseID']) },
});

/**
 * An Attestation's place in its Space's order, newest first (CreatedAt, then ID); and, for one that revokes
 * another, the revoked one's entry naming it. Written by the store in the transaction that writes the
 * Attestation, so a page of a Space's attestations reads only the page (and whether each was revoked).
 */
export const AttestationEntry = new Entity({
  model: { entity: 'attestationentry', version: '1', service },
  attributes: { SpaceID: reqStr, CreatedAt: reqStr, AttestationID: reqStr },
  indexes: { primary: primary(['SpaceID'], ['CreatedAt', 'AttestationID']) },
});
export const AttestationRevoked = new Entity({
  model: { entity: 'attestationrevoked', version: '1', service },
  attributes: { SpaceID: reqStr, RevokedAttestationID: reqStr, RevokedBy: reqStr },
  indexes: { primary: primary(['SpaceID'], ['RevokedAttestationID']) },
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

/**
 * A ChangeOrder's place in its organization's order, by slug and then by ID (two Spaces may use one slug):
 * written by the store in the transaction that creates the ChangeOrder (its slug never changes), so the
 * organization's ChangeOrders page with DynamoDB's own cursor instead of being read whole and sorted.
 */
export const ChangeOrderEntry = new Entity({
  model: { entity: 'changeorderentry', version: '1', service },
  attributes: { OrganizationID: reqStr, Slug: reqStr, ChangeOrderID: reqStr, SpaceID: reqStr },
  indexes: { primary: primary(['OrganizationID'], ['Slug', 'ChangeOrderID']) },
});

/**
 * A token's place in its organization's order, oldest first (by CreatedAt, then ID): written by the store
 * in the transaction that creates the token, so the tokens page with DynamoDB's own cursor instead of
 * being read whole and sorted. Its index keeps each user's in the same order (a service token's under
 * the user '' of its organization), so a member's own, and a deleted user's, are read without the rest.
 */
export const TokenEntry = new Entity({
  model: { entity: 'tokenentry', version: '1', service },
  attributes: { OrganizationID: reqStr, CreatedAt: reqStr, TokenID: reqStr, TokenHash: reqStr, UserID: str },
  indexes: {
    primary: primary(['OrganizationID'], ['CreatedAt', 'TokenID']),
    byUser: {
      index: 'gsi1',
      pk: key(['OrganizationID', 'UserID'], 'gsi1pk'),
      sk: key(['CreatedAt', 'TokenID'], 'gsi1sk'),
    },
  },
});

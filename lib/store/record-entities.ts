import { Entity } from 'electrodb';
import { any, key, num, primary, reqAny, reqNum, reqStr, service, str } from './entity-kit.ts';

/** The records beside the domain's entities: the outbox and handled events, idempotency keys, jobs, and the attestations' covers. */

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
 * ends (TTL). Its index holds the jobs still running (for a restarted server to resume), which a job
 * leaves in the write that ends it.
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
  indexes: {
    primary: primary(['JobID'], []),
    running: {
      index: 'gsi1',
      condition: (j: Record<string, unknown>) => j.State === 'Running',
      pk: key([], 'gsi1pk'),
      sk: key(['JobID'], 'gsi1sk'),
    },
  },
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

/** Attestations as records: what an approval is asked and answers, how one is made and recorded with its events, revoked (a new record naming it), and listed. */
import {
  newEntity,
  requireVerb,
  type Attestation,
  type AttestationView,
  type Caller,
  type Space,
} from '../model/entities.ts';
import { Invalid, NotFound } from '../model/errors.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { chunk, TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import type { ChangeDeps } from './ports.ts';
import { attestationsOf } from './stages.ts';

/** What to attest, and about which revisions. */
export interface ApproveInput {
  Spaces?: string[];
  WhereSpace?: string;
  ChangeOrderID?: string;
  Stage?: string;
  /** Every Unit, not only those a Release would publish. */
  All?: boolean;
  Where?: string;
  Revision?: string;
  Type?: string;
  Reject?: boolean;
  Note?: string;
  Claims?: Record<string, string>;
  ExpiresIn?: string;
  DryRun?: boolean;
}

/** What happened in one Space: the attestation recorded (or that would be), and each Unit's revision or why it was skipped. */
export interface ApproveSpaceResult {
  SpaceID: string;
  SpaceSlug: string;
  Action: 'Attest' | 'Skipped';
  Reason?: string;
  AttestationID?: string;
  /** Recorded, but it will not count toward the gates named, and why (the caller wrote the change here). */
  Warning?: string;
  Units: { UnitID: string; UnitSlug: string; RevisionNum?: number; Skipped?: string }[];
}

export interface ApproveResult {
  DryRun: boolean;
  Type: string;
  Result: 'Pass' | 'Fail';
  Spaces: ApproveSpaceResult[];
  Attestations: Attestation[];
}

/** A new attestation record by the caller in a Space (its Slug is its ID: attestations have no names). */
export function attestation(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  fields: Pick<
    Attestation,
    'Type' | 'Result' | 'Note' | 'Claims' | 'ChangeOrderID' | 'ExpiresAt' | 'RevokedAttestationID' | 'Revisions'
  >,
): Attestation {
  const id = deps.newId();
  return {
    ...newEntity(deps, caller.OrganizationID, { Slug: id }),
    SpaceID: space.SpaceID,
    AttestationID: id,
    UserID: caller.UserID,
    ...fields,
  };
}

/** The events that announce attestations. */
export function attestationEvents(caller: Caller, writes: Attestation[], spaces: Space[]) {
  const slug = new Map(spaces.map((s) => [s.SpaceID, s.Slug]));
  return writes.map((a) => ({
    source: SOURCE,
    detailType: a.RevokedAttestationID ? DetailType.AttestationRevoked : DetailType.AttestationRecorded,
    detail: {
      OrganizationID: caller.OrganizationID,
      SpaceID: a.SpaceID,
      SpaceSlug: slug.get(a.SpaceID) ?? '',
      AttestationID: a.AttestationID,
      Type: a.Type,
      Result: a.Result,
      UserID: a.UserID,
      ChangeOrderID: a.ChangeOrderID,
      RevokedAttestationID: a.RevokedAttestationID,
    },
  }));
}

/** Writes attestations (each its own item; at most a transaction's worth at a time) and tells the bus. */
export async function record(deps: ChangeDeps, caller: Caller, writes: Attestation[], spaces: Space[]): Promise<void> {
  // Attestations and their events in one transaction, a quarter of a transaction's worth at a time (their covers go before, batch-written by the store).
  for (const part of chunk(writes, TRANSACTION_MAX_ITEMS / 4)) {
    await deps.store.transact([
      ...part.map((item) => ({ op: 'create' as const, kind: 'Attestation' as const, item })),
      ...eventOps(deps, attestationEvents(caller, part, spaces)),
    ]);
  }
}

/** Revokes an attestation: a new record naming it, never an edit. Its author, or anyone with Manage in the Space. */
export async function revokeAttestation(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  id: string,
  note: string | undefined,
): Promise<Attestation> {
  const found = await deps.store.attestationById(space.SpaceID, id.toLowerCase());
  const a = found && !found.RevokedAttestationID ? found : undefined;
  if (!a) throw new NotFound(`attestation '${id}' not found in space '${space.Slug}'`);
  if (a.RevokedBy) throw new Invalid(`attestation '${id}' was already revoked (by ${a.RevokedBy})`);
  if (a.UserID !== caller.UserID) requireVerb(caller, [space], 'Manage', "revoke another user's attestation");
  const revocation = attestation(deps, caller, space, {
    Type: a.Type,
    Result: a.Result,
    Note: note,
    Claims: {},
    ChangeOrderID: a.ChangeOrderID,
    RevokedAttestationID: a.AttestationID,
    Revisions: [],
  });
  await record(deps, caller, [revocation], [space]);
  return revocation;
}

/** A Space's attestations as read, newest first. */
export async function listAttestations(deps: ChangeDeps, space: Space): Promise<AttestationView[]> {
  return (await attestationsOf(deps, space)).sort((a, b) =>
    a.CreatedAt < b.CreatedAt ? 1 : a.CreatedAt > b.CreatedAt ? -1 : a.AttestationID < b.AttestationID ? 1 : -1,
  );
}

/**
 * Attestations: immutable records that a user approved (or rejected, or attested something else about)
 * specific revisions in one Space. `cub variant approve` picks the revisions (what a ChangeOrder brought
 * to each Space, or each Unit's head or named revision), `cub attestation create` records other types,
 * and revoking records a revocation beside the original. Requirements read them at the next promotion
 * or publish (lib/gates/attestations.ts); recording one also re-evaluates the ChangeOrders of its Space
 * on the bus.
 */
import { DESCRIBING_TOOLCHAIN, newEntity, parseDuration, requireVerb, type Attestation, type AttestationView, type AttestedRevision, type Caller, type ChangeOrder, type Space, type Unit } from '../model/entities.ts';
import { BatonError, Invalid, NotFound } from '../model/errors.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import { bounded } from '../util/concurrency.ts';
import { chunk, TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import { matches, parseWhere } from '../where/index.ts';
import { bySlug, findInSpace, findSpace } from '../variants/lookup.ts';
import { revisionNum } from '../variants/revisions.ts';
import { marksOf } from './marks.ts';
import type { ChangeDeps } from './ports.ts';
import { attestationsOf, orgSpaces, stagesOver } from './stages.ts';

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
  Units: { UnitID: string; UnitSlug: string; RevisionNum?: number; Skipped?: string }[];
}

export interface ApproveResult {
  DryRun: boolean;
  Type: string;
  Result: 'Pass' | 'Fail';
  Spaces: ApproveSpaceResult[];
  Attestations: Attestation[];
}

const CONCURRENCY = 8;

/** The Spaces named, selected, or (with a ChangeOrder) in its Stage or that took it. */
async function targetSpaces(deps: ChangeDeps, caller: Caller, o: ApproveInput, co: ChangeOrder | undefined): Promise<Space[]> {
  const out = new Map<string, Space>();
  for (const ref of o.Spaces ?? []) {
    const s = await findSpace(deps, caller, ref);
    out.set(s.SpaceID, s);
  }
  if (o.WhereSpace !== undefined) {
    const q = parseWhere(o.WhereSpace, 'Space');
    for (const s of await orgSpaces(deps, caller, [q])) if (matches(q, s)) out.set(s.SpaceID, s);
  }
  if (co && o.Stage !== undefined) {
    const stage = stagesOver(co, await orgSpaces(deps, caller, [])).find((s) => s.name === o.Stage);
    if (!stage) throw new Invalid(`the workflow of change order '${co.Slug}' has no stage '${o.Stage}'${co.ChangeWorkflow ? `; stages: ${co.ChangeWorkflow.Stages.map((s) => s.Name).join(', ')}` : ''}`);
    for (const s of stage.spaces) out.set(s.SpaceID, s);
  } else if (o.Stage !== undefined) {
    throw new Invalid('--stage names a Stage of a ChangeOrder: give --change-order too');
  }
  if (co && !out.size) {
    const took = new Set((await deps.store.progressOf(co.ChangeOrderID)).map((p) => p.SpaceID));
    for (const s of await orgSpaces(deps, caller, [])) if (took.has(s.SpaceID)) out.set(s.SpaceID, s);
  }
  if (!out.size && !co) throw new Invalid('name the Spaces to approve: <space>…, --where-space, or --change-order (with --stage)');
  return [...out.values()].sort(bySlug);
}

/** The revision of each Unit an attestation speaks for in a Space, or why a Unit is skipped. */
async function revisionsIn(deps: ChangeDeps, caller: Caller, space: Space, o: ApproveInput, co: ChangeOrder | undefined, marks: Awaited<ReturnType<typeof marksOf>> | undefined): Promise<ApproveSpaceResult['Units']> {
  let units = (await deps.store.listUnits(space.SpaceID)).sort(bySlug);
  if (o.Where !== undefined) {
    const q = parseWhere(o.Where, 'Unit');
    units = units.filter((u) => matches(q, { ...u, SpaceSlug: space.Slug }));
  }
  const pick = async (u: Unit): Promise<ApproveSpaceResult['Units'][number] | undefined> => {
    if (co && marks) {
      const end = marks.end.get(u.UnitID);
      if (!end) return { UnitID: u.UnitID, UnitSlug: u.Slug, Skipped: `has not taken change order '${co.Slug}'` };
      // Units the change left as they were carry nothing to approve.
      if (marks.start.get(u.UnitID)?.RevisionNum === end.RevisionNum) return undefined;
      return { UnitID: u.UnitID, UnitSlug: u.Slug, RevisionNum: marks.publish.get(u.UnitID)?.RevisionNum ?? end.RevisionNum };
    }
    // What a Release of the Space would publish, unless --all.
    if (!o.All && (u.ToolchainType === DESCRIBING_TOOLCHAIN || !(u.TargetID || space.ReleaseTargetID))) return undefined;
    try {
      return { UnitID: u.UnitID, UnitSlug: u.Slug, RevisionNum: await revisionNum(deps, caller, space, u, o.Revision ?? 'HeadRevisionNum') };
    } catch (e) {
      if (!(e instanceof BatonError)) throw e;
      return { UnitID: u.UnitID, UnitSlug: u.Slug, Skipped: e.message };
    }
  };
  return (await bounded(units, CONCURRENCY, pick)).filter((x): x is ApproveSpaceResult['Units'][number] => !!x);
}

/** `cub variant approve` / `POST /attest`: one Attestation per Space over the revisions selected. Needs Approve in each. */
export async function approve(deps: ChangeDeps, caller: Caller, o: ApproveInput): Promise<ApproveResult> {
  const type = o.Type ?? 'Approval';
  const result: 'Pass' | 'Fail' = o.Reject ? 'Fail' : 'Pass';
  const expires = o.ExpiresIn !== undefined ? parseDuration(o.ExpiresIn) : undefined;
  if (o.ExpiresIn !== undefined && !expires) throw new Invalid(`ExpiresIn '${o.ExpiresIn}' must be a duration such as 72h, 30d or 15m`);
  const co = o.ChangeOrderID ? (await findInSpace<ChangeOrder>(deps, caller, undefined, 'ChangeOrder', o.ChangeOrderID)).item : undefined;
  if (co && o.Revision !== undefined) throw new Invalid('--revision and --change-order both pick revisions: give one (the change order approves what it brought to each Space)');
  const spaces = await targetSpaces(deps, caller, o, co);
  if (!o.DryRun) requireVerb(caller, spaces, 'Approve', `${o.Reject ? 'reject' : 'approve'} there`);
  const marks = co ? await marksOf(deps, co) : undefined;
  const now = deps.now();
  const out: ApproveResult = { DryRun: !!o.DryRun, Type: type, Result: result, Spaces: [], Attestations: [] };
  const writes: Attestation[] = [];
  for (const space of spaces) {
    const units = await revisionsIn(deps, caller, space, o, co, marks);
    const picked = units.filter((u) => u.RevisionNum !== undefined);
    if (!picked.length) {
      out.Spaces.push({ SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: 'Skipped', Reason: co ? `no Unit there carries change order '${co.Slug}'` : o.All ? 'no Unit matches' : 'no Unit a Release would publish (a Space without a release Target needs --all)', Units: units });
      continue;
    }
    const revisions: AttestedRevision[] = await Promise.all(
      picked.map(async (u) => {
        const r = await deps.store.getRevision(u.UnitID, u.RevisionNum!);
        if (!r) throw new NotFound(`unit '${u.UnitSlug}' has no revision ${u.RevisionNum}`);
        return { UnitID: u.UnitID, RevisionNum: u.RevisionNum!, DataHash: r.DataHash };
      }),
    );
    const a = attestation(deps, caller, space, { Type: type, Result: result, Note: o.Note, Claims: o.Claims ?? {}, ChangeOrderID: co?.ChangeOrderID, ExpiresAt: expires ? new Date(now.getTime() + expires).toISOString() : undefined, Revisions: revisions });
    const id = a.AttestationID;
    writes.push(a);
    out.Spaces.push({ SpaceID: space.SpaceID, SpaceSlug: space.Slug, Action: 'Attest', AttestationID: o.DryRun ? undefined : id, Units: units });
  }
  if (!o.DryRun) {
    await record(deps, caller, writes, spaces);
    out.Attestations = writes;
  }
  return out;
}

/** A new attestation record by the caller in a Space (its Slug is its ID: attestations have no names). */
function attestation(deps: ChangeDeps, caller: Caller, space: Space, fields: Pick<Attestation, 'Type' | 'Result' | 'Note' | 'Claims' | 'ChangeOrderID' | 'ExpiresAt' | 'RevokedAttestationID' | 'Revisions'>): Attestation {
  const id = deps.newId();
  return { ...newEntity(deps, caller.OrganizationID, { Slug: id }), SpaceID: space.SpaceID, AttestationID: id, UserID: caller.UserID, ...fields };
}

/** Writes attestations (each its own item; at most a transaction's worth at a time) and tells the bus. */
async function record(deps: ChangeDeps, caller: Caller, writes: Attestation[], spaces: Space[]): Promise<void> {
  const slug = new Map(spaces.map((s) => [s.SpaceID, s.Slug]));
  // Each attestation and its event in one transaction: half a transaction's worth at a time.
  for (const part of chunk(writes, TRANSACTION_MAX_ITEMS / 2)) {
    const events = eventOps(
      deps,
      part.map((a) => ({
        source: SOURCE,
        detailType: a.RevokedAttestationID ? DetailType.AttestationRevoked : DetailType.AttestationRecorded,
        detail: { OrganizationID: caller.OrganizationID, SpaceID: a.SpaceID, SpaceSlug: slug.get(a.SpaceID) ?? '', AttestationID: a.AttestationID, Type: a.Type, Result: a.Result, UserID: a.UserID, ChangeOrderID: a.ChangeOrderID, RevokedAttestationID: a.RevokedAttestationID },
      })),
    );
    await deps.store.transact([...part.map((item) => ({ op: 'create' as const, kind: 'Attestation' as const, item })), ...events]);
  }
}

/** `cub attestation create`: an attestation of any type in one Space, over a ChangeOrder's revisions there or named ones. */
export async function createAttestation(deps: ChangeDeps, caller: Caller, space: Space, o: Omit<ApproveInput, 'Spaces' | 'WhereSpace' | 'Stage'> & { Type: string }): Promise<ApproveResult> {
  return approve(deps, caller, { ...o, Spaces: [space.SpaceID], All: o.All ?? true });
}

/** Revokes an attestation: a new record naming it, never an edit. Its author, or anyone with Manage in the Space. */
export async function revokeAttestation(deps: ChangeDeps, caller: Caller, space: Space, id: string, note: string | undefined): Promise<Attestation> {
  const all = await attestationsOf(deps, space);
  const a = all.find((x) => x.AttestationID === id.toLowerCase() && !x.RevokedAttestationID);
  if (!a) throw new NotFound(`attestation '${id}' not found in space '${space.Slug}'`);
  if (a.RevokedBy) throw new Invalid(`attestation '${id}' was already revoked (by ${a.RevokedBy})`);
  if (a.UserID !== caller.UserID) requireVerb(caller, [space], 'Manage', "revoke another user's attestation");
  const revocation = attestation(deps, caller, space, { Type: a.Type, Result: a.Result, Note: note, Claims: {}, ChangeOrderID: a.ChangeOrderID, RevokedAttestationID: a.AttestationID, Revisions: [] });
  await record(deps, caller, [revocation], [space]);
  return revocation;
}

/** A Space's attestations as read, newest first. */
export async function listAttestations(deps: ChangeDeps, space: Space): Promise<AttestationView[]> {
  return (await attestationsOf(deps, space)).sort((a, b) => (a.CreatedAt < b.CreatedAt ? 1 : a.CreatedAt > b.CreatedAt ? -1 : a.AttestationID < b.AttestationID ? 1 : -1));
}

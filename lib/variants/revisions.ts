import { diffData } from '../config/diff.ts';
import { validateData } from '../config/documents.ts';
import { compress, dataHash, decompress } from '../config/hash.ts';
import { touchesProtected } from '../config/merge.ts';
import { validationErrors } from '../config/validate.ts';
import type {
  Caller,
  ChangeSet,
  Mutation,
  ProtectedPath,
  Space,
  StoredRevision,
  Target,
  ToolchainType,
  Unit,
} from '../model/entities.ts';
import { ChangeSetState } from '../model/entities.ts';
import { Conflict, Invalid, NotFound, TooLarge } from '../model/errors.ts';
import type { UnitDeps } from './ports.ts';
import type { StoreOp } from '../ports/store.ts';
import { findInSpace } from './lookup.ts';

/** Compressed data larger than this cannot share a DynamoDB item (400 KB) with its revision's fields. */
export const MAX_STORED_DATA = 350_000;

/** How a write came about, for the revision and its mutation. */
export interface WriteMeta {
  source: string;
  description?: string;
  functionInvocation?: { FunctionName: string; Arguments: string[] };
  protect?: ProtectedPath[];
  changeSetRef?: string;
  /** For merges: where the change came from. */
  merge?: { MergeSourceID: string; MergeBaseRevisionNum: number; MergeEndRevisionNum: number; LinkID?: string };
  restoredRevisionNum?: number;
}

function storable(data: string): string {
  const stored = compress(data);
  if (stored.length > MAX_STORED_DATA) {
    throw new TooLarge(
      `unit data compresses to ${stored.length} bytes, more than the ${MAX_STORED_DATA} a revision can hold`,
    );
  }
  return stored;
}

async function openChangeSet(deps: UnitDeps, caller: Caller, space: Space, ref: string): Promise<ChangeSet> {
  const { item, space: home } = await findInSpace<ChangeSet>(deps, caller, space, 'ChangeSet', ref);
  if (home.SpaceID !== space.SpaceID)
    throw new Invalid(`changeset '${ref}' is in space '${home.Slug}'; a ChangeSet covers the units of its own Space`);
  if (item.State !== ChangeSetState.Open) throw new Conflict(`changeset '${item.Slug}' is closed; open a new one`);
  return item;
}

/** Resolves a Target reference for a Unit of `space`. */
export async function targetId(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  ref: string | null | undefined,
): Promise<string | undefined> {
  if (!ref) return undefined;
  return (await findInSpace<Target>(deps, caller, space, 'Target', ref)).item.TargetID;
}

/** The fields a new Unit may be given. */
export interface NewUnit {
  Slug: string;
  ToolchainType: ToolchainType;
  DisplayName?: string;
  Labels?: Record<string, string>;
  Annotations?: Record<string, string>;
  TargetID?: string;
  UpstreamUnitID?: string;
  UpstreamSpaceID?: string;
  UpstreamRevisionNum?: number;
  ChangeSetID?: string;
  DeleteGates?: Record<string, string>;
}

/** A new Unit at revision 1, and the store ops that create it with that revision (no write yet). */
export function newUnit(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  fields: NewUnit,
  data: string,
  meta: WriteMeta,
): { unit: Unit; ops: StoreOp[] } {
  validateData(fields.ToolchainType, data);
  const stored = storable(data);
  const now = deps.now().toISOString();
  const unit: Unit = {
    OrganizationID: caller.OrganizationID,
    SpaceID: space.SpaceID,
    UnitID: deps.newId(),
    Slug: fields.Slug,
    DisplayName: fields.DisplayName ?? fields.Slug,
    Labels: fields.Labels ?? {},
    Annotations: fields.Annotations ?? {},
    ToolchainType: fields.ToolchainType,
    TargetID: fields.TargetID,
    HeadRevisionNum: 1,
    LastReleasedRevisionNum: 0,
    LastChangeDescription: meta.description ?? '',
    UpstreamUnitID: fields.UpstreamUnitID,
    UpstreamSpaceID: fields.UpstreamSpaceID,
    UpstreamRevisionNum: fields.UpstreamRevisionNum ?? 0,
    ChangeSetID: fields.ChangeSetID,
    ChangeSetStartRevisionNum: fields.ChangeSetID ? 0 : undefined,
    Conflicts: [],
    ProtectedPaths: [],
    DeleteGates: fields.DeleteGates,
    DataHash: dataHash(data),
    DataSize: Buffer.byteLength(data),
    ValidationErrors: validationErrors(fields.ToolchainType, data),
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  const { revision, mutation } = revisionOf(deps, caller, unit, data, stored, '', meta);
  return {
    unit,
    ops: [
      { op: 'create', kind: 'Revision', item: revision },
      { op: 'create', kind: 'Mutation', item: mutation },
    ],
  };
}

/** What a person gives to create a Unit: its fields, its data, and the Target and open ChangeSet by reference. */
export interface CreateUnitInput extends Omit<NewUnit, 'TargetID' | 'ChangeSetID'> {
  Data: string;
  TargetID?: string;
  ChangeSetID?: string;
  LastChangeDescription?: string;
}

/** Creates a Unit and its first revision. */
export async function createUnit(deps: UnitDeps, caller: Caller, space: Space, body: CreateUnitInput): Promise<Unit> {
  const cs = body.ChangeSetID ? await openChangeSet(deps, caller, space, body.ChangeSetID) : undefined;
  const { unit, ops } = newUnit(
    deps,
    caller,
    space,
    { ...body, TargetID: await targetId(deps, caller, space, body.TargetID), ChangeSetID: cs?.ChangeSetID },
    body.Data,
    { source: 'Create', description: body.LastChangeDescription },
  );
  await deps.store.transact([{ op: 'create', kind: 'Unit', item: unit }, ...ops]);
  return unit;
}

function revisionOf(
  deps: UnitDeps,
  caller: Caller,
  unit: Unit,
  data: string,
  stored: string,
  before: string,
  meta: WriteMeta,
) {
  const now = unit.UpdatedAt;
  const revision: StoredRevision = {
    OrganizationID: unit.OrganizationID,
    SpaceID: unit.SpaceID,
    UnitID: unit.UnitID,
    RevisionID: deps.newId(),
    RevisionNum: unit.HeadRevisionNum,
    Description: meta.description ?? '',
    Source: meta.source,
    UserID: caller.UserID,
    ChangeSetID: unit.ChangeSetID,
    DataHash: unit.DataHash,
    DataSize: unit.DataSize,
    ValidationErrors: unit.ValidationErrors,
    Data: stored,
    CreatedAt: now,
  };
  const mutation: Mutation = {
    OrganizationID: unit.OrganizationID,
    SpaceID: unit.SpaceID,
    UnitID: unit.UnitID,
    MutationID: deps.newId(),
    RevisionNum: unit.HeadRevisionNum,
    Source: meta.source,
    FunctionInvocation: meta.functionInvocation,
    ...(meta.merge ?? {}),
    RestoredRevisionNum: meta.restoredRevisionNum,
    ...compactChanges(
      diffData(unit.ToolchainType, before, data).map((c) => ({
        ...c,
        ...(touchesProtected(c, unit.ProtectedPaths) ? { Protected: true } : {}),
      })),
    ),
    CreatedAt: now,
  };
  return { revision, mutation };
}

/** About how many bytes a value takes as JSON, counting no further than `limit` (so a huge value costs no more than a small one). */
function sizeUpTo(v: unknown, limit: number): number {
  let size = 0;
  const walk = (x: unknown): void => {
    if (size > limit) return;
    if (x === null || typeof x !== 'object') {
      size += typeof x === 'string' ? x.length + 2 : String(x).length;
      return;
    }
    size += 2;
    if (Array.isArray(x)) for (const y of x) walk(y);
    else
      for (const k in x) {
        size += k.length + 4;
        walk((x as Record<string, unknown>)[k]);
        if (size > limit) return;
      }
  };
  walk(v);
  return size;
}

/** The largest value a Mutation keeps with its change (bytes of JSON), and the most its changes may take together. */
const VALUE_KEPT = 4096;
const CHANGES_BUDGET = 128 * 1024;

/**
 * What a Mutation keeps of a revision's changes, so its item stays far under DynamoDB's 400 KB however
 * large the write: every path up to the budget, each value up to VALUE_KEPT bytes, then only a count.
 * The revisions themselves hold the data: a diff of two of them shows everything.
 */
export function compactChanges(changes: Mutation['Changes']): Pick<Mutation, 'Changes' | 'ChangesOmitted'> {
  const kept: Mutation['Changes'] = [];
  let size = 0;
  for (const c of changes) {
    const value = c.Value === undefined ? 0 : sizeUpTo(c.Value, VALUE_KEPT + 1);
    const entry = value > VALUE_KEPT ? { ...c, Value: undefined, ValueOmitted: true } : c;
    size += c.Path.length + c.Resource.length + 48 + (value > VALUE_KEPT ? 0 : value);
    if (size > CHANGES_BUDGET) return { Changes: kept, ChangesOmitted: changes.length - kept.length };
    kept.push(entry);
  }
  return { Changes: kept };
}

/**
 * The Unit one revision further on, with the store ops that write that revision and its mutation
 * (the caller adds the Unit's own guarded update, so several revisions can land in one transaction).
 */
export function advance(
  deps: UnitDeps,
  caller: Caller,
  unit: Unit,
  before: string,
  data: string,
  meta: WriteMeta,
): { unit: Unit; ops: StoreOp[] } {
  const next: Unit = {
    ...unit,
    HeadRevisionNum: unit.HeadRevisionNum + 1,
    LastChangeDescription: meta.description ?? '',
    DataHash: dataHash(data),
    DataSize: Buffer.byteLength(data),
    ValidationErrors: validationErrors(unit.ToolchainType, data),
    UpdatedAt: deps.now().toISOString(),
  };
  const { revision, mutation } = revisionOf(deps, caller, next, data, storable(data), before, meta);
  return {
    unit: next,
    ops: [
      { op: 'create', kind: 'Revision', item: revision },
      { op: 'create', kind: 'Mutation', item: mutation },
    ],
  };
}

/** The answer when a Unit has no revision `num`: 404, naming its head. */
export function noRevision(unit: Unit, num: number): NotFound {
  return new NotFound(`unit '${unit.Slug}' has no revision ${num} (head is ${unit.HeadRevisionNum})`);
}

/** The data of a Unit at one revision. */
export async function dataAt(deps: UnitDeps, unit: Unit, num: number): Promise<string> {
  if (num === 0) return '';
  const rev = await deps.store.getRevision(unit.UnitID, num);
  if (!rev) throw noRevision(unit, num);
  return decompress(rev.Data);
}

/**
 * Writes new data as the Unit's next revision, guarded by the Version read; data equal to the head makes no
 * revision. Returns the unit as written and whether a revision was made.
 */
export async function writeData(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  data: string,
  meta: WriteMeta,
  extra: Partial<Unit> = {},
  /** The head's data, when the caller has already read it. */
  head?: string,
): Promise<{ unit: Unit; revision?: number }> {
  validateData(unit.ToolchainType, data);
  const cs = meta.changeSetRef ? await openChangeSet(deps, caller, space, meta.changeSetRef) : undefined;
  if (unit.ChangeSetID && unit.ChangeSetID !== cs?.ChangeSetID) {
    const locker = await deps.store.getInSpace<ChangeSet>('ChangeSet', space.SpaceID, unit.ChangeSetID);
    throw new Conflict(
      `unit '${unit.Slug}' is locked by open changeset '${locker?.Slug ?? unit.ChangeSetID}'; write under it (--changeset ${locker?.Slug ?? unit.ChangeSetID}) or close it first`,
    );
  }
  const protect = mergeProtected(unit.ProtectedPaths, meta.protect ?? []);
  const hash = dataHash(data);
  const now = deps.now().toISOString();
  const base: Unit = { ...unit, ...extra };
  if (hash === unit.DataHash) {
    const protectChanged = protect.length !== unit.ProtectedPaths.length;
    const extraChanged = Object.keys(extra).length > 0;
    if (!protectChanged && !extraChanged) return { unit };
    const next: Unit = { ...base, ProtectedPaths: protect, UpdatedAt: now, Version: unit.Version + 1 };
    await deps.store.updateUnit(next, unit.Version, unit.Slug);
    return { unit: next };
  }
  const before = head ?? (await dataAt(deps, unit, unit.HeadRevisionNum));
  const locked =
    cs && !unit.ChangeSetID ? { ChangeSetID: cs.ChangeSetID, ChangeSetStartRevisionNum: unit.HeadRevisionNum } : {};
  const step = advance(deps, caller, { ...base, ProtectedPaths: protect, ...locked }, before, data, meta);
  const next: Unit = { ...step.unit, Version: unit.Version + 1 };
  await deps.store.transact([{ op: 'update', kind: 'Unit', item: next, expectedVersion: unit.Version }, ...step.ops]);
  return { unit: next, revision: next.HeadRevisionNum };
}

function mergeProtected(have: ProtectedPath[], add: ProtectedPath[]): ProtectedPath[] {
  const out = [...have];
  const seen = new Set(have.map((p) => `${p.Resource} ${p.Path}`));
  for (const p of add) {
    const k = `${p.Resource} ${p.Path}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push(p);
    }
  }
  return out;
}

import { diffData, type PathChange } from '../config/diff.ts';
import { bindArguments, isReadOnly, runFunction } from '../config/functions.ts';
import {
  MarkRole,
  newEntity,
  patched,
  type Caller,
  type CommonPatch,
  type Mark,
  type Revision,
  type RevisionView,
  type Space,
  type Tag,
  type Unit,
} from '../model/entities.ts';
import { BatonError, Conflict, expectVersion, Invalid, NotFound } from '../model/errors.ts';
import { matches, parseWhere } from '../where/index.ts';
import { deleteUnitCascade, gated, type DeleteReport } from './deletion.ts';
import { bySlug, findInSpace, findUnit } from './lookup.ts';
import { dataAt, targetId, writeData } from './revisions.ts';
import { revisionNum } from './revision-refs.ts';
import type { UnitDeps } from './ports.ts';

/** What a person may change on a Unit: its common fields, its Target and, optionally, its data. */
export interface UpdateUnitInput extends CommonPatch {
  TargetID?: string | null;
  Data?: string;
  LastChangeDescription?: string;
  ChangeSetID?: string;
}

/** Updates a Unit's fields, and writes new data as its next revision when given. */
export async function updateUnit(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  body: UpdateUnitInput,
): Promise<Unit> {
  expectVersion(`unit '${unit.Slug}'`, unit.Version, body.Version);
  const { Slug, DisplayName, Labels, Annotations } = patched(unit, body, deps);
  const meta: Partial<Unit> = {
    Slug,
    DisplayName,
    Labels,
    Annotations,
    TargetID: body.TargetID === undefined ? unit.TargetID : await targetId(deps, caller, space, body.TargetID),
  };
  if (body.Data !== undefined)
    return (
      await writeData(
        deps,
        caller,
        space,
        unit,
        body.Data,
        { source: 'Update', description: body.LastChangeDescription, changeSetRef: body.ChangeSetID },
        meta,
      )
    ).unit;
  const next: Unit = { ...patched(unit, body, deps), TargetID: meta.TargetID };
  await deps.store.updateUnit(next, unit.Version, unit.Slug);
  return next;
}

/** Deletes a Unit with the Links into it: refused while an open ChangeSet holds it, or past a delete gate unless forced. */
export async function deleteUnit(deps: UnitDeps, unit: Unit, force: boolean): Promise<DeleteReport> {
  if (unit.ChangeSetID) throw new Conflict(`unit '${unit.Slug}' is locked by an open changeset; close it first`);
  const gates = gated([unit]);
  if (gates.length && !force) throw new Conflict(`unit ${gates[0]} has a delete gate; use --force to delete past it`);
  const report: DeleteReport = { DeletedUnits: [], RemovedLinks: [] };
  await deleteUnitCascade(deps, unit, report);
  return report;
}

/** The Tags marking each revision, as `TagID → ""`. */
function tagsAt(marks: Mark[], num: number): Record<string, string> {
  return Object.fromEntries(marks.filter((m) => m.RevisionNum === num).map((m) => [m.TagID, '']));
}

/** Which ChangeOrders a revision of a Unit carries: those whose interval on the Unit, (start, end], holds it. */
function carriedBy(marks: Mark[]): (num: number) => Record<string, string> {
  const intervals = new Map<string, { start?: number; end?: number }>();
  for (const m of marks) {
    if (!m.ChangeOrderID || (m.Role !== MarkRole.start && m.Role !== MarkRole.end)) continue;
    const i = intervals.get(m.ChangeOrderID) ?? {};
    i[m.Role] = m.RevisionNum;
    intervals.set(m.ChangeOrderID, i);
  }
  return (n) =>
    Object.fromEntries(
      [...intervals]
        .filter(([, i]) => i.start !== undefined && i.end !== undefined && i.start < n && n <= i.end)
        .map(([id]) => [id, '']),
    );
}

/** A revision as read: its Tags and the ChangeOrders it carries. */
export type RevisionRead = RevisionView & { ChangeOrders: Record<string, string> };

/** Revisions as read, from their Unit's marks: each with its Tags and the ChangeOrders it carries. */
function readWith(marks: Mark[]): (r: Revision) => RevisionRead {
  const carried = carriedBy(marks);
  return (r) => ({ ...r, Tags: tagsAt(marks, r.RevisionNum), ChangeOrders: carried(r.RevisionNum) });
}

/** A Unit's revisions, newest first, each with its Tags and the ChangeOrders it carries. */
export async function unitRevisions(deps: UnitDeps, unit: Unit): Promise<RevisionRead[]> {
  const [revisions, marks] = await Promise.all([
    deps.store.listRevisions(unit.UnitID),
    deps.store.marksOfUnit(unit.UnitID),
  ]);
  return revisions.map(readWith(marks)).reverse();
}

/**
 * A Unit's revisions a page at a time, newest first, each with its Tags and the ChangeOrders it carries (the
 * Unit's marks read once): the `read` of a `keyedPage`.
 */
export function revisionReader<T = RevisionRead>(
  deps: UnitDeps,
  unit: Unit,
  show: (r: RevisionRead) => T = (r) => r as T,
): (want: number, after?: string) => Promise<{ items: { item: T; cursor: string }[]; next?: string }> {
  let marks: Promise<Mark[]> | undefined;
  return async (want, after) => {
    const [page, ms] = await Promise.all([
      deps.store.revisionPage(unit.UnitID, want, after),
      (marks ??= deps.store.marksOfUnit(unit.UnitID)),
    ]);
    const read = readWith(ms);
    return { items: page.items.map((x) => ({ item: show(read(x.revision)), cursor: x.cursor })), next: page.next };
  };
}

/** The revisions of every Unit of a Space, by Unit slug, each Unit's newest first (a route's `where` then picks, say, what a ChangeOrder brought there). */
export async function spaceRevisions(deps: UnitDeps, space: Space): Promise<(RevisionRead & { UnitSlug: string })[]> {
  const units = (await deps.store.listUnits(space.SpaceID)).sort(bySlug);
  return (
    await Promise.all(units.map(async (u) => (await unitRevisions(deps, u)).map((r) => ({ ...r, UnitSlug: u.Slug }))))
  ).flat();
}

/** One revision of a Unit (by number, Tag, ChangeSet, ChangeOrder…), without its data, with its Tags and the ChangeOrders it carries. */
export async function unitRevision(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  ref: string,
): Promise<RevisionRead> {
  const num = await revisionNum(deps, caller, space, unit, ref);
  const [rev, marks] = await Promise.all([
    deps.store.getRevision(unit.UnitID, num),
    deps.store.marksOfUnit(unit.UnitID),
  ]);
  if (!rev) throw new NotFound(`unit '${unit.Slug}' has no revision ${num}`);
  const { Data: _data, ...meta } = rev;
  return readWith(marks)(meta satisfies Revision);
}

/** The path-level changes between two revisions of a Unit (0 is before the first). */
export async function diffRevisions(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  fromRef: string | number,
  toRef?: string | number,
): Promise<{ UnitID: string; FromRevisionNum: number; ToRevisionNum: number; Changes: PathChange[] }> {
  const from = fromRef === 0 ? 0 : await revisionNum(deps, caller, space, unit, fromRef);
  const to = await revisionNum(deps, caller, space, unit, toRef ?? unit.HeadRevisionNum);
  const [a, b] = await Promise.all([dataAt(deps, unit, from), dataAt(deps, unit, to)]);
  return { UnitID: unit.UnitID, FromRevisionNum: from, ToRevisionNum: to, Changes: diffData(unit.ToolchainType, a, b) };
}

/** A Tag named `slug` or `space/slug`; a plain slug not yet in the Space is created there. */
export async function findOrCreateTag(deps: UnitDeps, caller: Caller, space: Space, ref: string): Promise<Tag> {
  try {
    return (await findInSpace<Tag>(deps, caller, space, 'Tag', ref)).item;
  } catch (e) {
    if (ref.includes('/') || !(e instanceof NotFound)) throw e;
  }
  const tag: Tag = {
    ...newEntity(deps, caller.OrganizationID, { Slug: ref }),
    SpaceID: space.SpaceID,
    TagID: deps.newId(),
  };
  await deps.store.createInSpace('Tag', tag);
  return tag;
}

/** A Tag's mark on one revision of a Unit. */
export interface TagMark {
  TagID: string;
  TagSlug: string;
  UnitID: string;
  SpaceID: string;
  RevisionNum: number;
}

/** Marks a revision with a Tag (made when new); a Tag marking another revision of the Unit moves only with `move`. */
export async function tagRevision(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  tagRef: string,
  num: number,
  move: boolean,
): Promise<TagMark> {
  const tag = await findOrCreateTag(deps, caller, space, tagRef);
  if (tag.ChangeSetID)
    throw new Conflict(`tag '${tag.Slug}' belongs to a changeset; its marks are set by the changeset`);
  if (tag.ChangeOrderID)
    throw new Conflict(
      `tag '${tag.Slug}' belongs to a change order; its marks are set by the change order (a fix is adopted into its release with ChangeOrder:<space>/<change-order>)`,
    );
  const [existing] = await deps.store.marksAt([unit.UnitID], [tag.TagID]);
  if (existing && existing.RevisionNum !== num && !move) {
    throw new Conflict(
      `tag '${tag.Slug}' already marks revision ${existing.RevisionNum} of unit '${unit.Slug}'; use --move to move it to ${num}`,
    );
  }
  if (existing?.RevisionNum !== num)
    await deps.store.putMark({
      TagID: tag.TagID,
      UnitID: unit.UnitID,
      SpaceID: space.SpaceID,
      RevisionNum: num,
      UpdatedAt: deps.now().toISOString(),
      Move: !!existing,
    });
  return { TagID: tag.TagID, TagSlug: tag.Slug, UnitID: unit.UnitID, SpaceID: space.SpaceID, RevisionNum: num };
}

/** A function invocation over Units of a Space: named ones, or those a where selects. */
export interface InvokeInput {
  FunctionName: string;
  Arguments: string[];
  UnitIDs?: string[];
  Where?: string;
  DryRun?: boolean;
  Protect?: boolean;
  ChangeDescription?: string;
  ChangeSetID?: string;
}

/** What a function did (or would do, or read) on one Unit. */
export interface InvokeResult {
  UnitID: string;
  UnitSlug: string;
  Changed?: boolean;
  RevisionNum?: number;
  Changes?: PathChange[];
  Output?: unknown;
  Error?: { Code: string; Message: string };
}

/**
 * Runs a function over Kubernetes/YAML Units. Every Unit is computed before anything is written, so a
 * function that fails on one writes on none; a write that fails on one of several is reported and the
 * rest land (`failed` counts them).
 */
export async function invokeFunction(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  body: InvokeInput,
): Promise<{ Results: InvokeResult[]; failed: number }> {
  bindArguments(body.FunctionName, body.Arguments);
  let units: Unit[];
  if (body.UnitIDs?.length) {
    units = [];
    for (const ref of body.UnitIDs) units.push(await findUnit(deps, space, ref));
    const other = units.find((u) => u.ToolchainType !== 'Kubernetes/YAML');
    if (other)
      throw new Invalid(
        `unit '${other.Slug}' is ${other.ToolchainType}; ${body.FunctionName} works on Kubernetes/YAML units`,
      );
  } else {
    const q = body.Where ? parseWhere(body.Where, 'Unit') : undefined;
    units = (await deps.store.listUnits(space.SpaceID))
      .filter((u) => u.ToolchainType === 'Kubernetes/YAML' && (!q || matches(q, { ...u, SpaceSlug: space.Slug })))
      .sort(bySlug);
  }
  const runs = await Promise.all(
    units.map(async (unit) => {
      const head = await dataAt(deps, unit, unit.HeadRevisionNum);
      return { unit, head, result: runFunction(body.FunctionName, body.Arguments, head) };
    }),
  );
  if (isReadOnly(body.FunctionName))
    return {
      Results: runs.map(({ unit, result }) => ({
        UnitID: unit.UnitID,
        UnitSlug: unit.Slug,
        RevisionNum: unit.HeadRevisionNum,
        Output: result.output,
      })),
      failed: 0,
    };
  const results: InvokeResult[] = [];
  let failed = 0;
  for (const { unit, head, result } of runs) {
    if (body.DryRun) {
      results.push({
        UnitID: unit.UnitID,
        UnitSlug: unit.Slug,
        Changed: result.data !== head,
        Changes: diffData('Kubernetes/YAML', head, result.data),
      });
      continue;
    }
    try {
      const meta = {
        source: 'FunctionInvocation',
        description: body.ChangeDescription,
        functionInvocation: { FunctionName: body.FunctionName, Arguments: body.Arguments },
        protect: body.Protect ? result.written : [],
        changeSetRef: body.ChangeSetID,
      };
      const w = await writeData(deps, caller, space, unit, result.data, meta, {}, head);
      results.push({
        UnitID: unit.UnitID,
        UnitSlug: unit.Slug,
        Changed: w.revision !== undefined,
        RevisionNum: w.unit.HeadRevisionNum,
      });
    } catch (e) {
      if (!(e instanceof BatonError) || units.length === 1) throw e;
      failed++;
      results.push({
        UnitID: unit.UnitID,
        UnitSlug: unit.Slug,
        Changed: false,
        Error: { Code: e.code, Message: e.message },
      });
    }
  }
  return { Results: results, failed };
}

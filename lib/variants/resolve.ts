/**
 * `cub unit update --patch --resolve "Link:*" [--merge-end N]`: resolves a Unit's TransformPaths, Insert and Upsert Links
 * against their upstream Unit at its head (or revision N), as one revision with every Link's cursor
 * moved in the same transaction. A Link that Protects protects the paths it writes.
 */
import { diffData, type PathChange } from '../config/diff.ts';
import { applyTransform } from '../config/transform.ts';
import type { Caller, Link, Space, Unit } from '../model/entities.ts';
import { Conflict, Invalid, NotFound } from '../model/errors.ts';
import type { StoreOp } from '../ports/store.ts';
import type { UnitDeps } from './ports.ts';
import { advance, dataAt } from './revisions.ts';

/** The Link types a resolve reads values through. */
const RESOLVED = ['TransformPaths', 'Insert', 'Upsert'] as const;

export interface ResolveResult {
  UnitID: string;
  UnitSlug: string;
  Changed: boolean;
  RevisionNum: number;
  Links: { LinkSlug: string; UpstreamRevisionNum: number; Values: Record<string, string> }[];
}

/** Which Links a `--resolve` names: `Link:*` for all of them, or `Link:<slug>`. */
function selectLinks(links: Link[], which: string): Link[] {
  if (!/^Link:/.test(which)) throw new Invalid(`--resolve takes Link:* or Link:<link>, not '${which}'`);
  const name = which.slice('Link:'.length);
  const picked = links.filter(
    (l) => (RESOLVED as readonly string[]).includes(l.UpdateType) && (name === '*' || l.Slug === name),
  );
  if (!picked.length) {
    const other = links.find((l) => l.Slug === name);
    if (other)
      throw new Invalid(
        `link '${name}' is ${other.UpdateType}: --resolve resolves TransformPaths, Insert and Upsert links`,
      );
    throw new NotFound(
      name === '*'
        ? 'the unit has no TransformPaths, Insert or Upsert links to resolve'
        : `the unit has no link '${name}'`,
    );
  }
  return picked;
}

/** A resolve worked out: the result, and the store ops that write it (the Unit, its revision, each Link's cursor). */
export interface ResolvePlan {
  result: ResolveResult;
  /** The Unit as it would be written (its head unchanged when nothing changes). */
  unit: Unit;
  ops: StoreOp[];
  /** The values it changes. */
  changes: PathChange[];
}

/**
 * Works out resolving `links` of a Unit, each against its upstream at `endOf(link)` (its head when
 * undefined), without writing: a caller adds its own ops (a ChangeOrder's marks) to the same transaction.
 */
export async function planResolve(
  deps: UnitDeps,
  caller: Caller,
  unit: Unit,
  links: Link[],
  endOf: (l: Link) => number | undefined,
  description?: string,
): Promise<ResolvePlan> {
  const head = await dataAt(deps, unit, unit.HeadRevisionNum);
  let data = head;
  let protect = unit.ProtectedPaths;
  const moved: { link: Link; upstreamRev: number; values: Record<string, string> }[] = [];
  for (const link of links) {
    const up = await deps.store.getUnit(link.ToSpaceID, link.ToUnitID);
    if (!up) throw new NotFound(`link '${link.Slug}': its upstream unit no longer exists`);
    const rev = endOf(link) ?? up.HeadRevisionNum;
    if (rev < 1 || rev > up.HeadRevisionNum)
      throw new NotFound(
        `link '${link.Slug}': unit '${up.Slug}' has no revision ${rev} (head is ${up.HeadRevisionNum})`,
      );
    const r = applyTransform(link, await dataAt(deps, up, rev), data);
    data = r.data;
    if (link.Protect)
      protect = [
        ...protect,
        ...r.written.filter((w) => !protect.some((p) => p.Resource === w.Resource && p.Path === w.Path)),
      ];
    moved.push({ link, upstreamRev: rev, values: r.values });
  }
  const changed = data !== head;
  const result: ResolveResult = {
    UnitID: unit.UnitID,
    UnitSlug: unit.Slug,
    Changed: changed,
    RevisionNum: changed ? unit.HeadRevisionNum + 1 : unit.HeadRevisionNum,
    Links: moved.map((m) => ({ LinkSlug: m.link.Slug, UpstreamRevisionNum: m.upstreamRev, Values: m.values })),
  };
  const now = deps.now().toISOString();
  const ops: StoreOp[] = [];
  let next: Unit = unit;
  if (changed) {
    const first = moved[0]!;
    const step = advance(deps, caller, { ...unit, ProtectedPaths: protect }, head, data, {
      source: 'Resolve',
      description: description ?? `resolve ${moved.map((m) => `${m.link.Slug}@${m.upstreamRev}`).join(', ')}`,
      merge: {
        MergeSourceID: first.link.ToUnitID,
        MergeBaseRevisionNum: first.link.UpstreamLastMergedRevisionNum,
        MergeEndRevisionNum: first.upstreamRev,
        LinkID: first.link.LinkID,
      },
    });
    next = { ...step.unit, Version: unit.Version + 1 };
    ops.push({ op: 'update', kind: 'Unit', item: next, expectedVersion: unit.Version }, ...step.ops);
  }
  // Each Link's cursor says which upstream revision the Unit now reflects.
  for (const m of moved)
    ops.push({
      op: 'update',
      kind: 'Link',
      item: {
        ...m.link,
        UpstreamLastMergedRevisionNum: m.upstreamRev,
        DownstreamLastMergedRevisionNum: next.HeadRevisionNum,
        UpdatedAt: now,
        Version: m.link.Version + 1,
      },
      expectedVersion: m.link.Version,
    });
  return { result, unit: next, ops, changes: changed ? diffData(unit.ToolchainType, head, data) : [] };
}

/** Writes a resolve's ops as one transaction; a race is a 409 saying to run it again. */
export async function writeResolve(deps: UnitDeps, unit: Unit, ops: StoreOp[]): Promise<void> {
  try {
    await deps.store.transact(ops);
  } catch (e) {
    if (e instanceof Conflict)
      throw new Conflict(
        `unit '${unit.Slug}' or one of its links changed while resolving; run it again (${e.message})`,
      );
    throw e;
  }
}

export async function resolveLinks(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  o: { which: string; mergeEnd?: number; dryRun?: boolean; description?: string },
): Promise<ResolveResult> {
  const links = selectLinks(
    (await deps.store.listInSpace<Link>('Link', space.SpaceID)).filter((l) => l.FromUnitID === unit.UnitID),
    o.which,
  );
  const plan = await planResolve(deps, caller, unit, links, () => o.mergeEnd, o.description);
  if (!o.dryRun) await writeResolve(deps, unit, plan.ops);
  return plan.result;
}

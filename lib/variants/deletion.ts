import type { Link, Space, Unit } from '../model/entities.ts';
import { Conflict } from '../model/errors.ts';
import type { SpaceKind } from '../ports/store.ts';
import { bySlug } from './lookup.ts';
import type { UnitDeps } from './ports.ts';

/** What a delete removed besides what was named, so nothing is left dangling unnoticed. */
export interface DeleteReport {
  DeletedUnits: string[];
  /** Links in other Spaces (or this one) that pointed at a deleted Unit, and were removed with it. */
  RemovedLinks: { LinkID: string; Slug: string; SpaceID: string }[];
}

/** Names the gated Units: `backend (critical)`. */
export function gated(units: Unit[]): string[] {
  return units
    .filter((u) => u.DeleteGates && Object.keys(u.DeleteGates).length)
    .sort(bySlug)
    .map((u) => `${u.Slug} (${Object.keys(u.DeleteGates!).join(', ')})`);
}

/**
 * Deletes a Unit with its own Links and every Link pointing at it; a downstream Unit that was cloned
 * from it keeps its data and loses only its upstream.
 */
export async function deleteUnitCascade(deps: UnitDeps, unit: Unit, report: DeleteReport): Promise<void> {
  const [own, into] = await Promise.all([
    deps.store.listInSpace<Link>('Link', unit.SpaceID),
    deps.store.linksInto(unit.UnitID),
  ]);
  const links = [
    ...own.filter((l) => l.FromUnitID === unit.UnitID),
    ...into.filter((l) => l.FromUnitID !== unit.UnitID),
  ];
  for (const l of links) {
    const fresh = await deps.store.getInSpace<Link>('Link', l.SpaceID, l.LinkID);
    if (!fresh) continue;
    await deps.store.deleteInSpace('Link', fresh);
    if (fresh.FromUnitID !== unit.UnitID) {
      report.RemovedLinks.push({ LinkID: fresh.LinkID, Slug: fresh.Slug, SpaceID: fresh.SpaceID });
      const down = await deps.store.getUnit(fresh.SpaceID, fresh.FromUnitID);
      if (down && down.UpstreamUnitID === unit.UnitID) {
        await deps.store.updateUnit(
          {
            ...down,
            UpstreamUnitID: undefined,
            UpstreamSpaceID: undefined,
            Version: down.Version + 1,
            UpdatedAt: deps.now().toISOString(),
          },
          down.Version,
          down.Slug,
        );
      }
    }
  }
  await deps.store.deleteUnit(unit);
  report.DeletedUnits.push(unit.Slug);
}

/**
 * What a Space holds that its deletion refuses to leave behind unless recursive, with how each is named
 * (one, many). Its attestations stay: they cannot be deleted, and record what was attested there.
 */
const HELD: [SpaceKind, string, string][] = [
  ['Tag', 'tag', 'tags'],
  ['ChangeSet', 'changeset', 'changesets'],
  ['Filter', 'filter', 'filters'],
  ['Target', 'target', 'targets'],
  ['Link', 'link', 'links'],
  ['Release', 'release', 'releases'],
  ['ChangeWorkflow', 'change workflow', 'change workflows'],
  ['ChangeOrder', 'change order', 'change orders'],
  ['Invocation', 'invocation', 'invocations'],
];

/** Deletes a Space: refused while not empty unless recursive, and past delete gates only when forced. */
export async function deleteSpace(
  deps: UnitDeps,
  space: Space,
  opts: { recursive: boolean; force: boolean },
): Promise<DeleteReport> {
  const kinds = HELD.map(([k]) => k);
  const [units, ...others] = await Promise.all([
    deps.store.listUnits(space.SpaceID),
    ...kinds.map((k) => deps.store.listInSpace<{ SpaceID: string; Slug: string }>(k, space.SpaceID)),
  ]);
  const gates = gated(units);
  if (gates.length && !opts.force)
    throw new Conflict(
      `space '${space.Slug}' has units with delete gates: ${gates.join(', ')}; use --recursive-force to delete past them`,
    );
  const held = units.length + others.reduce((n, l) => n + l.length, 0);
  if (held && !opts.recursive && !opts.force) {
    // What it holds, each kind it has: a workflow or a change order alone is not nothing.
    const counts = [
      [units.length, 'unit', 'units'] as const,
      ...others.map((l, i) => [l.length, HELD[i]![1], HELD[i]![2]] as const),
    ].filter(([n]) => n > 0);
    throw new Conflict(
      `space '${space.Slug}' is not empty (${counts.map(([n, one, many]) => `${n} ${n === 1 ? one : many}`).join(', ')}); delete them first or use --recursive`,
    );
  }
  const report: DeleteReport = { DeletedUnits: [], RemovedLinks: [] };
  for (const u of units) await deleteUnitCascade(deps, u, report);
  for (const [i, items] of others.entries()) {
    for (const item of items) {
      const kind = kinds[i]!;
      const id = (item as Record<string, unknown>)[`${kind}ID`] as string;
      const fresh = await deps.store.getInSpace<{ SpaceID: string; Slug: string }>(kind, space.SpaceID, id);
      if (fresh) await deps.store.transact([{ op: 'delete', kind, item: fresh }]);
    }
  }
  await deps.store.deleteSpace(space);
  report.RemovedLinks = report.RemovedLinks.filter((l) => l.SpaceID !== space.SpaceID);
  return report;
}

/** Which Units an Invoke ChangeOrder runs on, asked again on every read, and what that makes of its progress. */
import { DESCRIBING_TOOLCHAIN, type ChangeOrder, type Progress, type Space, type Unit } from '../model/entities.ts';
import { matches, parseWhere } from '../where/index.ts';
import { bySlug } from '../variants/lookup.ts';
import { marksOf, type CoMarks } from './marks.ts';
import type { ChangeDeps } from './ports.ts';

/** The Units of a Space the ChangeOrder's selection picks now: of its Invocation's toolchain, matching WhereUnit. */
export function selectedUnits(co: ChangeOrder, space: Space, units: Unit[]): Unit[] {
  const q = co.WhereUnit ? parseWhere(co.WhereUnit, 'Unit') : undefined;
  return units
    .filter(
      (u) =>
        u.ToolchainType !== DESCRIBING_TOOLCHAIN &&
        u.ToolchainType === co.Invocation?.ToolchainType &&
        (!q || matches(q, { ...u, SpaceSlug: space.Slug })),
    )
    .sort(bySlug);
}

/**
 * Progress as an Invoke ChangeOrder reads it: a Space whose selection now picks a Unit without the end
 * mark (added since) has not taken the change, whatever was recorded. Other kinds read as recorded.
 */
export async function effectiveProgress(
  deps: ChangeDeps,
  co: ChangeOrder,
  progress: Progress[],
  spaces: Map<string, Space>,
  marks?: CoMarks,
): Promise<Progress[]> {
  if (co.UpdateType !== 'Invoke' || !progress.length) return progress;
  const m = marks ?? (await marksOf(deps, co));
  const kept = await Promise.all(
    progress.map(async (p) => {
      const units = await deps.store.listUnits(p.SpaceID);
      // The selection may name the Space (SpaceSlug): read it as the promotion does.
      const space = spaces.get(p.SpaceID) ?? ({ SpaceID: p.SpaceID, Slug: '' } as Space);
      return selectedUnits(co, space, units).every((u) => m.end.has(u.UnitID)) ? p : undefined;
    }),
  );
  return kept.filter((p): p is Progress => !!p);
}

import { mergeData } from '../config/merge.ts';
import type { Caller, Space, Unit } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import type { UnitDeps } from './ports.ts';
import { dataAt, writeData } from './revisions.ts';
import { revisionNum } from './revision-refs.ts';

/** Writes an earlier revision's data as the Unit's next revision (none when it equals the head). */
export async function restoreUnit(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  revision: string | number,
  description?: string,
): Promise<{ unit: Unit; RestoredRevisionNum: number; Changed: boolean }> {
  const num = await revisionNum(deps, caller, space, unit, revision);
  const w = await writeData(deps, caller, space, unit, await dataAt(deps, unit, num), {
    source: 'Restore',
    description: description ?? `restore revision ${num}`,
    restoredRevisionNum: num,
  });
  return { unit: w.unit, RestoredRevisionNum: num, Changed: w.revision !== undefined };
}

/** Takes revisions `N` or `A-B` (`A..B`) back out of a Unit: their inverse merged into the head, so later changes stay. */
export async function revertUnit(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  range: string,
  description?: string,
): Promise<{ unit: Unit; Changed: boolean }> {
  const [a, b] = range.split(/-|\.\./).map(Number) as [number, number | undefined];
  const from = a;
  const to = b ?? a;
  if (from < 1 || to < from || to > unit.HeadRevisionNum)
    throw new Invalid(`revert range ${range} must lie within revisions 1..${unit.HeadRevisionNum}, first before last`);
  const [before, after, head] = await Promise.all([
    dataAt(deps, unit, from - 1),
    dataAt(deps, unit, to),
    dataAt(deps, unit, unit.HeadRevisionNum),
  ]);
  const reverted = mergeData(unit.ToolchainType, after, before, head, []);
  const w = await writeData(deps, caller, space, unit, reverted.data, {
    source: 'Revert',
    description: description ?? `revert revisions ${from}..${to}`,
  });
  return { unit: w.unit, Changed: w.revision !== undefined };
}

import { diffData, type PathChange } from '../config/diff.ts';
import { applyChanges } from '../config/merge.ts';
import type { Caller, Space, Unit } from '../model/entities.ts';
import { Conflict } from '../model/errors.ts';
import type { UnitDeps } from './ports.ts';
import { dataAt, writeData } from './revisions.ts';

/** Applies the upstream values of a Unit's recorded conflicts, clearing them (dry run: only says what would change). */
export async function applyConflicts(
  deps: UnitDeps,
  caller: Caller,
  space: Space,
  unit: Unit,
  dryRun: boolean,
): Promise<{ unit: Unit; Changes: PathChange[]; RevisionNum?: number }> {
  if (!unit.Conflicts.length) throw new Conflict(`unit '${unit.Slug}' has no conflicts to apply`);
  const head = await dataAt(deps, unit, unit.HeadRevisionNum);
  const changes: PathChange[] = unit.Conflicts.map((c) => ({
    Resource: c.Resource,
    Path: c.Path,
    Op: c.Op as PathChange['Op'],
    Value: c.UpstreamValue,
  }));
  const applied = applyChanges(unit.ToolchainType, head, changes, []);
  const diff = diffData(unit.ToolchainType, head, applied.data);
  if (dryRun) return { unit, Changes: diff };
  const w = await writeData(
    deps,
    caller,
    space,
    unit,
    applied.data,
    { source: 'ApplyConflicts', description: 'take the upstream values of conflicts' },
    { Conflicts: [] },
  );
  return { unit: w.unit, Changes: diff, RevisionNum: w.revision };
}

/** Dismisses a Unit's recorded conflicts: the downstream keeps its values (dry run: says nothing would change). */
export async function dismissConflicts(
  deps: UnitDeps,
  unit: Unit,
  dryRun: boolean,
): Promise<{ unit: Unit; Changes: PathChange[] }> {
  if (!unit.Conflicts.length) throw new Conflict(`unit '${unit.Slug}' has no conflicts to dismiss`);
  if (dryRun) return { unit, Changes: [] };
  const next: Unit = { ...unit, Conflicts: [], Version: unit.Version + 1, UpdatedAt: deps.now().toISOString() };
  await deps.store.updateUnit(next, unit.Version, unit.Slug);
  return { unit: next, Changes: [] };
}

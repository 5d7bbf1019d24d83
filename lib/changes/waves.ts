/**
 * Orders target Spaces in waves so each comes after the target Spaces it merges from (`mergesFrom`:
 * Space ID → the Space IDs its MergeUnits Links merge from). Spaces of a wave are independent; a cycle
 * lands whole in one last wave.
 */
export function mergeWaves<T extends { SpaceID: string }>(targets: T[], mergesFrom: Map<string, Set<string>>): T[][] {
  const ids = new Set(targets.map((t) => t.SpaceID));
  const after = (t: T) => [...(mergesFrom.get(t.SpaceID) ?? [])].filter((d) => ids.has(d) && d !== t.SpaceID);
  const waves: T[][] = [];
  let left = targets;
  const done = new Set<string>();
  while (left.length) {
    const ready = left.filter((t) => after(t).every((d) => done.has(d)));
    const wave = ready.length ? ready : left;
    waves.push(wave);
    for (const t of wave) done.add(t.SpaceID);
    left = left.filter((t) => !done.has(t.SpaceID));
  }
  return waves;
}

import type { ChangeOrderUpdateType, Space } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { matches, type Query } from '../where/index.ts';

/** Spaces downstream of the base, hop by hop: those cloned from it (UpstreamSpaceID), transitively, and those its Links reach. */
export function downstreamOf(base: Space, spaces: Space[], linkSpaces: Set<string>): Set<string> {
  const out = new Set<string>(linkSpaces);
  let frontier = new Set([base.SpaceID, ...linkSpaces]);
  while (frontier.size) {
    const next = new Set<string>();
    for (const s of spaces)
      if (s.UpstreamSpaceID && frontier.has(s.UpstreamSpaceID) && !out.has(s.SpaceID) && s.SpaceID !== base.SpaceID)
        next.add(s.SpaceID);
    for (const id of next) out.add(id);
    frontier = next;
  }
  return out;
}

/** How a ChangeOrder's Spaces are chosen. */
export interface ScopeSelection {
  base: Space;
  /** Every Space of the organization. */
  spaces: Space[];
  updateType: ChangeOrderUpdateType;
  /** The Spaces whose Units follow the base's Units by a Link of the ChangeOrder's type. */
  linkSpaces: Set<string>;
  /** Spaces named one by one (IDs), if any. */
  listed?: string[];
  /** Selections (where, component, filter), ANDed with each other and with the list. */
  queries: Query[];
}

/**
 * The Spaces in scope, in slug order, never the base: the listed ones that every query selects; or, with
 * no list, every Space the queries select; or, with neither, wherever the change can travel (the clone
 * lineage for UpgradeUnit, the MergeUnits Links for MergeUnits). A selection that skips a Space between
 * the base and a selected one is refused (UpgradeUnit).
 */
export function selectScope(s: ScopeSelection): string[] {
  const byId = new Map(s.spaces.map((x) => [x.SpaceID, x]));
  let scope: string[];
  if (s.listed?.length) scope = s.listed.filter((id) => s.queries.every((q) => matches(q, byId.get(id)!)));
  else if (s.queries.length)
    scope = s.spaces.filter((x) => s.queries.every((q) => matches(q, x))).map((x) => x.SpaceID);
  else scope = [...(s.updateType === 'UpgradeUnit' ? downstreamOf(s.base, s.spaces, s.linkSpaces) : s.linkSpaces)];
  scope = [...new Set(scope)]
    .filter((id) => id !== s.base.SpaceID && byId.has(id))
    .sort((a, b) => (byId.get(a)!.Slug < byId.get(b)!.Slug ? -1 : 1));
  checkNoSkips(s.base, scope, byId, s.updateType);
  return scope;
}

/** A change moves hop by hop: every Space between the base and a Space in scope must be in scope too. */
export function checkNoSkips(
  base: Space,
  scope: string[],
  byId: Map<string, Space>,
  updateType: ChangeOrderUpdateType,
): void {
  if (updateType !== 'UpgradeUnit') return;
  const inScope = new Set(scope);
  for (const id of scope) {
    const chain: Space[] = [];
    let s = byId.get(id);
    const seen = new Set<string>();
    while (s && s.UpstreamSpaceID && s.UpstreamSpaceID !== base.SpaceID && !seen.has(s.SpaceID)) {
      seen.add(s.SpaceID);
      s = byId.get(s.UpstreamSpaceID);
      if (s) chain.push(s);
    }
    if (!s || s.UpstreamSpaceID !== base.SpaceID)
      throw new Invalid(
        `space '${byId.get(id)?.Slug ?? id}' is not downstream of '${base.Slug}'; a change order moves along links from its base`,
      );
    const skippedSpace = chain.find((c) => !inScope.has(c.SpaceID));
    if (skippedSpace)
      throw new Invalid(
        `the selection skips space '${skippedSpace.Slug}', which lies between '${base.Slug}' and '${byId.get(id)!.Slug}'; every space between the base and a space in scope must be in scope`,
      );
  }
}

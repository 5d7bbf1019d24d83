import type {
  Attestation,
  AttestationView,
  Caller,
  ChangeOrder,
  ChangeOrderView,
  Filter,
  Mark,
  Progress,
  Release,
  Space,
  Unit,
} from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import type { AttestationFacts } from '../gates/attestations.ts';
import { GATE_RELEASES_SHOWN, type GateChangeOrder, type SpaceGateState } from '../gates/prerequisites.ts';
import { matches, parseWhere, relationsUsed, type Query } from '../where/index.ts';
import { newestPublished } from '../releases/bundle.ts';
import { bySlug, findComponent, findInSpace, findSpace } from '../variants/lookup.ts';
import type { CoMarks } from './marks.ts';
import { effectiveProgress } from './selection.ts';
import type { ChangeDeps } from './ports.ts';
import { deriveProgress, type StageSpaces } from './state.ts';

/** Every Space of the organization, with `Component` attached when a query reads it. */
export async function orgSpaces(deps: ChangeDeps, caller: Caller, queries: Query[]): Promise<Space[]> {
  const spaces = await deps.store.listSpaces(caller.OrganizationID);
  if (!queries.some((q) => relationsUsed(q).has('Component'))) return spaces;
  const comps = new Map((await deps.store.listComponents(caller.OrganizationID)).map((c) => [c.ComponentID, c]));
  return spaces.map((s) => ({ ...s, Component: s.ComponentID ? comps.get(s.ComponentID) : undefined }) as Space);
}

/**
 * The Spaces of each Stage, pure: those its WhereSpace selects among the ChangeOrder's in-scope Spaces
 * and its base (so a first Stage `Labels.Stage = 'Base'` holds the base, which took the change when it
 * was made), in slug order.
 */
export function stagesOver(co: ChangeOrder, spaces: Space[]): StageSpaces[] {
  const wf = co.ChangeWorkflow;
  if (!wf) return [];
  const inScope = new Set([...co.InScopeSpaceIDs, co.SpaceID]);
  const candidates = spaces.filter((s) => inScope.has(s.SpaceID));
  return wf.Stages.map((st) => {
    const q = parseWhere(st.WhereSpace, 'Space');
    return {
      name: st.Name,
      spaces: candidates.filter((s) => matches(q, s)).sort(bySlug),
      prerequisites: st.Prerequisites ?? [],
      release: st.ReleasePrerequisites ?? [],
      def: st,
    };
  });
}

/** How a ChangeOrder's Spaces were asked for: where/component/filter as queries, Spaces named one by one, and the organization's Spaces to choose among. */
export interface ScopeAsked {
  /** WhereSpace and the Component, as one where. */
  where: string;
  /** The Component asked for, resolved. */
  componentId?: string;
  filter?: Filter;
  queries: Query[];
  listed?: string[];
  spaces: Space[];
}

/** Reads a scope selection (--where-space-field, --component, --space-filter, --in-scope-space): checked, resolved to IDs, with the Spaces it chooses among. */
export async function askedScope(
  deps: ChangeDeps,
  caller: Caller,
  base: Space,
  body: { WhereSpace?: string; ComponentID?: string; SpaceFilterID?: string; InScopeSpaceIDs?: string[] },
): Promise<ScopeAsked> {
  const componentId = body.ComponentID ? (await findComponent(deps, caller, body.ComponentID)).ComponentID : undefined;
  const where = [body.WhereSpace, componentId ? `ComponentID = '${componentId}'` : undefined]
    .filter((x): x is string => !!x)
    .join(' AND ');
  const queries: Query[] = where ? [parseWhere(where, 'Space')] : [];
  let filter: Filter | undefined;
  if (body.SpaceFilterID) {
    filter = (await findInSpace<Filter>(deps, caller, base, 'Filter', body.SpaceFilterID)).item;
    if (filter.From !== 'Space') throw new Invalid(`filter '${body.SpaceFilterID}' selects ${filter.From}, not Space`);
    queries.push(parseWhere(filter.Where, 'Space'));
  }
  const spaces = await orgSpaces(deps, caller, queries);
  const listed = body.InScopeSpaceIDs?.length
    ? await Promise.all(body.InScopeSpaceIDs.map(async (ref) => (await findSpace(deps, caller, ref)).SpaceID))
    : undefined;
  return { where, componentId, filter, queries, listed, spaces };
}

/** The organization's Spaces as the ChangeOrder's Stages select among them (with `Component` when a Stage reads it). */
export function workflowSpaces(deps: ChangeDeps, caller: Caller, co: ChangeOrder): Promise<Space[]> {
  return orgSpaces(
    deps,
    caller,
    (co.ChangeWorkflow?.Stages ?? []).map((s) => parseWhere(s.WhereSpace, 'Space')),
  );
}

/** Whether evaluating these prerequisites reads attestations. */
export function readsAttestations(co: ChangeOrder, names: string[]): boolean {
  const declared = new Set((co.ChangeWorkflow?.AttestationPrerequisites ?? []).map((a) => a.Name));
  return names.some((n) => declared.has(n));
}

/**
 * Who attested the revisions the gates weigh in a Space (those naming each Unit with that content; with
 * `anyContent`, explaining, any content of those Units), and the organization's users and groups (who may).
 */
export async function attestationFacts(
  deps: ChangeDeps,
  caller: Caller,
  space: Space,
  units: { unitId: string; dataHash: string }[],
  o: { people?: () => Promise<People>; anyContent?: boolean } = {},
): Promise<AttestationFacts> {
  const named = units.filter((u) => u.dataHash).map((u) => ({ UnitID: u.unitId, DataHash: u.dataHash }));
  const [attestations, { users, groups }] = await Promise.all([
    deps.store.attestationsNaming(space.SpaceID, named, { anyContent: o.anyContent }),
    (o.people ?? peopleOnce(deps, caller))(),
  ]);
  return { now: deps.now(), space, attestations, users, groups };
}

/** The organization's users and groups (who may attest). */
export type People = Pick<AttestationFacts, 'users' | 'groups'>;

/** Reads the organization's users and groups once, when first asked, for every Space a gate evaluation reads attestations in. */
export function peopleOnce(deps: ChangeDeps, caller: Caller): () => Promise<People> {
  let read: Promise<People> | undefined;
  return () =>
    (read ??= Promise.all([
      deps.store.listUsers(caller.OrganizationID),
      deps.store.listGroups(caller.OrganizationID),
    ]).then(([users, groups]) => ({ users, groups })));
}

/** A Space's attestations, each marked with the record that revoked it, if any. */
export async function attestationsOf(deps: ChangeDeps, space: Space): Promise<AttestationView[]> {
  const all = await deps.store.listInSpace<Attestation>('Attestation', space.SpaceID);
  const revokedBy = new Map(
    all.filter((a) => a.RevokedAttestationID).map((a) => [a.RevokedAttestationID!, a.AttestationID]),
  );
  return all.map((a) => ({
    ...a,
    ...(revokedBy.has(a.AttestationID) ? { RevokedBy: revokedBy.get(a.AttestationID) } : {}),
  }));
}

/** The authors of a Unit's revisions in (start, upTo]: who wrote the change there (those revisions read, not the Unit's history). */
export async function authorsOf(deps: ChangeDeps, unitId: string, start: number, upTo: number): Promise<string[]> {
  return [...new Set((await deps.store.revisionsBetween(unitId, start, upTo)).map((r) => r.UserID))];
}

/**
 * What a caller already read for a ChangeOrder (the rollout view): its marks, its gate context, and
 * Spaces' gate states by `stateKey`, used instead of reading them again.
 */
export interface Known {
  marks: CoMarks;
  context: GateContext;
  states: Map<string, Promise<SpaceGateState>>;
}

/** Which gate state a Space's entry in `Known.states` is: a state depends only on whether it read attestations and the changed Units. */
export const stateKey = (spaceId: string, o: { attest?: unknown; changed?: boolean }) =>
  `${spaceId}|${o.attest ? 'a' : ''}|${o.changed === false ? '' : 'c'}`;

/** Whether these prerequisites read the Units the change changed (their revisions): Validated and attestation requirements do. */
export function readsChanged(co: ChangeOrder, names: string[]): boolean {
  return names.includes('Validated') || readsAttestations(co, names);
}

/**
 * What the gates read about one Space, read now (attestations too when `o.attest`, with the caller's
 * organization's people: `o.people`, shared by the Spaces of one evaluation, reads them once). With `changed: false` the changed Units are not read (no prerequisite asked
 * needs them: see `readsChanged`), which leaves its Releases, the newest pages of them. The attestations
 * read are those naming the changed Units with the content weighed; `otherContent` (an explanation) reads
 * those naming them with any content too, so it can say which attest other content. A state read either
 * way serves `Known.states`: what it decides is the same.
 */
export async function gateState(
  deps: ChangeDeps,
  co: ChangeOrder,
  marks: CoMarks,
  progress: Map<string, Progress>,
  space: Space,
  o: {
    attest?: Caller;
    changed?: boolean;
    people?: () => Promise<People>;
    otherContent?: boolean;
    units?: Promise<Unit[]>;
  } = {},
): Promise<SpaceGateState> {
  // A Release carries the change when it was published for it, or bundles every Unit the change covers in the Space at (or past) the revision its release Tag marks there.
  const covered = [...marks.publish.values()].filter((m) => m.SpaceID === space.SpaceID);
  const carries = (r: Release) =>
    r.ChangeOrderID === co.ChangeOrderID ||
    (covered.length > 0 &&
      covered.every((m) => (r.Units.find((u) => u.UnitID === m.UnitID)?.RevisionNum ?? 0) >= m.RevisionNum));
  // The gates read the newest published Release, the newest carrying the change, and (explaining) the newest few:
  // read newest first until those are found, the whole history only when none carries it.
  const published = newestPublished(deps, space, (read) => read.length >= GATE_RELEASES_SHOWN && read.some(carries));
  published.catch(() => undefined);
  const changedMarks =
    o.changed === false
      ? []
      : [...marks.end.values()].filter(
          (m) => m.SpaceID === space.SpaceID && marks.start.get(m.UnitID)?.RevisionNum !== m.RevisionNum,
        );
  // What a Release of the change bundles of each changed Unit: its revisions (hash and validation errors, not data) in one batch.
  const revisionOf = (m: Mark) => marks.publish.get(m.UnitID)?.RevisionNum ?? m.RevisionNum;
  const [listed, revisions] = changedMarks.length
    ? await Promise.all([
        o.units ?? deps.store.listUnits(space.SpaceID),
        deps.store.revisionsAt(changedMarks.map((m) => ({ UnitID: m.UnitID, RevisionNum: revisionOf(m) }))),
      ])
    : [[], []];
  const units = new Map(listed.map((u) => [u.UnitID, u]));
  const byKey = new Map(revisions.map((r) => [`${r.UnitID}#${r.RevisionNum}`, r]));
  const changed = await Promise.all(
    changedMarks.map(async (m) => {
      const rev = revisionOf(m);
      const r = byKey.get(`${m.UnitID}#${rev}`);
      const authors = o.attest ? await authorsOf(deps, m.UnitID, marks.start.get(m.UnitID)?.RevisionNum ?? 0, rev) : [];
      return {
        slug: units.get(m.UnitID)?.Slug ?? m.UnitID,
        revision: rev,
        validationErrors: r?.ValidationErrors ?? {},
        unitId: m.UnitID,
        end: m.RevisionNum,
        dataHash: r?.DataHash ?? '',
        authors,
      };
    }),
  );
  const attest = o.attest
    ? await attestationFacts(deps, o.attest, space, changed, { people: o.people, anyContent: o.otherContent })
    : undefined;
  return {
    space,
    taken: progress.has(space.SpaceID),
    published: await published,
    carries,
    changed,
    attest,
    now: deps.now(),
  };
}

/** What a ChangeOrder's gates read together, from one reading of its progress and the Spaces: its Stages, progress by Space, and the view CEL sees. */
export interface GateContext {
  spaces: Space[];
  stages: StageSpaces[];
  progress: Map<string, Progress>;
  view: GateChangeOrder;
}

/** Reads a ChangeOrder's progress and the organization's Spaces once, for its Stages, gates and CEL view. */
export async function gateContext(deps: ChangeDeps, caller: Caller, co: ChangeOrder): Promise<GateContext> {
  const [spaces, recorded] = await Promise.all([
    workflowSpaces(deps, caller, co),
    deps.store.progressOf(co.ChangeOrderID),
  ]);
  const progressList = await effectiveProgress(deps, co, recorded, new Map(spaces.map((s) => [s.SpaceID, s])));
  return {
    spaces,
    stages: stagesOver(co, spaces),
    progress: new Map(progressList.map((p) => [p.SpaceID, p])),
    view: gateView({ ...co, ...deriveProgress(co, progressList, new Map(spaces.map((s) => [s.SpaceID, s]))) }, spaces),
  };
}

/** A Space's gate state when only "has it taken the change" is asked: nothing else is read. */
export function takenOnly(space: Space, progress: Map<string, Progress>): SpaceGateState {
  return { space, taken: progress.has(space.SpaceID), published: [], carries: () => false, changed: [] };
}

/** The ChangeOrder as the gates see it: CEL reads it as the API returns it, derived fields included. */
export function gateView(co: ChangeOrderView, spaces: Space[]): GateChangeOrder {
  const base = spaces.find((s) => s.SpaceID === co.SpaceID)?.Slug ?? co.SpaceID;
  return {
    json: co as unknown as Record<string, unknown>,
    slug: co.Slug,
    ref: `${base}/${co.Slug}`,
    workflow: co.ChangeWorkflow ?? { Stages: [] },
  };
}

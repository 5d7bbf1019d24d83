import { createHash } from 'node:crypto';
import type { BundledUnit, Caller, Release, ReleaseLiveStatus, Space, Tag, Unit } from '../model/entities.ts';
import { Invalid, NotFound, Unprocessable } from '../model/errors.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import type { Deps } from './deps.ts';
import { expectVersion } from './route.ts';
import type { StoreOp } from './ports.ts';
import { withSpace } from './resolve.ts';
import { dataAt, revisionNum } from './units.ts';

/** A Release writes 5 items plus 2 per Unit in one transaction (at most 100). */
export const MAX_RELEASE_UNITS = 47;

/** Units a Release bundles: every Unit but ConfigHub/YAML ones, which describe rather than deploy. */
export function releasable(units: Unit[]): Unit[] {
  return units.filter((u) => u.ToolchainType !== 'ConfigHub/YAML').sort((a, b) => (a.Slug < b.Slug ? -1 : a.Slug > b.Slug ? 1 : 0));
}

/** The bundle text: each unit's data in slug order, as one multi-document YAML; its sha256 is the Digest. */
export async function bundle(deps: Deps, units: { unit: Unit; rev: number }[]): Promise<string> {
  const parts = await Promise.all(units.map(({ unit, rev }) => dataAt(deps, unit, rev)));
  return parts
    .map((p) => (p.endsWith('\n') ? p : `${p}\n`))
    .map((p) => (p.startsWith('---') ? p : `---\n${p}`))
    .join('');
}

export function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The Releases of a Space, newest first. */
export async function releasesOf(deps: Deps, space: Space): Promise<Release[]> {
  const all = await deps.store.listInSpace<Release>('Release', space.SpaceID);
  return all.map((r) => withSpace(r, space)).sort((a, b) => b.ReleaseNum - a.ReleaseNum || (a.PublishedAt < b.PublishedAt ? 1 : -1));
}

/** What a publish would bundle, or did. */
export interface PublishResult {
  DryRun: boolean;
  Release?: Release;
  Message?: string;
  Units: BundledUnit[];
  Digest: string;
  UnitCount: number;
}

/**
 * Publishes one Release of a Space to its release Target: every releasable Unit at the revision the
 * selector names. Validation errors in what would be bundled block it; nothing changed since the
 * latest published Release makes none.
 */
export async function publish(deps: Deps, caller: Caller, space: Space, opts: { revision?: string | number; dryRun?: boolean; description?: string; changeOrderId?: string; tagSlug?: (n: number) => string }): Promise<PublishResult> {
  if (!space.ReleaseTargetID) throw new Unprocessable(`space '${space.Slug}' has no release target; set one with cub space update ${space.Slug} --release-target <space>/<target>`);
  const units = releasable(await deps.store.listUnits(space.SpaceID));
  if (!units.length) throw new Unprocessable(`space '${space.Slug}' has no units to release`);
  if (units.length > MAX_RELEASE_UNITS) throw new Unprocessable(`space '${space.Slug}' has ${units.length} units; a release holds at most ${MAX_RELEASE_UNITS}`);
  const chosen: { unit: Unit; rev: number }[] = [];
  for (const unit of units) chosen.push({ unit, rev: await revisionNum(deps, caller, space, unit, opts.revision ?? 'HeadRevisionNum') });
  const revs = await Promise.all(chosen.map(({ unit, rev }) => deps.store.getRevision(unit.UnitID, rev)));
  const invalid = chosen.map((c, i) => ({ ...c, errors: revs[i]?.ValidationErrors ?? {} })).filter((c) => Object.keys(c.errors).length);
  if (invalid.length) {
    throw new Unprocessable(
      `unable to publish a release of space '${space.Slug}': ${invalid.map((c) => `unit '${c.unit.Slug}' revision ${c.rev} has validation errors (${Object.values(c.errors).join('; ')})`).join('; ')}`,
    );
  }
  const text = await bundle(deps, chosen);
  const bundled: BundledUnit[] = chosen.map(({ unit, rev }, i) => ({ UnitID: unit.UnitID, Slug: unit.Slug, RevisionNum: rev, DataHash: revs[i]!.DataHash }));
  const result: PublishResult = { DryRun: !!opts.dryRun, Units: bundled, Digest: digest(text), UnitCount: bundled.length };
  const latest = (await releasesOf(deps, space)).find((r) => r.Published && r.TargetID === space.ReleaseTargetID);
  const same = (r: Release) => r.Units.length === bundled.length && r.Units.every((u, i) => u.UnitID === bundled[i]!.UnitID && u.RevisionNum === bundled[i]!.RevisionNum);
  if (latest && same(latest) && latest.ChangeOrderID === opts.changeOrderId) {
    return { ...result, Release: latest, Message: `nothing changed since release ${latest.ReleaseNum} of space '${space.Slug}'; no new release` };
  }
  if (opts.dryRun) return result;
  const counterName = `RELEASENUM#${space.ReleaseTargetID}`;
  const counter = await deps.store.counter(counterName);
  const num = counter.Value + 1;
  const now = deps.now().toISOString();
  const tag: Tag = {
    OrganizationID: caller.OrganizationID,
    SpaceID: space.SpaceID,
    TagID: deps.newId(),
    Slug: opts.tagSlug?.(num) ?? `release-${num}`,
    Labels: {},
    Annotations: {},
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  const release: Release = {
    OrganizationID: caller.OrganizationID,
    SpaceID: space.SpaceID,
    ReleaseID: deps.newId(),
    Slug: `release-${num}`,
    Labels: {},
    Annotations: {},
    ReleaseNum: num,
    TargetID: space.ReleaseTargetID,
    TagID: tag.TagID,
    ChangeOrderID: opts.changeOrderId,
    Published: true,
    Digest: result.Digest,
    UnitCount: bundled.length,
    Units: bundled,
    UserID: caller.UserID,
    Description: opts.description,
    LiveStatus: {},
    PublishedAt: now,
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
  tag.ReleaseID = release.ReleaseID;
  const ops: StoreOp[] = [
    counter.Version === 0
      ? { op: 'create', kind: 'Counter', item: { Name: counterName, Value: num, Version: 1 } }
      : { op: 'update', kind: 'Counter', item: { Name: counterName, Value: num, Version: counter.Version + 1 }, expectedVersion: counter.Version },
    { op: 'create', kind: 'Release', item: release },
    { op: 'create', kind: 'Tag', item: tag },
  ];
  for (const { unit, rev } of chosen) {
    ops.push({ op: 'create', kind: 'Mark', item: { TagID: tag.TagID, UnitID: unit.UnitID, SpaceID: space.SpaceID, RevisionNum: rev, UpdatedAt: now } });
    const next: Unit = { ...unit, LastReleasedRevisionNum: rev, Version: unit.Version + 1, UpdatedAt: now };
    delete next.SpaceSlug;
    ops.push({ op: 'update', kind: 'Unit', item: next, expectedVersion: unit.Version });
  }
  await deps.store.transact(ops);
  await deps.bus.put([
    {
      source: SOURCE,
      detailType: DetailType.ReleasePublished,
      detail: { OrganizationID: caller.OrganizationID, SpaceID: space.SpaceID, SpaceSlug: space.Slug, ReleaseID: release.ReleaseID, ReleaseNum: num, TargetID: release.TargetID, Digest: release.Digest, UnitCount: release.UnitCount, ChangeOrderID: release.ChangeOrderID },
    },
  ]);
  return { ...result, Release: withSpace(release, space) };
}

/** A Release of a Space by ID or by ReleaseNum. */
export async function findRelease(deps: Deps, space: Space, ref: string): Promise<Release> {
  if (/^\d+$/.test(ref)) {
    const r = (await releasesOf(deps, space)).find((x) => x.ReleaseNum === Number(ref));
    if (!r) throw new NotFound(`space '${space.Slug}' has no release ${ref}`);
    return r;
  }
  const r = await deps.store.getInSpace<Release>('Release', space.SpaceID, ref.toLowerCase());
  if (!r) throw new NotFound(`release '${ref}' not found in space '${space.Slug}'`);
  return withSpace(r, space);
}

/** Merge-patches a Release's LiveStatus (and labels), guarded by its Version; emits the change. Returns the Release as written. */
export async function writeLiveStatus(deps: Deps, space: Space, release: Release, patch: { LiveStatus?: ReleaseLiveStatus; Labels?: Record<string, string>; Annotations?: Record<string, string> }, expectedVersion = release.Version): Promise<Release> {
  expectVersion(`release ${release.ReleaseNum}`, release.Version, expectedVersion);
  const previous = release.LiveStatus ?? {};
  const live = patch.LiveStatus ? { ...previous, ...patch.LiveStatus } : previous;
  const next: Release = { ...release, LiveStatus: live, Labels: patch.Labels ?? release.Labels, Annotations: patch.Annotations ?? release.Annotations, UpdatedAt: deps.now().toISOString(), Version: release.Version + 1 };
  delete next.SpaceSlug;
  await deps.store.transact([{ op: 'update', kind: 'Release', item: next, expectedVersion: release.Version }]);
  if (JSON.stringify(previous) !== JSON.stringify(live)) {
    await deps.bus.put([
      {
        source: SOURCE,
        detailType: DetailType.ReleaseLiveStatusChanged,
        detail: { OrganizationID: release.OrganizationID, SpaceID: space.SpaceID, SpaceSlug: space.Slug, ReleaseID: release.ReleaseID, ReleaseNum: release.ReleaseNum, LiveStatus: live, Previous: previous },
      },
    ]);
  }
  return withSpace(next, space);
}

/** Withdraws a Release: it stays readable, but is no longer published. */
export async function withdraw(deps: Deps, space: Space, release: Release): Promise<Release> {
  if (!release.Published) throw new Invalid(`release ${release.ReleaseNum} is already withdrawn`);
  const next: Release = { ...release, Published: false, WithdrawnAt: deps.now().toISOString(), UpdatedAt: deps.now().toISOString(), Version: release.Version + 1 };
  delete next.SpaceSlug;
  await deps.store.transact([{ op: 'update', kind: 'Release', item: next, expectedVersion: release.Version }]);
  return withSpace(next, space);
}


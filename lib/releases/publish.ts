import type { BundledUnit, Caller, Release, Space, Tag, Unit } from '../model/entities.ts';
import { Unprocessable } from '../model/errors.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import type { StoreOp } from '../ports/store.ts';
import { TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import { noRevision } from '../variants/revisions.ts';
import { revisionNums } from '../variants/revision-refs.ts';
import { decompress } from '../config/hash.ts';
import { bundleOf, digest, newestRelease, releasable } from './bundle.ts';
import type { ReleaseDeps } from './ports.ts';

/**
 * A Release writes 7 items (its counter, itself and its place in the Space's order, its Tag and the Tag's slug, its event;
 * made at a ChangeOrder, its place among that ChangeOrder's Releases) plus 2 per Unit (its mark and its Unit's
 * LastReleasedRevisionNum) in one transaction.
 */
export const MAX_RELEASE_UNITS = Math.floor((TRANSACTION_MAX_ITEMS - 7) / 2);

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
export async function publish(
  deps: ReleaseDeps,
  caller: Caller,
  space: Space,
  opts: {
    revision?: string | number;
    dryRun?: boolean;
    description?: string;
    changeOrderId?: string;
    tagSlug?: (n: number) => string;
  },
): Promise<PublishResult> {
  if (!space.ReleaseTargetID)
    throw new Unprocessable(
      `space '${space.Slug}' has no release target; set one with cub space update ${space.Slug} --release-target <space>/<target>`,
    );
  const units = releasable(await deps.store.listUnits(space.SpaceID));
  if (!units.length) throw new Unprocessable(`space '${space.Slug}' has no units to release`);
  if (units.length > MAX_RELEASE_UNITS)
    throw new Unprocessable(
      `space '${space.Slug}' has ${units.length} units; a release holds at most ${MAX_RELEASE_UNITS}`,
    );
  // The revision named, for every Unit at once: what it names is found once, the Units' marks read in one batch.
  const nums = await revisionNums(deps, caller, space, units, opts.revision ?? 'HeadRevisionNum');
  const chosen = units.map((unit, i) => ({ unit, rev: nums[i]! }));
  // Each revision read once, all in one batch: their validation errors, hashes and data (the bundle).
  const stored = new Map(
    (await deps.store.getRevisions(chosen.map(({ unit, rev }) => ({ UnitID: unit.UnitID, RevisionNum: rev })))).map(
      (r) => [`${r.UnitID}#${r.RevisionNum}`, r],
    ),
  );
  const revs = chosen.map(({ unit, rev }) => {
    const r = stored.get(`${unit.UnitID}#${rev}`);
    if (!r) throw noRevision(unit, rev);
    return r;
  });
  const invalid = chosen
    .map((c, i) => ({ ...c, errors: revs[i]?.ValidationErrors ?? {} }))
    .filter((c) => Object.keys(c.errors).length);
  if (invalid.length) {
    throw new Unprocessable(
      `unable to publish a release of space '${space.Slug}': ${invalid.map((c) => `unit '${c.unit.Slug}' revision ${c.rev} has validation errors (${Object.values(c.errors).join('; ')})`).join('; ')}`,
    );
  }
  const text = bundleOf(revs.map((r) => decompress(r.Data)));
  const bundled: BundledUnit[] = chosen.map(({ unit, rev }, i) => ({
    UnitID: unit.UnitID,
    Slug: unit.Slug,
    RevisionNum: rev,
    DataHash: revs[i]!.DataHash,
  }));
  const result: PublishResult = {
    DryRun: !!opts.dryRun,
    Units: bundled,
    Digest: digest(text),
    UnitCount: bundled.length,
  };
  // The newest published to this Target: usually the newest, so not the Space's whole history of Releases.
  const latest = await newestRelease(deps, space, (r) => r.Published && r.TargetID === space.ReleaseTargetID);
  const same = (r: Release) =>
    r.Units.length === bundled.length &&
    r.Units.every((u, i) => u.UnitID === bundled[i]!.UnitID && u.RevisionNum === bundled[i]!.RevisionNum);
  if (latest && same(latest) && latest.ChangeOrderID === opts.changeOrderId) {
    return {
      ...result,
      Release: latest,
      Message: `nothing changed since release ${latest.ReleaseNum} of space '${space.Slug}'; no new release`,
    };
  }
  if (opts.dryRun) return result;
  const counter = await deps.store.releaseCounter(space.ReleaseTargetID);
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
      ? { op: 'create', kind: 'ReleaseCounter', item: { TargetID: counter.TargetID, Value: num, Version: 1 } }
      : {
          op: 'update',
          kind: 'ReleaseCounter',
          item: { TargetID: counter.TargetID, Value: num, Version: counter.Version + 1 },
          expectedVersion: counter.Version,
        },
    { op: 'create', kind: 'Release', item: release },
    { op: 'create', kind: 'Tag', item: tag },
  ];
  for (const { unit, rev } of chosen) {
    ops.push({
      op: 'create',
      kind: 'Mark',
      item: { TagID: tag.TagID, UnitID: unit.UnitID, SpaceID: space.SpaceID, RevisionNum: rev, UpdatedAt: now },
    });
    const next: Unit = { ...unit, LastReleasedRevisionNum: rev, Version: unit.Version + 1, UpdatedAt: now };
    ops.push({ op: 'update', kind: 'Unit', item: next, expectedVersion: unit.Version });
  }
  ops.push(
    ...eventOps(deps, [
      {
        source: SOURCE,
        detailType: DetailType.ReleasePublished,
        detail: {
          OrganizationID: caller.OrganizationID,
          SpaceID: space.SpaceID,
          SpaceSlug: space.Slug,
          ReleaseID: release.ReleaseID,
          ReleaseNum: num,
          TargetID: release.TargetID,
          Digest: release.Digest,
          UnitCount: release.UnitCount,
          ChangeOrderID: release.ChangeOrderID,
        },
      },
    ]),
  );
  await deps.store.transact(ops);
  return { ...result, Release: release };
}

import { createHash } from 'node:crypto';
import { DESCRIBING_TOOLCHAIN, type Release, type Space, type Tag, type Unit } from '../model/entities.ts';
import { NotFound } from '../model/errors.ts';
import type { UnitDeps } from '../variants/ports.ts';
import { bySlug } from '../variants/lookup.ts';
import { dataAt } from '../variants/revisions.ts';
import type { ReleaseDeps } from './ports.ts';

/** Units a Release bundles: every Unit but ConfigHub/YAML ones, which describe rather than deploy. */
export function releasable(units: Unit[]): Unit[] {
  return units.filter((u) => u.ToolchainType !== DESCRIBING_TOOLCHAIN).sort(bySlug);
}

/** The bundle text: each unit's data in slug order, as one multi-document YAML; its sha256 is the Digest. */
export async function bundle(deps: UnitDeps, units: { unit: Unit; rev: number }[]): Promise<string> {
  return bundleOf(await Promise.all(units.map(({ unit, rev }) => dataAt(deps, unit, rev))));
}

/** Units' data as one bundle, in the order given: each a document of its own. */
export function bundleOf(parts: string[]): string {
  return parts
    .map((p) => (p.endsWith('\n') ? p : `${p}\n`))
    .map((p) => (p.startsWith('---') ? p : `---\n${p}`))
    .join('');
}

/** The sha256 of a bundle, hex. */
export function digest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Newest first: by number, then (two Targets' Releases of one number) by when each was published. */
const newestFirst = (a: Release, b: Release) => b.ReleaseNum - a.ReleaseNum || (a.PublishedAt < b.PublishedAt ? 1 : -1);

/** The Releases of a Space, newest first. */
export async function releasesOf(deps: UnitDeps, space: Space): Promise<Release[]> {
  const all = await deps.store.listInSpace<Release>('Release', space.SpaceID);
  return all.sort(newestFirst);
}

/** A Space's Releases newest first, a page at a time (10, then 100) with DynamoDB's cursor, until none are left. */
async function* releasePages(deps: ReleaseDeps, space: Space): AsyncGenerator<Release[]> {
  let after: string | undefined;
  for (let size = 10; ; size = 100) {
    const page = await deps.store.releasePage(space.SpaceID, size, after);
    yield page.items.map((x) => x.release);
    if (!page.next) return;
    after = page.next;
  }
}

/**
 * A Space's published Releases, newest first, read a page at a time until `enough` says those read
 * suffice or none are left: what a gate reads (the newest few, and the newest carrying the change),
 * without the Space's whole history when what it wants is recent. In the order `releasesOf` gives, as
 * far as they go.
 */
export async function newestPublished(
  deps: ReleaseDeps,
  space: Space,
  enough: (newestFirst: Release[]) => boolean,
): Promise<Release[]> {
  const read: Release[] = [];
  for await (const page of releasePages(deps, space)) {
    read.push(...page.filter((r) => r.Published));
    read.sort(newestFirst);
    if (enough(read)) break;
  }
  return read;
}

/**
 * The newest Release of a Space that `wanted` accepts, read newest first a page at a time: usually the
 * first page, the Space's whole history only when none is wanted.
 */
export async function newestRelease(
  deps: ReleaseDeps,
  space: Space,
  wanted: (r: Release) => boolean,
): Promise<Release | undefined> {
  for await (const page of releasePages(deps, space)) {
    const hit = page.find(wanted);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * A Space's Release by its number: through the `release-N` Tag its publish made (the Tag's slug claim,
 * the Tag, the Release: three reads however many Releases the Space has), or — that Tag deleted or
 * renamed — by reading the Space's Releases.
 */
export async function releaseByNum(deps: UnitDeps, space: Space, num: number): Promise<Release | undefined> {
  const tagId = await deps.store.idInSpace(space.SpaceID, 'Tag', `release-${num}`);
  const tag = tagId ? await deps.store.getInSpace<Tag>('Tag', space.SpaceID, tagId) : undefined;
  const r = tag?.ReleaseID ? await deps.store.getInSpace<Release>('Release', space.SpaceID, tag.ReleaseID) : undefined;
  if (r?.ReleaseNum === num) return r;
  return (await releasesOf(deps, space)).find((x) => x.ReleaseNum === num);
}

/** A Release of a Space by ID or by ReleaseNum. */
export async function findRelease(deps: ReleaseDeps, space: Space, ref: string): Promise<Release> {
  // `latest`: the Space's newest published Release, what a deploy tool (or `cub release report`) reports on.
  if (ref === 'latest') {
    const r = await newestRelease(deps, space, (x) => x.Published);
    if (!r) throw new NotFound(`space '${space.Slug}' has no published release to report on`);
    return r;
  }
  if (/^\d+$/.test(ref)) {
    const r = await releaseByNum(deps, space, Number(ref));
    if (!r) throw new NotFound(`space '${space.Slug}' has no release ${ref}`);
    return r;
  }
  const r = await deps.store.getInSpace<Release>('Release', space.SpaceID, ref.toLowerCase());
  if (!r) throw new NotFound(`release '${ref}' not found in space '${space.Slug}'`);
  return r;
}

/** The bundle text of a published Release, read again from the revisions it names. */
export async function releaseData(deps: UnitDeps, space: Space, release: Release): Promise<string> {
  const units = await Promise.all(
    release.Units.map(async (u) => {
      const unit = await deps.store.getUnit(space.SpaceID, u.UnitID);
      if (!unit)
        throw new NotFound(
          `unit '${u.Slug}' of release ${release.ReleaseNum} has been deleted, and its revisions with it`,
        );
      return { unit, rev: u.RevisionNum };
    }),
  );
  return bundle(deps, units);
}

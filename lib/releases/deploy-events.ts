import { allows, type Release, type ReleaseLiveStatus, type Space } from '../model/entities.ts';
import type { Caller } from '../model/people.ts';
import { BatonError, Conflict, Forbidden, Invalid, NotFound, Unprocessable } from '../model/errors.ts';
import { DetailType, HookDetail, type BatonEvent } from '../events/contracts.ts';
import { mapArgoCd, mapFlux, type LiveStatusReport } from '../events/mapping.ts';
import { retryOnConflict } from '../util/retry.ts';
import { newestRelease, releaseByNum } from './bundle.ts';
import { observedAtProblem, writeLiveStatus } from './live-status.ts';
import type { ReleaseDeps } from './ports.ts';

/** What a consumer did with one event. */
export type Outcome = { applied: true; ReleaseID: string } | { applied: false; reason: string };

/** Drops an event that retrying cannot help: malformed, or about nothing Baton knows. Whoever consumed it records the outcome. */
export function drop(reason: string, _event: BatonEvent): Outcome {
  return { applied: false, reason };
}

/** The deploy tools Baton takes reports from, by the hook each posts to. */
export type DeployTool = 'argocd' | 'flux';

/** What a deploy tool's report did: the Release it applied to and its LiveStatus; Changed false when it said nothing new (a repeat, or older than what the Release has). */
export interface ReportApplied {
  Applied: true;
  Changed: boolean;
  SpaceID: string;
  SpaceSlug: string;
  ReleaseID: string;
  ReleaseNum: number;
  LiveStatus: ReleaseLiveStatus;
  Reason?: string;
}

const same = (a: ReleaseLiveStatus | undefined, b: ReleaseLiveStatus) =>
  (['Sync', 'Health', 'Operation', 'Message', 'DataSource', 'Reporter'] as const).every(
    (k) => (a?.[k] ?? '') === (b[k] ?? ''),
  );

/**
 * Applies an Argo CD or Flux report, as the tool sent it, to the LiveStatus of the Release it is about
 * (by Space, and Release number or the digest its revision names), or throws why it cannot: not the
 * tool's body (400), the sender may not report there (403), no such Space or Release (404), a body
 * naming no Release (422). Nothing is written then. A report older than the Release's, or one saying
 * what it already says (the tool's retry of a send), changes nothing; a report only ever touches its
 * own Release, so news of an older Release never overwrites a newer one's status.
 */
export async function applyDeployToolReport(
  deps: ReleaseDeps,
  tool: DeployTool,
  payload: unknown,
  receivedAt: string,
  organizationId: string,
  caller?: Caller,
): Promise<ReportApplied> {
  const mapped = tool === 'argocd' ? mapArgoCd(payload, receivedAt) : mapFlux(payload, receivedAt);
  if ('error' in mapped) throw new Invalid(mapped.error);
  if (mapped.releaseNum === undefined && !mapped.digest)
    throw new Unprocessable(
      `the ${tool === 'argocd' ? 'Argo CD application' : 'Flux event'} (${mapped.status.DataSource}) names no Release: its revision${mapped.revision ? ` '${mapped.revision}'` : ''} carries no sha256 digest of a Release's bundle; set the baton.io/release annotation (Argo CD) or metadata (Flux) to its number`,
    );
  const problem = observedAtProblem(mapped.status.ObservedAt, deps.now());
  if (problem) throw new Invalid(problem);
  const { spaces, object } = await spacesOf(deps, organizationId, mapped);
  const mine = caller ? spaces.filter((s) => allows(caller, s, 'ReportStatus')) : spaces;
  if (!mine.length) throw new Forbidden(`the sender may not report status in space '${spaces[0]!.Slug}'`);
  return retryOnConflict(
    async (): Promise<ReportApplied> => {
      // A Target several Spaces release to: the Release is the one among theirs the report names (numbers count per Target, so one has it).
      let space = mine[0]!;
      let release: Release | undefined;
      for (const s of mine) {
        release = await matchRelease(deps, s, mapped);
        if (release) {
          space = s;
          break;
        }
      }
      const where =
        spaces.length > 1
          ? `the spaces ${object} deploys (${spaces.map((x) => `'${x.Slug}'`).join(', ')})`
          : `space '${space.Slug}'`;
      if (!release)
        throw new NotFound(
          mapped.releaseNum !== undefined
            ? `${where} ${spaces.length > 1 ? 'have' : 'has'} no release ${mapped.releaseNum}`
            : `${where} ${spaces.length > 1 ? 'have' : 'has'} no release with digest sha256:${mapped.digest} (revision '${mapped.revision}'): Baton never published that bundle there`,
        );
      const base = {
        Applied: true as const,
        SpaceID: space.SpaceID,
        SpaceSlug: space.Slug,
        ReleaseID: release.ReleaseID,
        ReleaseNum: release.ReleaseNum,
      };
      const have = release.LiveStatus?.ObservedAt;
      if (have && mapped.status.ObservedAt && Date.parse(mapped.status.ObservedAt) < Date.parse(have))
        return {
          ...base,
          Changed: false,
          LiveStatus: release.LiveStatus!,
          Reason: `the report (observed ${mapped.status.ObservedAt}) is older than release ${release.ReleaseNum}'s (${have})`,
        };
      if (same(release.LiveStatus, mapped.status))
        return {
          ...base,
          Changed: false,
          LiveStatus: release.LiveStatus!,
          Reason: `release ${release.ReleaseNum} already has this status`,
        };
      deps.telemetry?.count('LiveStatusEvents', 1, { Tool: tool === 'argocd' ? 'ArgoCD' : 'Flux' });
      const written = await writeLiveStatus(deps, space, release, { LiveStatus: mapped.status });
      return { ...base, Changed: true, LiveStatus: written.LiveStatus! };
    },
    () => {
      throw new Conflict(`the release ${object} reports on kept changing under the write; send the report again`);
    },
  );
}

/**
 * The live-status consumer, for Argo CD and Flux reports that arrive on the bus rather than through the
 * hooks: the same rules as the hooks, as the sender recorded in the event. What cannot be applied is
 * returned dropped, with why, and counted (DroppedEvents): the caller records it (on AWS, in the
 * dead-letter queue), never only a log line.
 */
export async function consumeDeployToolEvent(deps: ReleaseDeps, event: BatonEvent): Promise<Outcome> {
  const detail = HookDetail.safeParse(event.detail);
  const tool: DeployTool | undefined =
    event.detailType === DetailType.ArgoCd ? 'argocd' : event.detailType === DetailType.Flux ? 'flux' : undefined;
  const dropped = (reason: string) => {
    deps.telemetry?.count('DroppedEvents', 1, { DetailType: event.detailType });
    return drop(reason, event);
  };
  if (!detail.success) return dropped('event detail is not a hook envelope');
  if (!tool) return dropped(`no mapping for ${event.detailType}`);
  try {
    const r = await applyDeployToolReport(
      deps,
      tool,
      detail.data.Payload,
      detail.data.ReceivedAt,
      detail.data.OrganizationID,
      detail.data.Caller,
    );
    return { applied: true, ReleaseID: r.ReleaseID };
  } catch (e) {
    if (e instanceof BatonError) return dropped(e.message);
    throw e;
  }
}

/**
 * The Spaces a report applies to: the one it names itself (baton.io/space), else those releasing to the
 * Target that names its object (cub target update --argocd-application / --flux-object), else the Space
 * of the object's name. None is a 404 saying how to map the object.
 */
async function spacesOf(
  deps: ReleaseDeps,
  organizationId: string,
  r: LiveStatusReport,
): Promise<{ spaces: Space[]; object: string }> {
  const object = r.objects[0] ?? r.status.DataSource ?? '';
  const bySlug = async (slug: string) => {
    const id = await deps.store.spaceIdBySlug(organizationId, slug);
    return id ? deps.store.getSpace(organizationId, id) : undefined;
  };
  if (r.namedSpace) {
    const space = await bySlug(r.namedSpace);
    if (!space) throw new NotFound(`no space '${r.namedSpace}' (named by the baton.io/space of ${object})`);
    return { spaces: [space], object };
  }
  for (const o of r.objects) {
    const [target, ...more] = await deps.store.targetsDeploying(organizationId, o);
    if (!target) continue;
    if (more.length)
      throw new Conflict(
        `${o} is named by more than one target (${[target, ...more].map((t) => `'${t.Slug}'`).join(', ')}); keep it on one`,
      );
    const spaces = (await deps.store.spacesReleasingTo(target.TargetID))
      .filter((s) => s.OrganizationID === organizationId)
      .sort((a, b) => (a.Slug < b.Slug ? -1 : 1));
    if (!spaces.length)
      throw new NotFound(
        `${o} deploys target '${target.Slug}', but no space releases to it (cub space update <space> --release-target ${(await deps.store.getSpace(organizationId, target.SpaceID))?.Slug ?? target.SpaceID}/${target.Slug})`,
      );
    return { spaces, object: o };
  }
  const space = await bySlug(r.objectName);
  if (!space)
    throw new NotFound(
      `no target deploys ${object} and no space is named '${r.objectName}': map it with cub target update <target> ${object.startsWith('flux:') ? `--flux-object ${object.slice(5)}` : `--argocd-application ${object.slice(7)}`} (or the baton.io/space annotation)`,
    );
  return { spaces: [space], object };
}

async function matchRelease(deps: ReleaseDeps, space: Space, r: LiveStatusReport): Promise<Release | undefined> {
  // By number: three reads, not the Space's history of Releases.
  if (r.releaseNum !== undefined) return releaseByNum(deps, space, r.releaseNum);
  // Several releases can share a digest (a re-release of the same content): the newest carries it now.
  return newestRelease(deps, space, (x) => x.Digest === r.digest);
}

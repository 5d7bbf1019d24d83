import { allows, type Release, type Space } from '../model/entities.ts';
import { DetailType, HookDetail, type BatonEvent } from '../events/contracts.ts';
import { mapArgoCd, mapFlux, type LiveStatusReport } from '../events/mapping.ts';
import type { Deps } from '../ports/deps.ts';
import { retryOnConflict } from '../util/retry.ts';
import { newestRelease, releaseByNum } from './bundle.ts';
import { observedAtProblem, writeLiveStatus } from './live-status.ts';

/** What a consumer did with one event. */
export type Outcome = { applied: true; ReleaseID: string } | { applied: false; reason: string };

/** Drops an event that retrying cannot help: malformed, or about nothing Baton knows. */
export function drop(reason: string, _event: BatonEvent): Outcome {
  // Malformed and unmatched events are dropped, not thrown: retrying them cannot help. Whoever consumed it logs the outcome.
  return { applied: false, reason };
}

/**
 * The live-status consumer: maps an Argo CD or Flux event to the LiveStatus of the Release it is about
 * (by Space slug and Release number or digest). A report older than what the Release already has is
 * dropped, and a report only ever touches its own Release, so news of an older Release never
 * overwrites a newer one's status.
 */
export async function consumeDeployToolEvent(deps: Deps, event: BatonEvent): Promise<Outcome> {
  const detail = HookDetail.safeParse(event.detail);
  if (!detail.success) return drop('event detail is not a hook envelope', event);
  const { OrganizationID, ReceivedAt, Payload } = detail.data;
  const mapped = event.detailType === DetailType.ArgoCd ? mapArgoCd(Payload, ReceivedAt) : event.detailType === DetailType.Flux ? mapFlux(Payload, ReceivedAt) : { error: `no mapping for ${event.detailType}` };
  if ('error' in mapped) return drop(mapped.error, event);
  deps.telemetry?.count('LiveStatusEvents', 1, { Tool: event.detailType === DetailType.ArgoCd ? 'ArgoCD' : 'Flux' });
  const spaceId = await deps.store.spaceIdBySlug(OrganizationID, mapped.spaceSlug);
  const space = spaceId ? await deps.store.getSpace(OrganizationID, spaceId) : undefined;
  if (!space) return drop(`no space '${mapped.spaceSlug}'`, event);
  if (detail.data.Caller && !allows(detail.data.Caller, space, 'ReportStatus')) return drop(`the sender may not report status in space '${space.Slug}'`, event);
  return retryOnConflict(
    async (): Promise<Outcome> => {
      const release = await matchRelease(deps, space, mapped);
      if (!release) return drop(`space '${space.Slug}' has no release ${mapped.releaseNum ?? mapped.digest ?? '(none named: set the baton.io/release annotation or metadata)'}`, event);
      const problem = observedAtProblem(mapped.status.ObservedAt, deps.now());
      if (problem) return drop(problem, event);
      const have = release.LiveStatus?.ObservedAt;
      if (have && mapped.status.ObservedAt && Date.parse(mapped.status.ObservedAt) < Date.parse(have)) return drop(`report from ${mapped.status.ObservedAt} is older than release ${release.ReleaseNum}'s (${have})`, event);
      await writeLiveStatus(deps, space, release, { LiveStatus: mapped.status });
      return { applied: true, ReleaseID: release.ReleaseID };
    },
    () => drop('release kept changing under the write', event),
  );
}

async function matchRelease(deps: Deps, space: Space, r: LiveStatusReport): Promise<Release | undefined> {
  if (r.releaseNum === undefined && !r.digest) return undefined;
  // By number: three reads, not the Space's history of Releases.
  if (r.releaseNum !== undefined) return releaseByNum(deps, space, r.releaseNum);
  // Several releases can share a digest (a re-release of the same content): the newest carries it now.
  return newestRelease(deps, space, (x) => x.Digest === r.digest);
}

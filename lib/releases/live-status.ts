import { LIVE_STATUS_HISTORY, type Release, type ReleaseLiveStatus, type Space } from '../model/entities.ts';
import { expectVersion, Invalid } from '../model/errors.ts';
import { DetailType, SOURCE } from '../events/contracts.ts';
import { eventOps } from '../events/outbox.ts';
import type { UnitDeps } from '../variants/ports.ts';

/** How far ahead of this server's clock a report's ObservedAt may be (the reporters' clock skew). */
export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Why a report's ObservedAt cannot be taken (not a time, or in the future), if it cannot. A report from the future would pin the Release: every genuine one after it would read as older. */
export function observedAtProblem(observedAt: string | undefined, now: Date): string | undefined {
  if (observedAt === undefined) return undefined;
  const t = Date.parse(observedAt);
  if (Number.isNaN(t)) return `ObservedAt '${observedAt.slice(0, 64)}' is not a time`;
  if (t > now.getTime() + MAX_CLOCK_SKEW_MS)
    return `ObservedAt ${observedAt} is more than ${MAX_CLOCK_SKEW_MS / 60000} minutes ahead of this server's clock (${now.toISOString()})`;
  return undefined;
}

/** Merge-patches a Release's LiveStatus (and labels), guarded by its Version; emits the change. Returns the Release as written. */
export async function writeLiveStatus(
  deps: UnitDeps,
  space: Space,
  release: Release,
  patch: { LiveStatus?: ReleaseLiveStatus; Labels?: Record<string, string>; Annotations?: Record<string, string> },
  expectedVersion = release.Version,
): Promise<Release> {
  expectVersion(`release ${release.ReleaseNum}`, release.Version, expectedVersion);
  const problem = observedAtProblem(patch.LiveStatus?.ObservedAt, deps.now());
  if (problem) throw new Invalid(problem);
  const previous = release.LiveStatus ?? {};
  const live = patch.LiveStatus ? { ...previous, ...patch.LiveStatus } : previous;
  // A transition of Sync, Health or Operation is kept with its ObservedAt (Soak reads how long it has been Healthy).
  const moved = live.Sync !== previous.Sync || live.Health !== previous.Health || live.Operation !== previous.Operation;
  const history =
    moved && (live.Sync || live.Health)
      ? [
          ...(release.LiveStatusHistory ?? []),
          {
            Sync: live.Sync,
            Health: live.Health,
            ...(live.Operation ? { Operation: live.Operation } : {}),
            ObservedAt: patch.LiveStatus?.ObservedAt ?? deps.now().toISOString(),
            ...(live.Reporter ? { Reporter: live.Reporter } : {}),
          },
        ].slice(-LIVE_STATUS_HISTORY)
      : release.LiveStatusHistory;
  const next: Release = {
    ...release,
    LiveStatus: live,
    ...(history ? { LiveStatusHistory: history } : {}),
    Labels: patch.Labels ?? release.Labels,
    Annotations: patch.Annotations ?? release.Annotations,
    UpdatedAt: deps.now().toISOString(),
    Version: release.Version + 1,
  };
  const changed = JSON.stringify(previous) !== JSON.stringify(live);
  const events = changed
    ? eventOps(deps, [
        {
          source: SOURCE,
          detailType: DetailType.ReleaseLiveStatusChanged,
          detail: {
            OrganizationID: release.OrganizationID,
            SpaceID: space.SpaceID,
            SpaceSlug: space.Slug,
            ReleaseID: release.ReleaseID,
            ReleaseNum: release.ReleaseNum,
            LiveStatus: live,
            Previous: previous,
          },
        },
      ])
    : [];
  await deps.store.transact([
    { op: 'update', kind: 'Release', item: next, expectedVersion: release.Version },
    ...events,
  ]);
  return next;
}

/** Withdraws a Release: it stays readable, but is no longer published. */
export async function withdraw(deps: UnitDeps, release: Release): Promise<Release> {
  if (!release.Published) throw new Invalid(`release ${release.ReleaseNum} is already withdrawn`);
  const next: Release = {
    ...release,
    Published: false,
    WithdrawnAt: deps.now().toISOString(),
    UpdatedAt: deps.now().toISOString(),
    Version: release.Version + 1,
  };
  await deps.store.transact([{ op: 'update', kind: 'Release', item: next, expectedVersion: release.Version }]);
  return next;
}

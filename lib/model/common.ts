/** What every stored entity shares, and the helpers that make and patch it. */

export type StringMap = Record<string, string>;

/** Fields every entity carries. */
export interface Common {
  OrganizationID: string;
  Slug: string;
  DisplayName?: string;
  Labels: StringMap;
  Annotations: StringMap;
  CreatedAt: string;
  UpdatedAt: string;
  Version: number;
}

export interface InSpace extends Common {
  SpaceID: string;
}

/** An entity as read: with the slug of its Space, which is looked up, not stored, so a rename never leaves it stale. */
export type WithSpaceSlug<T> = T & { SpaceSlug: string };

/** The fields every new entity starts with: its organization, slug, display name, labels, times and Version 1. */
export function newEntity(
  clock: { now(): Date },
  orgId: string,
  f: { Slug: string; DisplayName?: string; Labels?: StringMap; Annotations?: StringMap },
): Common {
  const now = clock.now().toISOString();
  return {
    OrganizationID: orgId,
    Slug: f.Slug,
    DisplayName: f.DisplayName ?? f.Slug,
    Labels: f.Labels ?? {},
    Annotations: f.Annotations ?? {},
    CreatedAt: now,
    UpdatedAt: now,
    Version: 1,
  };
}

/** Applies a JSON merge-patch to a string map: null removes a key. */
export function patchMap(have: StringMap, patch: Record<string, string | null> | undefined): StringMap {
  if (!patch) return have;
  const out = { ...have };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** What a person may change on any entity: its names, and its labels and annotations merge-patched (null removes a key). */
export interface CommonPatch {
  Version?: number;
  Slug?: string;
  DisplayName?: string;
  Labels?: Record<string, string | null>;
  Annotations?: Record<string, string | null>;
}

/** An entity with its common fields patched and its time and Version moved on (the caller checks the Version sent). */
export function patched<T extends Common>(item: T, body: CommonPatch, clock: { now(): Date }): T {
  return {
    ...item,
    Slug: body.Slug ?? item.Slug,
    DisplayName: body.DisplayName ?? item.DisplayName,
    Labels: patchMap(item.Labels, body.Labels),
    Annotations: patchMap(item.Annotations, body.Annotations),
    UpdatedAt: clock.now().toISOString(),
    Version: item.Version + 1,
  };
}

/**
 * Holds: a person's say-so that what they cover waits. While a hold is in force (not lifted, not past
 * its expiry) no promotion into what it covers proceeds — or, blocking `publish`, no Release is
 * published there — unless forced with a reason, which the ChangeOrder records with the hold. A change
 * freeze is a hold with an expiry.
 */
export const HOLD_BLOCKS = ['promote', 'publish'] as const;
export type HoldBlock = (typeof HOLD_BLOCKS)[number];

/** What a hold covers: one Space, the ChangeOrders of one workflow, the whole organization, or one ChangeOrder (a recall's). */
export const HOLD_SCOPES = ['Space', 'Workflow', 'Organization', 'ChangeOrder'] as const;
export type HoldScope = (typeof HOLD_SCOPES)[number];

export interface Hold {
  HoldID: string;
  OrganizationID: string;
  Slug: string;
  Reason: string;
  /** Who placed it: they (or an Admin) may lift it. */
  OwnerID: string;
  Scope: HoldScope;
  /** The Space a `Space` hold covers, or the Space of the workflow a `Workflow` hold covers. */
  SpaceID?: string;
  ChangeWorkflowID?: string;
  /** The ChangeOrder a `ChangeOrder` hold freezes (placed by a recall; SpaceID is its base). */
  ChangeOrderID?: string;
  Blocks: HoldBlock[];
  ExpiresAt?: string;
  LiftedAt?: string;
  LiftedBy?: string;
  LiftNote?: string;
  CreatedAt: string;
  UpdatedAt: string;
  Version: number;
}

/** A hold as the API shows it: whether it is in force now, and whose it is by name. */
export interface HoldView extends Hold {
  InForce: boolean;
  OwnerSlug?: string;
  SpaceSlug?: string;
  ChangeWorkflowSlug?: string;
  ChangeOrderSlug?: string;
}

/** Whether a hold is in force at `now`: not lifted, and not past its expiry. */
export function inForce(h: Hold, now: Date): boolean {
  return !h.LiftedAt && (!h.ExpiresAt || Date.parse(h.ExpiresAt) > now.getTime());
}

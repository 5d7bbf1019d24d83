/**
 * Deploy windows: when a promotion may go into what a window covers. An `Allow` window opens on a schedule
 * (a five-field cron in a time zone, open for a duration from each firing) or once (a start and an end);
 * a `Deny` window (a freeze) is the same shape, closing instead. Where any window applies, the rules are
 * Argo CD's sync windows': a Deny window in force blocks, and where Allow windows apply, at least one of
 * them must be open. Taking a change back out (demote, abort) is blocked only by a window whose `Blocks`
 * names it. Breaking glass is `--force --force-reason`, and where the window asks for it, that many
 * override approvals by other people first (`cub changeorder approve-override`).
 */
import type { ChangeOrder } from './change-orders.ts';
export const WINDOW_KINDS = ['Allow', 'Deny'] as const;
export type WindowKind = (typeof WINDOW_KINDS)[number];

/** What a window governs: promotions always; taking a change back out only when it says so. */
export const WINDOW_BLOCKS = ['promote', 'demote', 'abort'] as const;
export type WindowBlock = (typeof WINDOW_BLOCKS)[number];

/** What a window covers: one Space, the Spaces a where expression selects, or one Stage of a workflow's ChangeOrders. */
export const WINDOW_SCOPES = ['Space', 'WhereSpace', 'Stage'] as const;
export type WindowScope = (typeof WINDOW_SCOPES)[number];

export interface DeployWindow {
  WindowID: string;
  OrganizationID: string;
  Slug: string;
  Kind: WindowKind;
  Reason: string;
  /** Who made it: they (or an Admin) may delete it. */
  OwnerID: string;
  Scope: WindowScope;
  /** The Space a `Space` window covers, or the Space of the workflow a `Stage` window covers. */
  SpaceID?: string;
  WhereSpace?: string;
  ChangeWorkflowID?: string;
  Stage?: string;
  /** A recurring window: opens at each firing of Cron, read in TimeZone, for Duration (2h, 30m, 3d). */
  Cron?: string;
  Duration?: string;
  TimeZone?: string;
  /** A one-off window: from Start to End (ISO times). */
  Start?: string;
  End?: string;
  Blocks: WindowBlock[];
  /** How many people besides the one forcing must approve an override before `--force` passes it (0: --force alone). */
  OverrideApprovals: number;
  CreatedAt: string;
  UpdatedAt: string;
  Version: number;
}

/** A window as the API shows it: open or not now, and when that changes; whose it is and what it covers, by name. */
export interface WindowView extends DeployWindow {
  /** For an Allow window: inside an opening now. For a Deny window: the freeze is in force now. */
  Active: boolean;
  /** When Active changes next (null: never again). */
  ChangesAt: string | null;
  OwnerSlug?: string;
  SpaceSlug?: string;
  ChangeWorkflowSlug?: string;
}

/** An approval that a ChangeOrder may be forced through a window, recorded on the ChangeOrder. */
export interface OverrideApproval {
  WindowID: string;
  WindowSlug: string;
  UserID: string;
  UserSlug?: string;
  Reason: string;
  ApprovedAt: string;
}

const approvalKey = (a: OverrideApproval) => `${a.WindowID}#${a.UserID}#${a.ApprovedAt}`;

/** A ChangeOrder's override approvals of a window not yet spent: each lets one forced promotion through, the one that counted it (two alike are two). */
export function unspentApprovals(
  co: Pick<ChangeOrder, 'OverrideApprovals' | 'PromotionOverrides'>,
  windowId: string,
): OverrideApproval[] {
  const spent = new Map<string, number>();
  for (const a of (co.PromotionOverrides ?? []).flatMap((o) => o.Approvals ?? []))
    spent.set(approvalKey(a), (spent.get(approvalKey(a)) ?? 0) + 1);
  return (co.OverrideApprovals ?? []).filter((a) => {
    const left = spent.get(approvalKey(a)) ?? 0;
    if (left) spent.set(approvalKey(a), left - 1);
    return a.WindowID === windowId && !left;
  });
}

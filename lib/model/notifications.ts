/**
 * Notifications out: a webhook an operator points at Slack (its incoming-webhook `text` field is in every
 * body), a chat bridge or their own service, told when a ChangeOrder advances a Stage, has been blocked from
 * its next Stage for longer than the notification's BlockedFor, is recalled or completes. Signed `X-Baton-Signature: sha256=<hmac of the body>` when it has a secret; retried with backoff;
 * every delivery, failed or not, is kept to list.
 */
export const NOTIFY_ON = ['StageAdvanced', 'Blocked', 'Recalled', 'Completed'] as const;
/** How long a ChangeOrder waits on a gate before a Blocked notification without BlockedFor is told; the least and most a BlockedFor may be. */
export const DEFAULT_BLOCKED_FOR = '1h';
export const BLOCKED_FOR_BOUNDS = { least: '5m', most: '30d' } as const;
/** How often the schedule on AWS runs the Blocked sweep (lib/changes/blocked.ts): a notice comes at most this late. */
export const SWEEP_MINUTES = 5;
export type NotifyOn = (typeof NOTIFY_ON)[number];

export interface Notification {
  NotificationID: string;
  OrganizationID: string;
  Slug: string;
  URL: string;
  /** The HMAC key; never answered (SecretSet says whether there is one). */
  Secret?: string;
  On: NotifyOn[];
  /** With Blocked: how long a ChangeOrder's next Stage stays shut before it is told (e.g. 2h; DEFAULT_BLOCKED_FOR when not given). */
  BlockedFor?: string;
  OwnerID: string;
  CreatedAt: string;
  UpdatedAt: string;
  Version: number;
}

/** A notification as the API shows it: its secret left out. */
export type NotificationView = Omit<Notification, 'Secret'> & { SecretSet: boolean; OwnerSlug?: string };

/** One event sent to a notification's URL: what, when, how it went. */
export interface NotificationDelivery {
  NotificationID: string;
  DeliveryID: string;
  OrganizationID: string;
  EventID: string;
  On: NotifyOn;
  ChangeOrderSlug?: string;
  /** Blocked: the Stage it waits to go into, and since when it could have. */
  Stage?: string;
  BlockedSince?: string;
  Text: string;
  At: string;
  Status: 'Delivered' | 'Failed';
  Attempts: number;
  /** The last answer's HTTP status, if there was one. */
  HTTPStatus?: number;
  Error?: string;
}

export const notificationView = (n: Notification, owner?: string): NotificationView => {
  const { Secret, ...rest } = n;
  return { ...rest, SecretSet: !!Secret, ...(owner ? { OwnerSlug: owner } : {}) };
};

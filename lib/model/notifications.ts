/**
 * Notifications out: a webhook an operator points at Slack (its incoming-webhook `text` field is in every
 * body), a chat bridge or their own service, told when a ChangeOrder advances a Stage, is recalled or
 * completes. Signed `X-Baton-Signature: sha256=<hmac of the body>` when it has a secret; retried with backoff;
 * every delivery, failed or not, is kept to list.
 */
export const NOTIFY_ON = ['StageAdvanced', 'Recalled', 'Completed'] as const;
export type NotifyOn = (typeof NOTIFY_ON)[number];

export interface Notification {
  NotificationID: string;
  OrganizationID: string;
  Slug: string;
  URL: string;
  /** The HMAC key; never answered (SecretSet says whether there is one). */
  Secret?: string;
  On: NotifyOn[];
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

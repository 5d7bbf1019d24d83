import {
  createNotification,
  deleteNotification,
  deliveries,
  findNotification,
  listNotifications,
} from '../../changes/notifications.ts';
import { notificationView } from '../../model/entities.ts';
import { route } from '../route.ts';
import { NoBody, NoQuery } from '../schemas.ts';
import { CreateNotification, DeliveriesQuery } from '../change-schemas.ts';

/** Notifications: webhooks told of ChangeOrders advancing, recalled, completing. An Admin's: their URLs are often secrets (Slack's are). */
export const notificationRoutes = [
  route({
    method: 'POST',
    path: '/notification',
    name: 'CreateNotification',
    query: NoQuery,
    body: CreateNotification,
    access: 'Admin',
    async handle({ deps, caller, body }) {
      return { status: 201, body: await createNotification(deps, caller, body) };
    },
  }),
  route({
    method: 'GET',
    path: '/notification',
    name: 'ListNotifications',
    query: NoQuery,
    body: NoBody,
    access: 'Admin',
    async handle({ deps, caller }) {
      return { body: await listNotifications(deps, caller) };
    },
  }),
  route({
    method: 'GET',
    path: '/notification/{notification_id}',
    name: 'GetNotification',
    query: NoQuery,
    body: NoBody,
    access: 'Admin',
    async handle({ deps, caller, params }) {
      return { body: notificationView(await findNotification(deps, caller, params.notification_id!)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/notification/{notification_id}',
    name: 'DeleteNotification',
    query: NoQuery,
    body: NoBody,
    access: 'Admin',
    async handle({ deps, caller, params }) {
      return { body: await deleteNotification(deps, caller, params.notification_id!) };
    },
  }),
  route({
    method: 'GET',
    path: '/notification/{notification_id}/delivery',
    name: 'ListNotificationDeliveries',
    query: DeliveriesQuery,
    body: NoBody,
    access: 'Admin',
    async handle({ deps, caller, params, query }) {
      return { body: await deliveries(deps, caller, params.notification_id!, query.limit) };
    },
  }),
];

import { flag, flags, need, UsageError, type Args } from '../args.ts';
import { seg, type Client } from '../client.ts';
import type { NotificationDelivery, NotificationView } from '../../lib/model/notifications.ts';
import { print, say } from '../output.ts';
import { type Command, type HelpTable, out } from '../common.ts';

function printNotifications(a: Args, n: NotificationView | NotificationView[]): void {
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(n, format);
  print(n, 'table', [
    ['Slug', (x) => x.Slug],
    ['URL', (x) => x.URL],
    ['On', (x) => x.On.map((o) => (o === 'Blocked' ? `Blocked(${x.BlockedFor ?? ''})` : o)).join(',')],
    ['Signed', (x) => (x.SecretSet ? 'yes' : 'no')],
  ]);
}

export const notificationsCommands: Record<string, Record<string, Command>> = {
  notification: {
    create: async (a: Args, c: Client) => {
      const usage =
        'cub notification create <slug> --url URL [--secret S] --on StageAdvanced,Blocked,Recalled,Completed [--blocked-for 2h]';
      const slug = a.positional[0];
      if (!slug) throw new UsageError(`name the notification: ${usage}`);
      const on = flags(a, 'on')
        .flatMap((x) => x.split(','))
        .filter(Boolean);
      if (!on.length) throw new UsageError(`say which events it is told of (--on): ${usage}`);
      const body = {
        Slug: slug,
        URL: need(a, 'url', usage),
        Secret: flag(a, 'secret'),
        On: on,
        BlockedFor: flag(a, 'blocked-for'),
      };
      printNotifications(a, (await c.post<NotificationView>('/notification', body)).body);
    },
    list: async (a, c) => printNotifications(a, (await c.get<NotificationView[]>('/notification')).body),
    get: async (a, c) => {
      const ref = a.positional[0];
      if (!ref) throw new UsageError('name the notification: cub notification get <slug>');
      printNotifications(a, (await c.get<NotificationView>(`/notification/${seg(ref)}`)).body);
    },
    delete: async (a, c) => {
      const ref = a.positional[0];
      if (!ref) throw new UsageError('name the notification: cub notification delete <slug>');
      const n = (await c.delete<NotificationView>(`/notification/${seg(ref)}`)).body;
      say(out(a), `Deleted notification ${n.Slug}`, n, n.Slug);
    },
    deliveries: async (a, c) => {
      const ref = a.positional[0];
      if (!ref) throw new UsageError('name the notification: cub notification deliveries <slug> [--limit N]');
      const list = (
        await c.get<NotificationDelivery[]>(`/notification/${seg(ref)}/delivery`, { limit: flag(a, 'limit') })
      ).body;
      const format = out(a);
      if (format === 'json' || format === 'yaml') return print(list, format);
      print(list, 'table', [
        ['At', (d) => d.At],
        ['On', (d) => d.On],
        ['Change Order', (d) => d.ChangeOrderSlug ?? ''],
        ['Status', (d) => d.Status],
        ['Attempts', (d) => String(d.Attempts)],
        ['HTTP', (d) => (d.HTTPStatus === undefined ? '' : String(d.HTTPStatus))],
        ['Error', (d) => d.Error ?? ''],
      ]);
    },
  },
};

export const notificationsHelp: HelpTable = {
  notification: {
    create: {
      summary:
        'A webhook told when a change order advances a Stage, has been blocked from its next Stage longer than --blocked-for, is recalled or completes: a JSON POST with Slack’s text field, signed X-Baton-Signature: sha256=<hmac> with --secret, retried with backoff (an Admin)',
      args: [['<slug>', 'the name of the notification, unique in the organization']],
      flags: ['url', 'secret', 'on', 'blocked-for'],
      example:
        'cub notification create releases-channel --url http://127.0.0.1:9/hooks/releases --secret rotate-me-0123456789 --on StageAdvanced,Blocked,Recalled,Completed --blocked-for 2h',
    },
    list: { summary: 'The organization’s notifications (an Admin)', flags: [], example: 'cub notification list' },
    get: {
      summary: 'One notification: where it posts and what it is told of (its secret is never shown)',
      args: [['<notification>', 'the notification']],
      flags: [],
      example: 'cub notification get releases-channel',
    },
    deliveries: {
      summary:
        'What was sent to a notification, newest first: each event, delivered or failed, in how many attempts, and why',
      args: [['<notification>', 'the notification']],
      flags: ['limit'],
      example: 'cub notification deliveries releases-channel --limit 20',
    },
    delete: {
      summary: 'Delete a notification: it is told of nothing more',
      args: [['<notification>', 'the notification']],
      flags: [],
      example: 'cub notification delete releases-channel',
    },
  },
};

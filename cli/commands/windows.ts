import { bool, flag, flags, need, UsageError, type Args } from '../args.ts';
import { seg } from '../client.ts';
import {
  unspentApprovals,
  type ChangeOrderView,
  type DemotionRecord,
  type WindowView,
} from '../../lib/model/entities.ts';
import { print, say } from '../output.ts';
import { type Command, type HelpTable, locate, out } from '../common.ts';

/** What a window covers, as a person names it. */
export function windowCovers(w: WindowView): string {
  return w.Scope === 'Space'
    ? `space ${w.SpaceSlug ?? w.SpaceID}`
    : w.Scope === 'WhereSpace'
      ? `where ${w.WhereSpace}`
      : `stage ${w.Stage} of ${w.SpaceSlug ?? w.SpaceID}/${w.ChangeWorkflowSlug ?? w.ChangeWorkflowID}`;
}

/** A window's schedule, as a person reads it. */
export function windowSchedule(w: WindowView): string {
  return w.Cron ? `${w.Cron} for ${w.Duration} (${w.TimeZone ?? 'UTC'})` : `${w.Start} to ${w.End}`;
}

/** Whether a window stops a promotion now, in words: open/closed for an Allow window, in force or not for a freeze. */
export function windowNow(w: WindowView): string {
  const state = w.Kind === 'Deny' ? (w.Active ? 'in force' : 'not in force') : w.Active ? 'open' : 'closed';
  return `${state}${w.ChangesAt ? ` until ${w.ChangesAt}` : w.Active ? '' : ' for good'}`;
}

/** Windows as table rows, or JSON/YAML: one window (get, create, delete) as itself, a list as a list. */
function printWindows(a: Args, ws: WindowView | WindowView[]): void {
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(ws, format);
  print(ws, 'table', [
    ['Slug', (w) => w.Slug],
    ['Kind', (w) => w.Kind],
    ['Covers', windowCovers],
    ['Schedule', windowSchedule],
    ['Now', windowNow],
    ['Blocks', (w) => w.Blocks.join(',')],
    ['Overrides', (w) => (w.OverrideApprovals ? `${w.OverrideApprovals} approval(s)` : '--force')],
    ['Owner', (w) => w.OwnerSlug ?? w.OwnerID],
    ['Reason', (w) => w.Reason],
  ]);
}

const intFlag = (a: Args, name: string): number | undefined => {
  const v = flag(a, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} takes a whole number, not '${v}'`);
  return Number(v);
};

export const windowsCommands: Record<string, Record<string, Command>> = {
  window: {
    create: async (a, c) => {
      const usage =
        'cub window create <slug> --space S | --where-space W | --workflow S/wf --stage ST (--cron C --duration D [--time-zone Z] | --start T --end T) [--deny] --reason R [--blocks promote,demote,abort] [--override-approvals N] [--owner U]';
      const slug = a.positional[0];
      if (!slug) throw new UsageError(`name the window: ${usage}`);
      const body = {
        Slug: slug,
        Reason: need(a, 'reason', usage),
        Deny: bool(a, 'deny') || undefined,
        Space: flag(a, 'space'),
        WhereSpace: flag(a, 'where-space'),
        Workflow: flag(a, 'workflow'),
        Stage: flag(a, 'stage'),
        Cron: flag(a, 'cron'),
        Duration: flag(a, 'duration'),
        TimeZone: flag(a, 'time-zone'),
        Start: flag(a, 'start'),
        End: flag(a, 'end'),
        Blocks: flags(a, 'blocks').length ? flags(a, 'blocks').flatMap((x) => x.split(',')) : undefined,
        OverrideApprovals: intFlag(a, 'override-approvals'),
        Owner: flag(a, 'owner'),
      };
      printWindows(a, (await c.post<WindowView>('/window', body)).body);
    },
    list: async (a, c) => {
      printWindows(a, (await c.get<WindowView[]>('/window')).body);
    },
    get: async (a, c) => {
      const ref = a.positional[0];
      if (!ref) throw new UsageError('name the window: cub window get <slug>');
      printWindows(a, (await c.get<WindowView>(`/window/${seg(ref)}`)).body);
    },
    delete: async (a, c) => {
      const ref = a.positional[0];
      if (!ref) throw new UsageError('name the window: cub window delete <slug>');
      const w = (await c.delete<WindowView>(`/window/${seg(ref)}`)).body;
      say(out(a), `Deleted window ${w.Slug}`, w, w.Slug);
    },
  },
  changeorder: {
    demote: async (a, c) => {
      const usage = 'cub changeorder demote --space <space> <slug> --reason R';
      const { space, slug } = locate(a, a.positional[0], 'changeorder', usage);
      const r = await c.post<DemotionRecord>(`/space/${seg(space)}/change_order/${seg(slug)}/demote`, {
        Reason: need(a, 'reason', usage),
      });
      const d = r.body;
      const format = out(a);
      if (format === 'json' || format === 'yaml') return print(d, format);
      process.stdout.write(
        `Took change order ${slug} back out of ${d.Spaces.filter((s) => s.Restored).length} of ${d.Spaces.length} space(s), latest first:\n` +
          d.Spaces.map(
            (s) =>
              `  ${s.SpaceSlug}  ${s.Restored ? 'Restored' : `not restored: ${s.Error ?? 'see cub variant demote'}`}\n`,
          ).join(''),
      );
      if (r.status === 207) process.exitCode = 1;
    },
    'approve-override': async (a, c) => {
      const usage = 'cub changeorder approve-override --space <space> <slug> --window W --reason R';
      const { space, slug } = locate(a, a.positional[0], 'changeorder', usage);
      const window = need(a, 'window', usage);
      const co = (
        await c.post<ChangeOrderView>(`/space/${seg(space)}/change_order/${seg(slug)}/override_approval`, {
          Window: window,
          Reason: need(a, 'reason', usage),
        })
      ).body;
      // The one just made names the window's ID; those a forced promotion spent already do not count.
      const made = (co.OverrideApprovals ?? []).filter((x) => x.WindowSlug === window || x.WindowID === window).at(-1);
      const mine = made ? unspentApprovals(co, made.WindowID) : [];
      say(
        out(a),
        `Approved overriding window ${window} for change order ${co.Slug}: ${mine.length} unspent approval(s) now (${mine.map((x) => x.UserSlug ?? x.UserID).join(', ')})`,
        co,
        co.Slug,
      );
    },
  },
};

export const windowsHelp: HelpTable = {
  window: {
    create: {
      summary:
        'A deploy window: promotions into a Space, the Spaces a where selects, or one Stage of a workflow go only while it is open (--deny: a freeze, not while it is in force)',
      args: [['<slug>', 'the name of the window, unique in the organization']],
      flags: [
        ['space', 'the Space it covers'],
        ['where-space', 'the Spaces it covers, by where expression (an Admin only)'],
        ['workflow', 'with --stage: the ChangeOrders of this workflow, promoting into that Stage'],
        ['stage', 'the Stage of the workflow it covers'],
        'cron',
        'duration',
        'time-zone',
        'start',
        'end',
        'deny',
        ['reason', 'why the window is there (shown to whoever it stops)'],
        ['blocks', 'what it governs besides promote: demote, abort (default: promote only)'],
        'override-approvals',
        'owner',
      ],
      example:
        "cub window create prod-weekdays --workflow acme-workflows/acme-main-line --stage prod --cron '0 9 * * 1-4' --duration 6h --time-zone Europe/Berlin --reason 'prod changes while the on-call team is in' --override-approvals 1",
    },
    list: {
      summary:
        'The organization’s deploy windows by name: what each covers, its schedule, open or closed now and until when',
      flags: [],
      example: 'cub window list',
    },
    get: {
      summary: 'One deploy window: what it covers, its schedule, whether it is open now and when that changes',
      args: [['<window>', 'the window']],
      flags: [],
      example: 'cub window get prod-weekdays',
    },
    delete: {
      summary: 'Delete a deploy window (its owner or an Admin): what it covered no longer waits for it',
      args: [['<window>', 'the window']],
      flags: [],
      example: 'cub window delete prod-weekdays',
    },
  },
  changeorder: {
    demote: {
      summary:
        'Take a change order back out of every Space that took it: abort it (if it is not), then demote each, the latest Stage first, as cub variant demote would; each Space’s outcome is recorded',
      args: [['<slug>', 'the change order (or space/slug)']],
      flags: [
        ['space', 'the Space the change order lives in'],
        ['reason', 'why it is taken back out (recorded as the abort reason too)'],
      ],
      example: "cub changeorder demote --space acme-base release-v452 --reason 'v452 leaks memory'",
    },
    'approve-override': {
      summary:
        'Approve forcing a change order through a deploy window that asks for override approvals (Approve in its Space); a promotion with --force counts approvals by people other than the one forcing',
      args: [['<slug>', 'the change order (or space/slug)']],
      flags: [
        ['space', 'the Space the change order lives in'],
        'window',
        ['reason', 'why it cannot wait for the window'],
      ],
      example:
        "cub changeorder approve-override --space acme-base release-v452 --window prod-weekdays --reason 'sev1: the checkout fix cannot wait'",
    },
  },
};

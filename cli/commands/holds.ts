import { bool, flag, flags, need, UsageError, type Args } from '../args.ts';
import { seg } from '../client.ts';
import type { HoldView } from '../../lib/model/holds.ts';
import { print } from '../output.ts';
import { bar, type JobAnswer } from '../progress.ts';
import { type Command, type HelpTable, out } from '../common.ts';

/** Holds, and the jobs long promotions run as. */
/** Holds as table rows, or JSON/YAML: one hold (get, create, lift) as itself, a list as a list. */
function printHolds(a: Args, holds: HoldView | HoldView[]): void {
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(holds, format);
  print(holds, 'table', [
    ['Slug', (h) => h.Slug],
    ['InForce', (h) => String(h.InForce)],
    [
      'Covers',
      (h) =>
        h.Scope === 'Organization'
          ? 'organization'
          : h.Scope === 'Space'
            ? `space ${h.SpaceSlug ?? h.SpaceID}`
            : h.Scope === 'ChangeOrder'
              ? `change order ${h.SpaceSlug ?? h.SpaceID}/${h.ChangeOrderSlug ?? h.ChangeOrderID}`
              : `workflow ${h.SpaceSlug ?? h.SpaceID}/${h.ChangeWorkflowSlug ?? h.ChangeWorkflowID}`,
    ],
    ['Blocks', (h) => h.Blocks.join(',')],
    ['Owner', (h) => h.OwnerSlug ?? h.OwnerID],
    ['Expires', (h) => h.ExpiresAt ?? ''],
    ['Lifted', (h) => (h.LiftedAt ? `${h.LiftedAt}${h.LiftNote ? ` (${h.LiftNote})` : ''}` : '')],
    ['Reason', (h) => h.Reason],
  ]);
}

export const holdsCommands: Record<string, Record<string, Command>> = {
  hold: {
    create: async (a, c) => {
      const usage =
        'cub hold create <slug> --space S | --workflow S/wf | --organization --reason R [--expires-in 2h] [--blocks promote,publish]';
      const slug = a.positional[0];
      if (!slug) throw new UsageError(`name the hold: ${usage}`);
      const body = {
        Slug: slug,
        Reason: need(a, 'reason', usage),
        Space: flag(a, 'space'),
        Workflow: flag(a, 'workflow'),
        Organization: bool(a, 'organization') || undefined,
        ExpiresIn: flag(a, 'expires-in'),
        Blocks: flags(a, 'blocks').length ? flags(a, 'blocks').flatMap((x) => x.split(',')) : undefined,
      };
      printHolds(a, (await c.post<HoldView>('/hold', body)).body);
    },
    list: async (a, c) => {
      const r = await c.get<HoldView[]>('/hold', { limit: flag(a, 'limit'), continue: flag(a, 'continue') });
      printHolds(a, r.body);
      const next = r.headers.get('x-continue');
      if (next && (out(a) ?? 'table') === 'table') process.stderr.write(`more: --continue ${next}\n`);
    },
    get: async (a, c) => {
      const ref = a.positional[0];
      if (!ref) throw new UsageError('name the hold: cub hold get <slug>');
      printHolds(a, (await c.get<HoldView>(`/hold/${seg(ref)}`)).body);
    },
    lift: async (a, c) => {
      const ref = a.positional[0];
      if (!ref) throw new UsageError('name the hold: cub hold lift <slug> --note N');
      printHolds(a, (await c.post<HoldView>(`/hold/${seg(ref)}/lift`, { Note: flag(a, 'note') })).body);
    },
  },
  job: {
    get: async (a, c) => {
      const id = a.positional[0];
      if (!id) throw new UsageError('name the job: cub job get <job-id>');
      const job = (await c.get<JobAnswer>(`/job/${seg(id)}`)).body;
      const format = out(a);
      if (format === 'json' || format === 'yaml') return print(job, format);
      process.stdout.write(
        `Job ${job.JobID} (${job.Kind}): ${job.State}, ${job.Done}/${job.Total} space(s) ${bar(job.Done, job.Total)}${job.Status ? `; answered ${job.Status}` : ''}\n`,
      );
      print(job.Spaces ?? [], 'table', [
        ['Space', (s) => s.SpaceSlug],
        ['State', (s) => s.State],
        ['Action', (s) => s.Action ?? ''],
        ['Error', (s) => s.Error ?? ''],
      ]);
    },
  },
};

export const holdsHelp: HelpTable = {
  hold: {
    create: {
      summary:
        'Hold promotions (or publishes) into a Space, a workflow’s ChangeOrders or the whole organization until lifted or expired',
      args: [['<slug>', 'the name of the hold, unique in the organization']],
      flags: [['space', 'hold this Space'], 'workflow', 'organization', 'reason', 'expires-in', 'blocks'],
      example:
        "cub hold create year-end-freeze --workflow acme-workflows/acme-main-line --reason 'year-end change freeze' --expires-in 336h",
    },
    list: {
      summary: 'The organization’s holds by name, in force or not',
      flags: ['limit', 'continue'],
      example: 'cub hold list --limit 20',
    },
    get: {
      summary: 'One hold: what it covers, whose it is, why, until when',
      args: [['<hold>', 'the hold']],
      flags: [],
      example: 'cub hold get year-end-freeze',
    },
    lift: {
      summary: 'Lift a hold (its owner or an Admin), with a note',
      args: [['<hold>', 'the hold']],
      flags: ['note'],
      example: "cub hold lift year-end-freeze --note 'freeze over'",
    },
  },
  job: {
    get: {
      summary:
        'Where a job stands: each Space done or pending, and once done the answer its request would have given (-o json)',
      args: [['<job>', 'the job ID a 202 answer named']],
      flags: [],
      example: 'cub job get "$(cub variant approve --change-order acme-base/release-v452 --stage dev --detach -q)"',
    },
  },
};

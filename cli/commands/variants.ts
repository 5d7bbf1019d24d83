import { bool, flag, flags, need, pairs, UsageError } from '../args.ts';
import { seg } from '../client.ts';
import { isQuiet, print, say } from '../output.ts';
import type { LinkView } from '../../lib/model/entities.ts';
import type { ApproveAnswer, DemoteAnswer, SpacePromotion, UploadAnswer, VariantAnswer } from '../api.ts';
import { printApproval } from './attestations.ts';
import { withProgress } from '../progress.ts';
import { readdirSync } from 'node:fs';
import { inCwd } from '../io.ts';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  type Command,
  type HelpTable,
  COLUMNS,
  out,
  locate,
  readInput,
  namedLinks,
  printUnitResults,
  listHelp,
  refHelp,
} from '../common.ts';
import { promoteChangeOrder } from './promote.ts';

/** Links and variants (upload, create, promote). */
export const variantsCommands: Record<string, Record<string, Command>> = {
  link: {
    list: async (a, c) => {
      const r = await c.get<LinkView[]>(`/space/${seg(need(a, 'space', 'cub link list --space <space>'))}/link`, {
        where: flag(a, 'where'),
        filter: flag(a, 'filter'),
        limit: flag(a, 'limit'),
        continue: flag(a, 'continue'),
      });
      const table = (out(a) ?? 'table') === 'table';
      print(table ? await namedLinks(c, r.body) : r.body, out(a), COLUMNS.link);
      const next = r.headers.get('x-continue');
      if (next && table) process.stderr.write(`more: --continue ${next}\n`);
    },
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'link', 'cub link get --space <space> <link>');
      print((await c.get<LinkView>(`/space/${seg(space)}/link/${seg(slug)}`)).body, out(a) ?? 'yaml');
    },
    delete: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'link', 'cub link delete --space <space> <link>');
      await c.delete(`/space/${seg(space)}/link/${seg(slug)}`);
      say(out(a), `Deleted link ${slug}`, { Deleted: 'Link', Space: space, Slug: slug }, slug);
    },
    create: async (a, c) => {
      const usage =
        'cub link create --space <space> <slug|-> <from-unit> <to-unit> [<to-space>] [--update-type T] [--from-stdin]';
      const [slug, from, to, toSpace] = a.positional;
      if (!slug || !from || !to) throw new UsageError(usage);
      const space = need(a, 'space', usage);
      const extra = bool(a, 'from-stdin') ? (parse(readInput('-')) ?? {}) : {};
      const body = {
        ...extra,
        ...(slug !== '-' ? { Slug: slug } : {}),
        FromUnitID: from,
        ToUnitID: to,
        ...(toSpace ? { ToSpaceID: toSpace } : {}),
        UpdateType: flag(a, 'update-type') ?? extra.UpdateType ?? 'MergeUnits',
        ...(flag(a, 'auto-update') ? { AutoUpdate: flag(a, 'auto-update') === 'true' } : {}),
      };
      const made = (await c.post<LinkView>(`/space/${seg(space)}/link`, body)).body;
      print((out(a) ?? 'table') === 'table' ? (await namedLinks(c, [made]))[0]! : made, out(a), COLUMNS.link);
    },
  },
  variant: {
    upload: async (a, c) => {
      const usage = 'cub variant upload --component <component> --variant <variant> [--granularity per-file] <dir>';
      const dir = a.positional[0];
      if (!dir) throw new UsageError(usage);
      const granularity = flag(a, 'granularity') ?? 'per-file';
      if (granularity !== 'per-file')
        throw new UsageError(`--granularity ${granularity} is not supported; per-file makes one unit per YAML file`);
      let files: string[];
      try {
        files = readdirSync(inCwd(dir))
          .filter((f) => /\.ya?ml$/i.test(f))
          .sort();
      } catch (e) {
        throw new UsageError(`cannot read directory ${dir}: ${(e as Error).message}`);
      }
      if (!files.length) throw new UsageError(`${dir} has no .yaml or .yml files`);
      const units = files.map((f) => ({
        Slug: f
          .replace(/\.ya?ml$/i, '')
          .replace(/[^-_A-Za-z0-9]+/g, '-')
          .replace(/^[-_]+|[-_]+$/g, ''),
        Data: readInput(join(dir, f)),
      }));
      const body = {
        Component: need(a, 'component', usage),
        Variant: need(a, 'variant', usage),
        Units: units,
        Stage: flag(a, 'stage'),
        Environment: flag(a, 'environment'),
        Region: flag(a, 'region'),
        SpaceLabels: pairs(a, 'space-label'),
      };
      const r = await withProgress(`uploading ${units.length} unit(s)`, c.post<UploadAnswer>('/variant/upload', body));
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      if (isQuiet()) return void process.stdout.write(`${r.body.Space.Slug}\n`);
      process.stdout.write(
        `Created space ${r.body.Space.Slug} with ${r.body.Units.length} unit(s): ${r.body.Units.map((u) => u.Slug).join(', ')}\n`,
      );
    },
    create: async (a, c) => {
      const usage =
        'cub variant create <name> <upstream-space> [--target space/target] [--namespace N] [--stage S] [--environment E] [--region R] [--space-label k=v] [--unit-delete-gate g]';
      const [name, upstream] = a.positional;
      if (!name || !upstream) throw new UsageError(usage);
      const body = {
        Name: name,
        UpstreamSpaceID: upstream,
        Slug: flag(a, 'space-slug'),
        ReleaseTargetID: flag(a, 'target'),
        Namespace: flag(a, 'namespace'),
        Stage: flag(a, 'stage'),
        Environment: flag(a, 'environment'),
        Region: flag(a, 'region'),
        SpaceLabels: pairs(a, 'space-label'),
        UnitDeleteGates: flags(a, 'unit-delete-gate'),
      };
      const r = await withProgress(`creating variant ${name} of ${upstream}`, c.post<VariantAnswer>('/variant', body));
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      if (isQuiet()) return void process.stdout.write(`${r.body.Space.Slug}\n`);
      process.stdout.write(`Created space ${r.body.Space.Slug} from ${upstream}\n`);
      printUnitResults(r.body.Units, 'table');
    },
    approve: async (a, c) => {
      const body = {
        Spaces: a.positional,
        WhereSpace: flag(a, 'where-space'),
        ChangeOrderID: flag(a, 'change-order'),
        Stage: flag(a, 'stage'),
        All: bool(a, 'all') || undefined,
        Where: flag(a, 'where'),
        Revision: flag(a, 'revision'),
        Reject: bool(a, 'reject') || undefined,
        Note: flag(a, 'note'),
        Claims: pairs(a, 'claim'),
        ExpiresIn: flag(a, 'expires-in'),
        DryRun: bool(a, 'dry-run') || undefined,
        Async: bool(a, 'async') || bool(a, 'detach') || undefined,
      };
      if (!body.Spaces.length && body.WhereSpace === undefined && !body.ChangeOrderID)
        throw new UsageError(
          'name the Spaces to approve: cub variant approve <space>… | --where-space W | --change-order <space>/<change-order> [--stage S]',
        );
      const label = body.DryRun ? 'previewing' : body.Reject ? 'rejecting' : 'approving';
      printApproval(
        a,
        (
          await c.settle<ApproveAnswer>(await withProgress(label, c.post<unknown>('/attest', body)), label, {
            detach: bool(a, 'detach'),
          })
        ).body,
      );
    },
    demote: async (a, c) => {
      const usage = 'cub variant demote <space> --change-order <space>/<change-order> [--change-desc D] [--dry-run]';
      const space = a.positional[0];
      if (!space) throw new UsageError(`name the Space to demote: ${usage}`);
      const co = need(a, 'change-order', usage);
      const body = {
        Space: space,
        ChangeOrderID: co,
        ChangeDescription: flag(a, 'change-desc'),
        DryRun: bool(a, 'dry-run') || undefined,
        Async: bool(a, 'async') || bool(a, 'detach') || undefined,
      };
      const label = `${body.DryRun ? 'planning the demote of' : 'demoting'} ${space}`;
      const r = await c.settle<DemoteAnswer>(await withProgress(label, c.post<unknown>('/demote', body)), label, {
        detach: bool(a, 'detach'),
      });
      const format = out(a);
      if (format === 'json' || format === 'yaml') return print(r.body, format);
      const restoring = r.body.Units.filter((u) => u.Action === 'Restore' || u.Action === 'Mark').length;
      // Authors by name, as people know each other.
      const authors = r.body.Units.some((u) => u.Dropped?.length)
        ? new Map((await c.get<{ UserID: string; Slug: string }[]>('/user')).body.map((x) => [x.UserID, x.Slug]))
        : new Map<string, string>();
      process.stdout.write(
        r.body.DryRun
          ? `Would restore ${restoring} unit(s) of ${space} to what change order ${co} started from\n`
          : `${restoring ? `Restored ${restoring} unit(s) of ${space}` : `Nothing left to restore in ${space}`}${r.body.Restored ? `; change order ${co} is taken back out of it` : ''}\n`,
      );
      print(r.body.Units, 'table', [
        ['Unit', (u) => u.UnitSlug],
        ['Action', (u) => u.Action],
        ['Reason', (u) => u.Reason ?? ''],
        ['RestoredTo', (u) => u.RestoredRevisionNum ?? ''],
        ['Revision', (u) => u.RevisionNum ?? ''],
        [
          'Drops',
          (u) =>
            (u.Dropped ?? [])
              .map(
                (d) =>
                  `${d.RevisionNum} by ${authors.get(d.UserID) ?? d.UserID}${d.Description ? ` (${d.Description})` : ''}`,
              )
              .join('; '),
        ],
        ['Error', (u) => u.Error ?? ''],
      ]);
      if (r.status === 207) process.exitCode = 1;
    },
    promote: async (a, c) => {
      const space = a.positional[0];
      const co = flag(a, 'change-order');
      if (co) return promoteChangeOrder(a, c, co, space);
      if (!space)
        throw new UsageError(
          'cub variant promote <space> [--dry-run] [-o mutations] | --change-order <space>/<change-order> [--target-stage S] [<space>|--where-space W]',
        );
      const r = await withProgress(
        `promoting ${space}`,
        c.post<SpacePromotion>('/promote', {
          Space: space,
          DryRun: bool(a, 'dry-run') || undefined,
          Squash: bool(a, 'squash') || undefined,
        }),
      );
      printUnitResults(r.body.Units, out(a));
      if (r.status === 207) process.exitCode = 1;
    },
  },
};

const LABELS = ['stage', 'environment', 'region', 'space-label'];

export const variantsHelp: HelpTable = {
  link: {
    list: listHelp('Links', 'link', `--space acme-scratch --where "Slug LIKE 'worker-%'"`),
    get: refHelp('get', 'Link', 'link', '--space acme-scratch worker-config'),
    delete: refHelp('delete', 'Link', 'link', '--space acme-scratch worker-config'),
    create: {
      summary: 'Link a Unit to the Unit it takes changes from',
      args: [
        ['<link>', 'the new Link, or - to take its slug from standard input'],
        ['<from-unit>', 'the Unit that takes changes'],
        ['<to-unit>', 'the Unit it takes them from'],
        ['[to-space]', 'the Space of <to-unit>, if another'],
      ],
      flags: ['space', 'update-type', 'auto-update', 'from-stdin'],
      example: 'cub link create --space acme-scratch worker-config worker config acme-base',
    },
  },
  variant: {
    upload: {
      summary: 'Create a Component’s first Space from a folder of YAML files, one Unit per file',
      args: [['<dir>', 'the folder']],
      flags: ['component', 'variant', 'granularity', ...LABELS],
      example: 'cub variant upload --component shop --variant base ./k8s',
    },
    create: {
      summary: 'Create a variant: a new Space cloning every Unit of its upstream Space, linked to it',
      args: [
        ['<name>', 'the variant name'],
        ['<upstream-space>', 'the Space it clones'],
      ],
      flags: ['space-slug', 'target', 'namespace', ...LABELS, 'unit-delete-gate'],
      example: 'cub variant create prod-apse1 acme-base --stage Production --region asia-southeast1 --namespace acme',
    },
    approve: {
      summary:
        'Approve (or --reject) revisions in Spaces: what a ChangeOrder brought there, or each Unit’s head (Units with a Target; --all for every one)',
      args: [['[spaces...]', 'the Spaces to approve in']],
      flags: [
        'change-order',
        ['stage', 'with --change-order: every Space of this Stage'],
        'where-space',
        'all',
        ['where', 'only the Units this selects'],
        ['revision', 'approve this revision of each Unit: N, LastReleasedRevisionNum, Tag:, ChangeSet:, ChangeOrder:'],
        'note',
        'claim',
        'expires-in',
        'reject',
        'dry-run',
        'async',
        'detach',
      ],
      example: 'cub variant approve --change-order acme-base/release-v452 --stage staging',
    },
    demote: {
      summary:
        'Take an aborted ChangeOrder back out of one Space: each Unit it marked goes back to where the change started, as one new revision',
      args: [['<space>', 'the Space to demote']],
      flags: [
        'change-order',
        ['change-desc', 'the description of the restoring revisions'],
        ['dry-run', 'name, per Unit, the later revisions the restore would drop; write nothing'],
        'async',
        'detach',
      ],
      example: 'cub variant demote acme-prod-use1 --change-order acme-base/release-v452 --change-desc "back out v452"',
    },
    promote: {
      summary: 'Bring a Space’s Units up to their upstream, or carry a ChangeOrder into its next Stage',
      args: [['[space]', 'the Space to promote (with --change-order: only this Space of the Stage)']],
      flags: [
        'change-order',
        'target-stage',
        'where-space',
        'prior-revisions',
        'dry-run',
        'force',
        'force-reason',
        'squash',
        'tag',
        'protect',
        'clearance',
        'guard',
        'subgroup',
        'async',
        'detach',
        'explain',
      ],
      example: 'cub variant promote --change-order acme-base/release-v452 --target-stage staging',
    },
  },
};

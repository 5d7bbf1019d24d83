import { bool, flag, need, pairs, UsageError } from '../args.ts';
import { seg } from '../client.ts';
import { print, say } from '../output.ts';
import type { WithSpaceSlug } from '../../lib/model/common.ts';
import type { LinkView, Mutation, RevisionView, Unit } from '../../lib/model/entities.ts';
import type { Change, UnitResult } from '../api.ts';
import {
  type Command,
  type HelpTable,
  COLUMNS,
  out,
  list,
  locate,
  readInput,
  labelsPatch,
  printUnitResults,
} from '../common.ts';

type UnitView = WithSpaceSlug<Unit>;

/** Units, their revisions and mutations. */
export const unitsCommands: Record<string, Record<string, Command>> = {
  unit: {
    create: async (a, c) => {
      const usage = 'cub unit create --space <space> <slug> <file|->';
      const { space, slug } = locate(a, a.positional[0], 'unit', usage);
      const file = a.positional[1];
      if (!file) throw new UsageError(`give the unit's data as a file or - for standard input: ${usage}`);
      const body = {
        Slug: slug,
        Data: readInput(file),
        ToolchainType: flag(a, 'toolchain'),
        Labels: pairs(a, 'label'),
        Annotations: pairs(a, 'annotation'),
        LastChangeDescription: flag(a, 'change-desc'),
        ChangeSetID: flag(a, 'changeset'),
        TargetID: flag(a, 'target'),
      };
      print((await c.post<UnitView>(`/space/${seg(space)}/unit`, body)).body, out(a), COLUMNS.unit);
    },
    get: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'unit'),
        'unit',
        'cub unit get --space <space> <unit>',
      );
      print((await c.get<UnitView>(`/space/${seg(space)}/unit/${seg(slug)}`)).body, out(a) ?? 'yaml');
    },
    list: async (a, c) => {
      const space = need(a, 'space', 'cub unit list --space <space> [--where W]');
      const r = await c.get<UnitView[]>(`/space/${seg(space)}/unit`, {
        where: flag(a, 'where'),
        filter: flag(a, 'filter'),
        limit: flag(a, 'limit'),
        continue: flag(a, 'continue'),
      });
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      // Whether each unit is behind its upstream comes from its Links' Stale.
      const links = (await c.get<LinkView[]>(`/space/${seg(space)}/link`)).body;
      const stale = new Set(links.filter((l) => l.Stale).map((l) => l.FromUnitID));
      print(
        r.body.map((u) => ({ ...u, Behind: stale.has(u.UnitID) })),
        'table',
        [
          ...COLUMNS.unit!.slice(0, 4),
          ['Behind', (u) => (u.UpstreamUnitID ? (u.Behind ? 'yes' : 'no') : '')],
          ...COLUMNS.unit!.slice(4),
        ],
      );
    },
    data: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'unit'),
        'unit',
        'cub unit data --space <space> <unit> [--revision N]',
      );
      process.stdout.write(
        (await c.get(`/space/${seg(space)}/unit/${seg(slug)}/data`, { revision: flag(a, 'revision') })).text,
      );
    },
    update: async (a, c) => {
      const usage =
        'cub unit update --space <space> <unit> [<file|->] [--label k=v] [--change-desc D] [--changeset CS] | --upgrade | --merge-source X [--merge-base N] [--merge-end M] | --restore <rev> | --revert <range>';
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', usage);
      const path = `/space/${seg(space)}/unit/${seg(slug)}`;
      if (flag(a, 'resolve') !== undefined) {
        // --patch --resolve Link:* resolves the Unit's TransformPaths Links (at the upstream's head or --merge-end).
        const r = await c.post<{
          UnitSlug: string;
          Changed: boolean;
          RevisionNum: number;
          Links: { LinkSlug: string; UpstreamRevisionNum: number; Values: Record<string, string> }[];
        }>(`${path}/resolve`, {
          Resolve: flag(a, 'resolve'),
          MergeEndRevisionNum: flag(a, 'merge-end') === undefined ? undefined : Number(flag(a, 'merge-end')),
          ChangeDescription: flag(a, 'change-desc'),
          DryRun: bool(a, 'dry-run') || undefined,
        });
        if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
        process.stdout.write(
          `${r.body.Changed ? `${bool(a, 'dry-run') ? 'Would resolve' : 'Resolved'} ${r.body.UnitSlug} as revision ${r.body.RevisionNum}` : `${r.body.UnitSlug} already reflects its links (revision ${r.body.RevisionNum})`}\n`,
        );
        return print(r.body.Links, 'table', [
          ['Link', (l) => l.LinkSlug],
          ['Upstream', (l) => l.UpstreamRevisionNum],
          ['Values', (l) => l.Values],
        ]);
      }
      if (bool(a, 'upgrade') || flag(a, 'merge-source')) {
        const num = (n: string) => (flag(a, n) === undefined ? undefined : Number(flag(a, n)));
        const r = await c.post<UnitResult>(`${path}/upgrade`, {
          ChangeOrderID: flag(a, 'change-order'),
          PriorRevisions: flag(a, 'prior-revisions'),
          MergeSourceID: flag(a, 'merge-source'),
          MergeBaseRevisionNum: num('merge-base'),
          MergeEndRevisionNum: num('merge-end'),
          Squash: bool(a, 'squash') || undefined,
          DryRun: bool(a, 'dry-run') || undefined,
        });
        return printUnitResults([r.body], out(a));
      }
      if (flag(a, 'restore')) {
        const rev = flag(a, 'restore')!;
        const r = await c.post<UnitView>(`${path}/restore`, {
          Revision: /^\d+$/.test(rev) ? Number(rev) : rev,
          ChangeDescription: flag(a, 'change-desc'),
        });
        return print(r.body, out(a), COLUMNS.unit);
      }
      if (flag(a, 'revert')) {
        return print(
          (
            await c.post<UnitView>(`${path}/revert`, {
              Range: flag(a, 'revert'),
              ChangeDescription: flag(a, 'change-desc'),
            })
          ).body,
          out(a),
          COLUMNS.unit,
        );
      }
      const cur = (await c.get<UnitView>(path)).body;
      const file = a.positional[1];
      const body = {
        Version: cur.Version,
        ...labelsPatch(a),
        ...(file ? { Data: readInput(file) } : {}),
        ...(flag(a, 'change-desc') !== undefined ? { LastChangeDescription: flag(a, 'change-desc') } : {}),
        ...(flag(a, 'changeset') ? { ChangeSetID: flag(a, 'changeset') } : {}),
        ...(flag(a, 'target') !== undefined ? { TargetID: flag(a, 'target') || null } : {}),
        ...(flag(a, 'new-slug') ? { Slug: flag(a, 'new-slug') } : {}),
      };
      print((await c.patch<UnitView>(path, body)).body, out(a), COLUMNS.unit);
    },
    conflicts: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'unit'),
        'unit',
        'cub unit conflicts --space <space> <unit> [--apply [--dry-run] | --dismiss]',
      );
      const path = `/space/${seg(space)}/unit/${seg(slug)}`;
      if (bool(a, 'apply') || bool(a, 'dismiss')) {
        const r = await c.post<{ Changes: Change[]; RevisionNum?: number }>(`${path}/conflicts`, {
          Action: bool(a, 'apply') ? 'Apply' : 'Dismiss',
          DryRun: bool(a, 'dry-run') || undefined,
        });
        if (out(a) === 'mutations' || (bool(a, 'dry-run') && (out(a) ?? 'table') === 'table'))
          return print(r.body.Changes, 'table', COLUMNS.change);
        if (out(a) === 'json' || out(a) === 'yaml') return print(r.body, out(a));
        process.stdout.write(
          bool(a, 'apply')
            ? `Applied ${r.body.Changes.length} upstream value(s) to ${slug}${r.body.RevisionNum ? ` as revision ${r.body.RevisionNum}` : ''}\n`
            : `Dismissed the conflicts of ${slug}; its data and protection are unchanged\n`,
        );
        return;
      }
      const unit = (await c.get<UnitView>(path)).body;
      if ((out(a) ?? 'table') !== 'table') return print(unit.Conflicts, out(a));
      if (!unit.Conflicts.length) {
        process.stdout.write(`No conflicts in ${slug}\n`);
        return;
      }
      print(unit.Conflicts, 'table', [
        ['Resource', (r) => r.Resource],
        ['Path', (r) => r.Path],
        ['Upstream', (r) => JSON.stringify(r.UpstreamValue)],
        ['Downstream', (r) => JSON.stringify(r.DownstreamValue)],
        ['UpstreamRev', (r) => r.UpstreamRevisionNum],
      ]);
    },
    delete: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'unit'),
        'unit',
        'cub unit delete --space <space> <unit>',
      );
      await c.delete(`/space/${seg(space)}/unit/${seg(slug)}`, { force: bool(a, 'force') ? 'true' : undefined });
      say(out(a), `Deleted unit ${slug}`, { Deleted: 'Unit', Space: space, Slug: slug }, slug);
    },
    tag: async (a, c) => {
      const usage = 'cub unit tag <tag> --space <space> --unit <unit> --revision <N> [--move]';
      const tag = a.positional[0];
      if (!tag) throw new UsageError(usage);
      const { space, slug } = locate(a, flag(a, 'unit') ?? a.positional[1], 'unit', usage);
      const rev = flag(a, 'revision') ?? 'HeadRevisionNum';
      const r = await c.post<{ TagSlug: string; RevisionNum: number }>(`/space/${seg(space)}/unit/${seg(slug)}/tag`, {
        Tag: tag,
        Revision: /^\d+$/.test(rev) ? Number(rev) : rev,
        Move: bool(a, 'move'),
      });
      if ((out(a) ?? 'table') === 'table')
        process.stdout.write(`Tag ${r.body.TagSlug} marks revision ${r.body.RevisionNum} of ${slug}\n`);
      else print(r.body, out(a));
    },
    diff: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'unit'),
        'unit',
        'cub unit diff --space <space> <unit> --from N [--to M]',
      );
      const r = await c.get<{ Changes: Change[] }>(`/space/${seg(space)}/unit/${seg(slug)}/diff`, {
        from: flag(a, 'from') ?? '0',
        to: flag(a, 'to'),
      });
      if (out(a) && out(a) !== 'table') return print(r.body, out(a));
      print(r.body.Changes, out(a), COLUMNS.change);
    },
  },
  revision: {
    list: async (a, c) => {
      const ref = a.positional[0] ?? flag(a, 'unit');
      // Without a Unit: the revisions of every Unit of the Space (say, what a ChangeOrder brought there), Unit by Unit.
      if (!ref)
        return list<RevisionView & { UnitSlug: string }>(
          c,
          a,
          `/space/${seg(need(a, 'space', 'cub revision list --space <space> [<unit>] [--where W]'))}/revision`,
          [['Unit', (r) => r.UnitSlug], ...COLUMNS.revision],
        );
      const { space, slug } = locate(a, ref, 'unit', 'cub revision list --space <space> <unit>');
      await list<RevisionView>(c, a, `/space/${seg(space)}/unit/${seg(slug)}/revision`, COLUMNS.revision);
    },
    get: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'unit'),
        'unit',
        'cub revision get --space <space> <unit> <N>',
      );
      const n = a.positional[1] ?? flag(a, 'revision');
      if (!n) throw new UsageError('cub revision get --space <space> <unit> <N>');
      print(
        (await c.get<RevisionView>(`/space/${seg(space)}/unit/${seg(slug)}/revision/${seg(n)}`)).body,
        out(a) ?? 'yaml',
      );
    },
  },
  mutation: {
    list: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'unit'),
        'unit',
        'cub mutation list --space <space> <unit>',
      );
      const r = await c.get<Mutation[]>(`/space/${seg(space)}/unit/${seg(slug)}/mutation`, {
        limit: flag(a, 'limit'),
        continue: flag(a, 'continue'),
      });
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      const rows = r.body.flatMap((m) => m.Changes.map((ch) => ({ Num: m.RevisionNum, Source: m.Source, ...ch })));
      print(rows, 'table', [['Num', (r) => r.Num], ['Source', (r) => r.Source], ...COLUMNS.change]);
      const next = r.headers.get('x-continue');
      if (next) process.stderr.write(`more: --continue ${next}\n`);
    },
  },
};

const unitArg: [string, string] = ['[unit]', 'the Unit: <slug> with --space, or <space>/<slug> (or --unit)'];

export const unitsHelp: HelpTable = {
  unit: {
    create: {
      summary: 'Create a Unit from a YAML file or standard input',
      args: [
        ['<unit>', '<slug> with --space, or <space>/<slug>'],
        ['<file>', 'its data, or - for standard input'],
      ],
      flags: ['space', 'toolchain', 'label', 'annotation', 'change-desc', 'changeset', 'target'],
      example: 'cub unit create --space acme-scratch worker worker.yaml',
    },
    get: {
      summary: 'Show a Unit (YAML by default)',
      args: [unitArg],
      flags: ['space', 'unit'],
      example: 'cub unit get --space acme-base deployment',
    },
    list: {
      summary: 'List the Units of a Space, with whether each is behind its upstream',
      flags: ['space', 'where', 'filter', 'limit', 'continue'],
      example: 'cub unit list --space acme-prod-euw1 --where "Slug LIKE \'deploy%\'"',
    },
    data: {
      summary: 'Print the data of a Unit (at its head, or a revision)',
      args: [unitArg],
      flags: ['space', 'unit', 'revision'],
      example: 'cub unit data --space acme-base deployment --revision 1',
    },
    update: {
      summary: 'Change a Unit: new data or labels, merge from upstream, restore or revert',
      args: [unitArg, ['[file]', 'its new data, or - for standard input']],
      flags: [
        'space',
        'unit',
        'label',
        'remove-label',
        'annotation',
        'remove-annotation',
        'change-desc',
        'changeset',
        'target',
        'new-slug',
        'upgrade',
        'change-order',
        'prior-revisions',
        'merge-source',
        'merge-base',
        ['merge-end', 'merge (or resolve) up to this upstream revision'],
        'squash',
        'dry-run',
        'restore',
        'revert',
        'patch',
        'resolve',
      ],
      example: 'cub unit update --space acme-staging-euw1 deployment --upgrade --dry-run -o mutations',
    },
    conflicts: {
      summary: 'Show the protected paths an upstream merge could not change; apply or dismiss them',
      args: [unitArg],
      flags: ['space', 'unit', 'apply', 'dismiss', 'dry-run'],
      example: 'cub unit conflicts --space acme-dev deployment --apply --dry-run',
    },
    delete: {
      summary: 'Delete a Unit (delete gates refuse unless --force)',
      args: [unitArg],
      flags: ['space', 'unit', 'force'],
      example: 'cub unit delete --space acme-scratch worker',
    },
    tag: {
      summary: 'Mark a revision of a Unit with a Tag',
      args: [
        ['<tag>', 'the Tag (created if new)'],
        ['[unit]', 'the Unit (or --unit)'],
      ],
      flags: ['space', 'unit', ['revision', 'the revision to mark (default the head)'], 'move'],
      example: 'cub unit tag v1 --space acme-base --unit deployment --revision 1',
    },
    diff: {
      summary: 'What changed in a Unit between two revisions',
      args: [unitArg],
      flags: ['space', 'unit', 'from', 'to'],
      example: 'cub unit diff --space acme-base deployment --from 1 --to 2',
    },
  },
  revision: {
    list: {
      summary: 'List the revisions of a Unit (newest first), or of every Unit of a Space (Unit by Unit)',
      args: [['[unit]', 'the Unit (omit for the whole Space)']],
      flags: ['space', 'unit', 'where', 'filter', 'limit', 'continue'],
      example: 'cub revision list --space acme-dev --where "ChangeOrders ? \'acme-base/release-v452\'"',
    },
    get: {
      summary: 'Show one revision of a Unit',
      args: [unitArg, ['[num]', 'the revision number (or --revision)']],
      flags: ['space', 'unit', 'revision'],
      example: 'cub revision get --space acme-base deployment 2',
    },
  },
  mutation: {
    list: {
      summary: 'The paths each revision of a Unit changed, newest first',
      args: [unitArg],
      flags: ['space', 'unit', 'limit', 'continue'],
      example: 'cub mutation list --space acme-base deployment --limit 5',
    },
  },
};

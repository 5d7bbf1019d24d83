import { bool, flag, need, UsageError } from '../args.ts';
import { seg } from '../client.ts';
import { isQuiet, print, say } from '../output.ts';
import type { WithSpaceSlug } from '../../lib/model/common.ts';
import type { Release } from '../../lib/model/entities.ts';
import type { PublishAnswer } from '../api.ts';
import { withProgress } from '../progress.ts';
import { type Command, type HelpTable, COLUMNS, out, locate, list } from '../common.ts';

/** Releases and their live status. */
export const releasesCommands: Record<string, Record<string, Command>> = {
  release: {
    publish: async (a, c) => {
      const space = a.positional[0] ?? flag(a, 'space');
      if (!space) throw new UsageError('cub release publish <space> [--revision R] [--dry-run] [--description D]');
      const rev = flag(a, 'revision');
      const r = await withProgress(
        `publishing ${space}`,
        c.post<PublishAnswer>(`/space/${seg(space)}/release`, {
          Revision: rev === undefined ? undefined : /^\d+$/.test(rev) ? Number(rev) : rev,
          DryRun: bool(a, 'dry-run') || undefined,
          Description: flag(a, 'description'),
        }),
      );
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      // -q: the number of the Release made (nothing when nothing changed).
      if (isQuiet())
        return void process.stdout.write(r.body.Release && !r.body.DryRun ? `${r.body.Release.ReleaseNum}\n` : '');
      if (r.body.Message) process.stdout.write(`${r.body.Message}\n`);
      else if (r.body.DryRun)
        process.stdout.write(`Would publish ${r.body.UnitCount} unit(s) of ${space}, digest ${r.body.Digest}:\n`);
      else
        process.stdout.write(
          `Published release ${r.body.Release!.ReleaseNum} of ${space}: ${r.body.UnitCount} unit(s), digest ${r.body.Digest}\n`,
        );
      if (!r.body.Message)
        print(r.body.Units, 'table', [
          ['Unit', (u) => u.Slug],
          ['Revision', (u) => u.RevisionNum],
        ]);
    },
    // Without --space, every Space's (those the caller sees), Space by Space in slug order.
    list: (a, c) =>
      list(c, a, flag(a, 'space') ? `/space/${seg(flag(a, 'space')!)}/release` : '/release', COLUMNS.release),
    get: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'release'),
        'release',
        'cub release get --space <space> <release-num|id>',
      );
      print((await c.get(`/space/${seg(space)}/release/${seg(slug)}`)).body, out(a) ?? 'yaml');
    },
    data: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'release'),
        'release',
        'cub release data --space <space> <release-num|id>',
      );
      process.stdout.write((await c.get(`/space/${seg(space)}/release/${seg(slug)}/data`)).text);
    },
    withdraw: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0] ?? flag(a, 'release'),
        'release',
        'cub release withdraw --space <space> <release-num|id>',
      );
      const r = await c.post<Release>(`/space/${seg(space)}/release/${seg(slug)}/withdraw`);
      say(out(a), `Withdrew release ${r.body.ReleaseNum} of ${space}`, r.body, String(r.body.ReleaseNum));
    },
    report: async (a, c) => {
      const usage =
        'cub release report --space <space> [--release N] --sync Synced|OutOfSync|Unknown --health Healthy|Progressing|Degraded|Suspended|Missing|Unknown [--operation Running|Succeeded|Failed] [--message M]';
      const space = need(a, 'space', usage);
      // Without --release, the server reports on the Space's newest published Release (a ReportStatus token may not list Releases).
      const release = flag(a, 'release') ?? 'latest';
      const live: Record<string, string> = {
        Reporter: flag(a, 'reporter') ?? 'cub',
        DataSource: 'cub release report',
        ObservedAt: new Date().toISOString(),
      };
      for (const [f, k] of [
        ['sync', 'Sync'],
        ['health', 'Health'],
        ['operation', 'Operation'],
        ['message', 'Message'],
      ] as const)
        if (flag(a, f) !== undefined) live[k] = flag(a, f)!;
      if (!live.Sync && !live.Health && !live.Operation) throw new UsageError(usage);
      const r = await c.patch<WithSpaceSlug<Release>>(`/space/${seg(space)}/release/${seg(release)}`, {
        LiveStatus: live,
      });
      print(r.body, out(a), COLUMNS.release);
    },
  },
};

const releaseArg: [string, string] = [
  '[release]',
  'the Release number or ID (or --release), with --space, or <space>/<n>',
];

export const releasesHelp: HelpTable = {
  release: {
    publish: {
      summary: 'Publish a Release of a Space: its Units at a revision, bundled with a digest',
      args: [['[space]', 'the Space (or --space)']],
      flags: ['space', ['revision', 'which revision of each Unit (default the head)'], 'description', 'dry-run'],
      example: 'cub release publish acme-staging-euw1 --revision ChangeOrder:acme-base/release-v452',
    },
    list: {
      summary: "List Releases, of a Space (newest first) or every Space's (Space by Space)",
      flags: ['space', 'where', 'filter', 'limit', 'continue'],
      example: 'cub release list --space acme-staging-euw1 --limit 5',
    },
    get: {
      summary: 'Show a Release (latest: the newest published)',
      args: [releaseArg],
      flags: ['space', 'release'],
      example: 'cub release get --space acme-staging-euw1 1',
    },
    data: {
      summary: 'Print the bundle a Release deploys (its digest is over these bytes)',
      args: [releaseArg],
      flags: ['space', 'release'],
      example: 'cub release data --space acme-staging-euw1 1',
    },
    withdraw: {
      summary: 'Withdraw a Release',
      args: [releaseArg],
      flags: ['space', 'release'],
      example: 'cub release withdraw --space acme-staging-euw1 1',
    },
    report: {
      summary: 'Report the live status of a Release, as a deploy tool would',
      flags: ['space', 'release', 'sync', 'health', 'operation', 'message', 'reporter'],
      example: 'cub release report --space acme-staging-euw1 --sync Synced --health Healthy',
    },
  },
};

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { bool, flag, flags, need, pairs, parseArgs, UsageError, type Args } from './args.ts';
import { ApiError, Client, connection, seg } from './client.ts';
import { print, table, type Column } from './output.ts';

type Command = (a: Args, c: Client) => Promise<void>;

const labelsCol: Column = ['Labels', (r) => r.Labels];
const COLUMNS: Record<string, Column[]> = {
  space: [['Name', (r) => r.Slug], labelsCol, ['Version', (r) => r.Version], ['ID', (r) => r.SpaceID]],
  component: [['Name', (r) => r.Slug], ['ID', (r) => r.ComponentID]],
  unit: [
    ['Name', (r) => r.Slug],
    ['Space', (r) => r.SpaceSlug],
    ['Head', (r) => r.HeadRevisionNum],
    ['Upstream', (r) => (r.UpstreamUnitID ? r.UpstreamRevisionNum : '')],
    ['Released', (r) => r.LastReleasedRevisionNum],
    ['Toolchain', (r) => r.ToolchainType],
    ['Change', (r) => r.LastChangeDescription],
  ],
  revision: [['Num', (r) => r.RevisionNum], ['Source', (r) => r.Source], ['Description', (r) => r.Description], ['Created', (r) => r.CreatedAt], ['Hash', (r) => String(r.DataHash).slice(0, 12)]],
  tag: [['Name', (r) => r.Slug], ['Space', (r) => r.SpaceSlug], ['ID', (r) => r.TagID]],
  changeset: [['Name', (r) => r.Slug], ['State', (r) => r.State], ['Description', (r) => r.Description], ['ID', (r) => r.ChangeSetID]],
  filter: [['Name', (r) => r.Slug], ['From', (r) => r.From], ['Where', (r) => r.Where]],
  target: [['Name', (r) => r.Slug], ['Space', (r) => r.SpaceSlug], ['Facts', (r) => r.Facts], ['ID', (r) => r.TargetID]],
  link: [['Name', (r) => r.Slug], ['Type', (r) => r.UpdateType], ['From', (r) => r.FromUnitID], ['To', (r) => r.ToUnitID], ['Merged', (r) => `${r.UpstreamLastMergedRevisionNum}→${r.DownstreamLastMergedRevisionNum}`], ['Stale', (r) => r.Stale]],
  release: [
    ['Num', (r) => r.ReleaseNum],
    ['Space', (r) => r.SpaceSlug],
    ['Published', (r) => r.Published],
    ['Units', (r) => r.UnitCount],
    ['Sync', (r) => r.LiveStatus?.Sync ?? ''],
    ['Health', (r) => r.LiveStatus?.Health ?? ''],
    ['Operation', (r) => r.LiveStatus?.Operation ?? ''],
    ['Digest', (r) => String(r.Digest).slice(0, 12)],
  ],
  changeworkflow: [['Name', (r) => r.Slug], ['Stages', (r) => r.Stages.map((s: any) => s.Name).join(' → ')], ['Final', (r) => (r.Final?.Prerequisites ?? []).join(',')]],
  changeorder: [['Name', (r) => r.Slug], ['Space', (r) => r.SpaceSlug], ['State', (r) => r.State], ['Stage', (r) => r.Stage ?? ''], ['Completed', (r) => r.Completed], ['Description', (r) => r.Description ?? '']],
  change: [['Resource', (r) => r.Resource], ['Path', (r) => r.Path], ['Op', (r) => r.Op], ['Value', (r) => (r.Value === undefined ? '' : JSON.stringify(r.Value))]],
};

const out = (a: Args) => flag(a, 'output');

/** `slug` in `--space`, or `space/slug` anywhere. */
function locate(a: Args, ref: string | undefined, what: string, usage: string): { space: string; slug: string } {
  if (!ref) throw new UsageError(`name the ${what}: ${usage}`);
  const slash = ref.indexOf('/');
  if (slash > 0) return { space: ref.slice(0, slash), slug: ref.slice(slash + 1) };
  return { space: need(a, 'space', usage), slug: ref };
}

function readInput(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${path === '-' ? 'standard input' : path}: ${(e as Error).message}`);
  }
}

function labelsPatch(a: Args): { Labels?: Record<string, string | null>; Annotations?: Record<string, string | null> } {
  const labels: Record<string, string | null> = pairs(a, 'label');
  for (const k of flags(a, 'remove-label')) labels[k] = null;
  const annotations: Record<string, string | null> = pairs(a, 'annotation');
  for (const k of flags(a, 'remove-annotation')) annotations[k] = null;
  return { ...(Object.keys(labels).length ? { Labels: labels } : {}), ...(Object.keys(annotations).length ? { Annotations: annotations } : {}) };
}

async function list(c: Client, a: Args, path: string, kind: string): Promise<void> {
  const r = await c.get(path, { where: flag(a, 'where'), filter: flag(a, 'filter'), limit: flag(a, 'limit'), continue: flag(a, 'continue') });
  print(r.body, out(a), COLUMNS[kind]);
  const next = r.headers.get('x-continue');
  if (next && (out(a) ?? 'table') === 'table') process.stderr.write(`more: --continue ${next}\n`);
}

/** The simple Space-resident kinds: create/get/list/delete alike. */
function spaceKind(kind: 'tag' | 'changeset' | 'filter' | 'target', segment: string): Record<string, Command> {
  const usage = `cub ${kind} get --space <space> <${kind}>`;
  return {
    list: (a, c) => list(c, a, `/space/${seg(need(a, 'space', `cub ${kind} list --space <space>`))}/${segment}`, kind),
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], kind, usage);
      print((await c.get(`/space/${seg(space)}/${segment}/${seg(slug)}`)).body, out(a), COLUMNS[kind]);
    },
    delete: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], kind, `cub ${kind} delete --space <space> <${kind}>`);
      await c.delete(`/space/${seg(space)}/${segment}/${seg(slug)}`);
      process.stdout.write(`Deleted ${kind} ${slug}\n`);
    },
  };
}

const COMMANDS: Record<string, Record<string, Command>> = {
  space: {
    create: async (a, c) => {
      const slug = a.positional[0];
      if (!slug) throw new UsageError('cub space create <slug> [--label k=v] [--annotation k=v]');
      const body = { Slug: slug, DisplayName: flag(a, 'display-name'), Labels: pairs(a, 'label'), Annotations: pairs(a, 'annotation'), ReleaseTargetID: flag(a, 'release-target'), ComponentID: flag(a, 'component') };
      print((await c.post('/space', body)).body, out(a), COLUMNS.space);
    },
    get: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space get <slug>');
      print((await c.get(`/space/${seg(slug)}`)).body, out(a), COLUMNS.space);
    },
    list: (a, c) => list(c, a, '/space', 'space'),
    update: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space update <slug> [--label k=v] [--annotation k=v] [--release-target space/target]');
      const cur = (await c.get(`/space/${seg(slug)}`)).body;
      const rt = flag(a, 'release-target') ?? flag(a, 'target');
      const body = { Version: cur.Version, ...labelsPatch(a), ...(flag(a, 'display-name') ? { DisplayName: flag(a, 'display-name') } : {}), ...(flag(a, 'new-slug') ? { Slug: flag(a, 'new-slug') } : {}), ...(rt !== undefined ? { ReleaseTargetID: rt || null } : {}) };
      print((await c.patch(`/space/${seg(slug)}`, body)).body, out(a), COLUMNS.space);
    },
    delete: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space delete <slug> [--recursive]');
      const r = await c.delete(`/space/${seg(slug)}`, { recursive: bool(a, 'recursive') || bool(a, 'recursive-force') ? 'true' : undefined, force: bool(a, 'recursive-force') ? 'true' : undefined });
      process.stdout.write(`Deleted space ${slug}${r.body?.DeletedUnits?.length ? ` with ${r.body.DeletedUnits.length} unit(s)` : ''}\n`);
      for (const l of r.body?.RemovedLinks ?? []) process.stdout.write(`Removed link ${l.Slug} (space ${l.SpaceID}) that pointed into it\n`);
    },
  },
  component: {
    list: (a, c) => list(c, a, '/component', 'component'),
    create: async (a, c) => {
      const slug = a.positional[0];
      if (!slug) throw new UsageError('cub component create <slug>');
      print((await c.post('/component', { Slug: slug, Labels: pairs(a, 'label') })).body, out(a), COLUMNS.component);
    },
    get: async (a, c) => print((await c.get(`/component/${seg(a.positional[0] ?? '')}`)).body, out(a), COLUMNS.component),
  },
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
      print((await c.post(`/space/${seg(space)}/unit`, body)).body, out(a), COLUMNS.unit);
    },
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub unit get --space <space> <unit>');
      const unit = (await c.get(`/space/${seg(space)}/unit/${seg(slug)}`)).body;
      print(unit, out(a) ?? 'yaml');
    },
    list: async (a, c) => {
      const space = need(a, 'space', 'cub unit list --space <space> [--where W]');
      const r = await c.get(`/space/${seg(space)}/unit`, { where: flag(a, 'where'), filter: flag(a, 'filter'), limit: flag(a, 'limit'), continue: flag(a, 'continue') });
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      // Whether each unit is behind its upstream comes from its Links' Stale.
      const links = (await c.get(`/space/${seg(space)}/link`)).body as any[];
      const stale = new Set(links.filter((l) => l.Stale).map((l) => l.FromUnitID));
      print(
        r.body.map((u: any) => ({ ...u, Behind: stale.has(u.UnitID) })),
        'table',
        [...COLUMNS.unit!.slice(0, 4), ['Behind', (u) => (u.UpstreamUnitID ? (u.Behind ? 'yes' : 'no') : '')], ...COLUMNS.unit!.slice(4)],
      );
    },
    data: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub unit data --space <space> <unit> [--revision N]');
      process.stdout.write((await c.get(`/space/${seg(space)}/unit/${seg(slug)}/data`, { revision: flag(a, 'revision') })).text);
    },
    update: async (a, c) => {
      const usage = 'cub unit update --space <space> <unit> [<file|->] [--label k=v] [--change-desc D] [--changeset CS] | --upgrade | --merge-source X [--merge-base N] [--merge-end M] | --restore <rev> | --revert <range>';
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', usage);
      const path = `/space/${seg(space)}/unit/${seg(slug)}`;
      if (bool(a, 'upgrade') || flag(a, 'merge-source')) {
        const num = (n: string) => (flag(a, n) === undefined ? undefined : Number(flag(a, n)));
        const r = await c.post(`${path}/upgrade`, {
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
        const r = await c.post(`${path}/restore`, { Revision: /^\d+$/.test(rev) ? Number(rev) : rev, ChangeDescription: flag(a, 'change-desc') });
        return print(r.body, out(a), COLUMNS.unit);
      }
      if (flag(a, 'revert')) {
        return print((await c.post(`${path}/revert`, { Range: flag(a, 'revert'), ChangeDescription: flag(a, 'change-desc') })).body, out(a), COLUMNS.unit);
      }
      const cur = (await c.get(path)).body;
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
      print((await c.patch(path, body)).body, out(a), COLUMNS.unit);
    },
    conflicts: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub unit conflicts --space <space> <unit> [--apply [--dry-run] | --dismiss]');
      const path = `/space/${seg(space)}/unit/${seg(slug)}`;
      if (bool(a, 'apply') || bool(a, 'dismiss')) {
        const r = await c.post(`${path}/conflicts`, { Action: bool(a, 'apply') ? 'Apply' : 'Dismiss', DryRun: bool(a, 'dry-run') || undefined });
        if (out(a) === 'mutations' || (bool(a, 'dry-run') && (out(a) ?? 'table') === 'table')) return print(r.body.Changes, 'table', COLUMNS.change);
        if (out(a) === 'json' || out(a) === 'yaml') return print(r.body, out(a));
        process.stdout.write(bool(a, 'apply') ? `Applied ${r.body.Changes.length} upstream value(s) to ${slug}${r.body.RevisionNum ? ` as revision ${r.body.RevisionNum}` : ''}\n` : `Dismissed the conflicts of ${slug}; its data and protection are unchanged\n`);
        return;
      }
      const unit = (await c.get(path)).body;
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
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub unit delete --space <space> <unit>');
      await c.delete(`/space/${seg(space)}/unit/${seg(slug)}`, { force: bool(a, 'force') ? 'true' : undefined });
      process.stdout.write(`Deleted unit ${slug}\n`);
    },
    tag: async (a, c) => {
      const usage = 'cub unit tag <tag> --space <space> --unit <unit> --revision <N> [--move]';
      const tag = a.positional[0];
      if (!tag) throw new UsageError(usage);
      const { space, slug } = locate(a, flag(a, 'unit') ?? a.positional[1], 'unit', usage);
      const rev = flag(a, 'revision') ?? 'HeadRevisionNum';
      const r = await c.post(`/space/${seg(space)}/unit/${seg(slug)}/tag`, { Tag: tag, Revision: /^\d+$/.test(rev) ? Number(rev) : rev, Move: bool(a, 'move') });
      if ((out(a) ?? 'table') === 'table') process.stdout.write(`Tag ${r.body.TagSlug} marks revision ${r.body.RevisionNum} of ${slug}\n`);
      else print(r.body, out(a));
    },
    diff: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub unit diff --space <space> <unit> --from N [--to M]');
      const r = await c.get(`/space/${seg(space)}/unit/${seg(slug)}/diff`, { from: flag(a, 'from') ?? '0', to: flag(a, 'to') });
      print(out(a) && out(a) !== 'table' ? r.body : r.body.Changes, out(a), COLUMNS.change);
    },
  },
  revision: {
    list: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub revision list --space <space> <unit>');
      print((await c.get(`/space/${seg(space)}/unit/${seg(slug)}/revision`, { where: flag(a, 'where'), limit: flag(a, 'limit') })).body, out(a), COLUMNS.revision);
    },
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub revision get --space <space> <unit> <N>');
      const n = a.positional[1] ?? flag(a, 'revision');
      if (!n) throw new UsageError('cub revision get --space <space> <unit> <N>');
      print((await c.get(`/space/${seg(space)}/unit/${seg(slug)}/revision/${seg(n)}`)).body, out(a) ?? 'yaml');
    },
  },
  mutation: {
    list: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'unit'), 'unit', 'cub mutation list --space <space> <unit>');
      const muts = (await c.get(`/space/${seg(space)}/unit/${seg(slug)}/mutation`)).body as any[];
      if ((out(a) ?? 'table') !== 'table') return print(muts, out(a));
      const rows = muts.flatMap((m) => m.Changes.map((ch: any) => ({ Num: m.RevisionNum, Source: m.Source, ...ch })));
      print(rows, 'table', [['Num', (r) => r.Num], ['Source', (r) => r.Source], ...COLUMNS.change!]);
    },
  },
  function: {
    set: (a, c) => invoke(a, c, true),
    get: (a, c) => invoke(a, c, false),
    list: async () => {
      const { functionNames } = await import('../lib/config/functions.ts');
      process.stdout.write(functionNames().join('\n') + '\n');
    },
  },
  changeset: {
    ...spaceKind('changeset', 'change_set'),
    create: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeset', 'cub changeset create --space <space> <slug> [--description D]');
      print((await c.post(`/space/${seg(space)}/change_set`, { Slug: slug, Description: flag(a, 'description') })).body, out(a), COLUMNS.changeset);
    },
    close: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeset', 'cub changeset close --space <space> <changeset>');
      const path = `/space/${seg(space)}/change_set/${seg(slug)}`;
      const cur = (await c.get(path)).body;
      print((await c.patch(path, { Version: cur.Version, State: 'Closed' })).body, out(a), COLUMNS.changeset);
    },
  },
  link: {
    list: (a, c) => list(c, a, `/space/${seg(need(a, 'space', 'cub link list --space <space>'))}/link`, 'link'),
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'link', 'cub link get --space <space> <link>');
      print((await c.get(`/space/${seg(space)}/link/${seg(slug)}`)).body, out(a) ?? 'yaml');
    },
    delete: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'link', 'cub link delete --space <space> <link>');
      await c.delete(`/space/${seg(space)}/link/${seg(slug)}`);
      process.stdout.write(`Deleted link ${slug}\n`);
    },
    create: async (a, c) => {
      const usage = 'cub link create --space <space> <slug|-> <from-unit> <to-unit> [<to-space>] [--update-type T] [--from-stdin]';
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
      print((await c.post(`/space/${seg(space)}/link`, body)).body, out(a), COLUMNS.link);
    },
  },
  variant: {
    upload: async (a, c) => {
      const usage = 'cub variant upload --component <component> --variant <variant> [--granularity per-file] <dir>';
      const dir = a.positional[0];
      if (!dir) throw new UsageError(usage);
      const granularity = flag(a, 'granularity') ?? 'per-file';
      if (granularity !== 'per-file') throw new UsageError(`--granularity ${granularity} is not supported; per-file makes one unit per YAML file`);
      let files: string[];
      try {
        files = readdirSync(dir).filter((f) => /\.ya?ml$/i.test(f)).sort();
      } catch (e) {
        throw new UsageError(`cannot read directory ${dir}: ${(e as Error).message}`);
      }
      if (!files.length) throw new UsageError(`${dir} has no .yaml or .yml files`);
      const units = files.map((f) => ({ Slug: f.replace(/\.ya?ml$/i, '').replace(/[^-_A-Za-z0-9]+/g, '-').replace(/^[-_]+|[-_]+$/g, ''), Data: readInput(join(dir, f)) }));
      const body = { Component: need(a, 'component', usage), Variant: need(a, 'variant', usage), Units: units, Stage: flag(a, 'stage'), Environment: flag(a, 'environment'), Region: flag(a, 'region'), SpaceLabels: pairs(a, 'space-label') };
      const r = await c.post('/variant/upload', body);
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      process.stdout.write(`Created space ${r.body.Space.Slug} with ${r.body.Units.length} unit(s): ${r.body.Units.map((u: any) => u.Slug).join(', ')}\n`);
    },
    create: async (a, c) => {
      const usage = 'cub variant create <name> <upstream-space> [--target space/target] [--namespace N] [--stage S] [--environment E] [--region R] [--space-label k=v] [--unit-delete-gate g]';
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
      const r = await c.post('/variant', body);
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      process.stdout.write(`Created space ${r.body.Space.Slug} from ${upstream}\n`);
      printUnitResults(r.body.Units, 'table');
    },
    promote: async (a, c) => {
      const space = a.positional[0];
      const co = flag(a, 'change-order');
      if (co) return promoteChangeOrder(a, c, co, space);
      if (!space) throw new UsageError('cub variant promote <space> [--dry-run] [-o mutations] | --change-order <space>/<change-order> [--target-stage S] [<space>|--where-space W]');
      const r = await c.post('/promote', { Space: space, DryRun: bool(a, 'dry-run') || undefined, Squash: bool(a, 'squash') || undefined });
      printUnitResults(r.body.Units, out(a));
      if (r.status === 207) process.exitCode = 1;
    },
  },
  release: {
    publish: async (a, c) => {
      const space = a.positional[0] ?? flag(a, 'space');
      if (!space) throw new UsageError('cub release publish <space> [--revision R] [--dry-run] [--description D]');
      const rev = flag(a, 'revision');
      const r = await c.post(`/space/${seg(space)}/release`, { Revision: rev === undefined ? undefined : /^\d+$/.test(rev) ? Number(rev) : rev, DryRun: bool(a, 'dry-run') || undefined, Description: flag(a, 'description') });
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      if (r.body.Message) process.stdout.write(`${r.body.Message}\n`);
      else if (r.body.DryRun) process.stdout.write(`Would publish ${r.body.UnitCount} unit(s) of ${space}, digest ${r.body.Digest}:\n`);
      else process.stdout.write(`Published release ${r.body.Release.ReleaseNum} of ${space}: ${r.body.UnitCount} unit(s), digest ${r.body.Digest}\n`);
      if (!r.body.Message) print(r.body.Units, 'table', [['Unit', (u) => u.Slug], ['Revision', (u) => u.RevisionNum]]);
    },
    list: (a, c) => list(c, a, `/space/${seg(need(a, 'space', 'cub release list --space <space>'))}/release`, 'release'),
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'release'), 'release', 'cub release get --space <space> <release-num|id>');
      print((await c.get(`/space/${seg(space)}/release/${seg(slug)}`)).body, out(a) ?? 'yaml');
    },
    data: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'release'), 'release', 'cub release data --space <space> <release-num|id>');
      process.stdout.write((await c.get(`/space/${seg(space)}/release/${seg(slug)}/data`)).text);
    },
    withdraw: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0] ?? flag(a, 'release'), 'release', 'cub release withdraw --space <space> <release-num|id>');
      const r = await c.post(`/space/${seg(space)}/release/${seg(slug)}/withdraw`);
      process.stdout.write(`Withdrew release ${r.body.ReleaseNum} of ${space}\n`);
    },
    report: async (a, c) => {
      const usage = 'cub release report --space <space> [--release N] --sync Synced|OutOfSync|Unknown --health Healthy|Progressing|Degraded|Suspended|Missing|Unknown [--operation Running|Succeeded|Failed] [--message M]';
      const space = need(a, 'space', usage);
      let release = flag(a, 'release');
      if (!release) {
        const all = (await c.get(`/space/${seg(space)}/release`, { where: 'Published = true' })).body as any[];
        if (!all.length) throw new UsageError(`space ${space} has no published release to report on`);
        release = String(all[0].ReleaseNum);
      }
      const live: Record<string, string> = { Reporter: flag(a, 'reporter') ?? 'cub', DataSource: 'cub release report', ObservedAt: new Date().toISOString() };
      for (const [f, k] of [['sync', 'Sync'], ['health', 'Health'], ['operation', 'Operation'], ['message', 'Message']] as const) if (flag(a, f) !== undefined) live[k] = flag(a, f)!;
      if (!live.Sync && !live.Health && !live.Operation) throw new UsageError(usage);
      const r = await c.patch(`/space/${seg(space)}/release/${seg(release)}`, { LiveStatus: live });
      print(r.body, out(a), COLUMNS.release);
    },
  },
  changeworkflow: {
    list: (a, c) => list(c, a, `/space/${seg(need(a, 'space', 'cub changeworkflow list --space <space>'))}/change_workflow`, 'changeworkflow'),
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeworkflow', 'cub changeworkflow get --space <space> <workflow>');
      print((await c.get(`/space/${seg(space)}/change_workflow/${seg(slug)}`)).body, out(a) ?? 'yaml');
    },
    delete: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeworkflow', 'cub changeworkflow delete --space <space> <workflow>');
      await c.delete(`/space/${seg(space)}/change_workflow/${seg(slug)}`);
      process.stdout.write(`Deleted change workflow ${slug}\n`);
    },
    create: async (a, c) => {
      const usage = 'cub changeworkflow create --space <space> <slug> (--filename <file|-> | --stage S… [--prerequisites A,B]) | --changeworkflow <slug> --dest-space <space>';
      const source = flag(a, 'changeworkflow');
      if (source) {
        const dest = need(a, 'dest-space', usage);
        const ref = source.includes('/') ? source : `${need(a, 'space', usage)}/${source}`;
        return print((await c.post(`/space/${seg(dest)}/change_workflow/clone`, { Source: ref, Slug: a.positional[0] })).body, out(a), COLUMNS.changeworkflow);
      }
      const file = flag(a, 'filename');
      let body: Record<string, unknown>;
      let slug = a.positional[0];
      if (file) {
        const text = readInput(file);
        const parsed = parse(text) as Record<string, unknown>;
        if (!parsed || typeof parsed !== 'object') throw new UsageError(`${file} holds no workflow`);
        const { workflowFromFile } = await import('./workflow.ts');
        const w = workflowFromFile(parsed);
        slug ??= w.slug;
        body = w.definition;
      } else {
        const stages = flags(a, 'stage');
        if (!stages.length) throw new UsageError(usage);
        const { workflowFromFlags } = await import('./workflow.ts');
        body = workflowFromFlags(stages, (flag(a, 'prerequisites') ?? '').split(',').filter(Boolean)) as unknown as Record<string, unknown>;
      }
      if (!slug) throw new UsageError(`name the workflow: ${usage}`);
      print((await c.post(`/space/${seg(need(a, 'space', usage))}/change_workflow`, { Slug: slug, ...body })).body, out(a), COLUMNS.changeworkflow);
    },
    update: async (a, c) => {
      const usage = 'cub changeworkflow update --space <space> <slug> [--stage S…] [--stage-where-space S=expr] [--stage-prerequisites S=A;B] [--attestation-prerequisite N] [--attestation-prerequisite-count N=2]';
      const { space, slug } = locate(a, a.positional[0], 'changeworkflow', usage);
      const path = `/space/${seg(space)}/change_workflow/${seg(slug)}`;
      const cur = (await c.get(path)).body;
      let stages: any[] = cur.Stages;
      const named = flags(a, 'stage');
      if (named.length) {
        // The Stages named are the Stages it has, in that order; one named again keeps its fields.
        stages = named.map((n) => stages.find((s) => s.Name === n) ?? { Name: n, WhereSpace: `Labels.Stage = '${n.replace(/'/g, "''")}'` });
      }
      const stageValue = (kv: string, flagName: string): [any, string] => {
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new UsageError(`--${flagName} takes <stage>=<value>, got '${kv}'`);
        const stage = stages.find((s) => s.Name === kv.slice(0, eq));
        if (!stage) throw new UsageError(`--${flagName}: the workflow has no stage '${kv.slice(0, eq)}'`);
        return [stage, kv.slice(eq + 1)];
      };
      for (const kv of flags(a, 'stage-where-space')) {
        const [stage, v] = stageValue(kv, 'stage-where-space');
        stage.WhereSpace = v;
      }
      for (const kv of flags(a, 'stage-prerequisites')) {
        const [stage, v] = stageValue(kv, 'stage-prerequisites');
        stage.Prerequisites = v.split(/[;,]/).map((x) => x.trim()).filter(Boolean);
      }
      for (const kv of flags(a, 'stage-release-prerequisites')) {
        const [stage, v] = stageValue(kv, 'stage-release-prerequisites');
        stage.ReleasePrerequisites = v.split(/[;,]/).map((x) => x.trim()).filter(Boolean);
      }
      const attestations: any[] = [...(cur.AttestationPrerequisites ?? [])];
      for (const name of flags(a, 'attestation-prerequisite')) if (!attestations.some((x) => x.Name === name)) attestations.push({ Name: name });
      for (const [name, n] of Object.entries(pairs(a, 'attestation-prerequisite-count'))) {
        const att = attestations.find((x) => x.Name === name);
        if (!att) throw new UsageError(`--attestation-prerequisite-count: no attestation prerequisite '${name}'; declare it with --attestation-prerequisite ${name}`);
        if (!/^\d+$/.test(n)) throw new UsageError(`--attestation-prerequisite-count ${name}=${n}: the count must be a number`);
        att.Count = Number(n);
      }
      const body: Record<string, unknown> = { Version: cur.Version, Stages: stages };
      if (attestations.length) body.AttestationPrerequisites = attestations;
      if (flag(a, 'prerequisites') !== undefined) body.Final = { Prerequisites: flag(a, 'prerequisites')!.split(',').filter(Boolean) };
      print((await c.patch(path, body)).body, out(a), COLUMNS.changeworkflow);
    },
  },
  changeorder: {
    create: async (a, c) => {
      const usage = 'cub changeorder create --space <space> <slug> [--description D] [--change-workflow space/workflow] [--in-scope-space S]… [--component C] [--where-space-field W] [--space-filter space/filter] [--end-tag T] [--prior-revisions Include|Skip|Error|All] [--update-type UpgradeUnit|MergeUnits] [--allow-exists]';
      const { space, slug } = locate(a, a.positional[0], 'changeorder', usage);
      const body = {
        Slug: slug,
        Description: flag(a, 'description'),
        ChangeWorkflowID: flag(a, 'change-workflow'),
        InScopeSpaceIDs: flags(a, 'in-scope-space').flatMap((x) => x.split(',')),
        ComponentID: flag(a, 'component'),
        WhereSpace: flag(a, 'where-space-field'),
        SpaceFilterID: flag(a, 'space-filter'),
        EndTagID: flag(a, 'end-tag'),
        PriorRevisions: flag(a, 'prior-revisions'),
        UpdateType: flag(a, 'update-type'),
        AllowExists: bool(a, 'allow-exists') || undefined,
      };
      const r = await c.post(`/space/${seg(space)}/change_order`, body);
      await printChangeOrder(c, r.body, out(a));
    },
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeorder', 'cub changeorder get --space <space> <change-order>');
      await printChangeOrder(c, (await c.get(`/space/${seg(space)}/change_order/${seg(slug)}`)).body, out(a));
    },
    list: async (a, c) => {
      const space = flag(a, 'space');
      await list(c, a, space ? `/space/${seg(space)}/change_order` : '/change_order', 'changeorder');
    },
    update: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeorder', 'cub changeorder update --space <space> <change-order> [--refresh-spaces] [--description D] [--aborted-reason R]');
      const body = { RefreshSpaces: bool(a, 'refresh-spaces') || undefined, Description: flag(a, 'description'), AbortedReason: flag(a, 'aborted-reason') };
      await printChangeOrder(c, (await c.patch(`/space/${seg(space)}/change_order/${seg(slug)}`, body)).body, out(a));
    },
  },
  tag: {
    ...spaceKind('tag', 'tag'),
    create: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'tag', 'cub tag create --space <space> <slug>');
      print((await c.post(`/space/${seg(space)}/tag`, { Slug: slug, Labels: pairs(a, 'label') })).body, out(a), COLUMNS.tag);
    },
  },
  filter: {
    ...spaceKind('filter', 'filter'),
    create: async (a, c) => {
      const usage = 'cub filter create --space <space> <slug> <Entity> --where-field <where>';
      const { space, slug } = locate(a, a.positional[0], 'filter', usage);
      const from = a.positional[1] ?? flag(a, 'from');
      if (!from) throw new UsageError(`name the entity the filter selects: ${usage}`);
      const where = flag(a, 'where-field') ?? flag(a, 'where') ?? '';
      print((await c.post(`/space/${seg(space)}/filter`, { Slug: slug, From: from, Where: where })).body, out(a), COLUMNS.filter);
    },
  },
  target: {
    ...spaceKind('target', 'target'),
    create: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'target', 'cub target create --space <space> <slug> [--fact k=v]');
      print((await c.post(`/space/${seg(space)}/target`, { Slug: slug, Facts: pairs(a, 'fact'), Labels: pairs(a, 'label') })).body, out(a), COLUMNS.target);
    },
  },
};

/** Space IDs → slugs, for reading a ChangeOrder. */
async function spaceSlugs(c: Client): Promise<Map<string, string>> {
  return new Map(((await c.get('/space')).body as any[]).map((s) => [s.SpaceID, s.Slug]));
}

/** `cub changeorder get`: where the change has got to. */
async function printChangeOrder(c: Client, co: any, format: string | undefined): Promise<void> {
  if (format === 'json' || format === 'yaml') return print(co, format);
  const slugs = await spaceSlugs(c);
  const names = (ids: string[] = []) => ids.map((id) => slugs.get(id) ?? id).sort().join(', ') || '-';
  const units = new Map<string, string>();
  if (Object.keys(co.SkippedUnits ?? {}).length) for (const u of (await c.get(`/space/${seg(co.SpaceID)}/unit`)).body as any[]) units.set(u.UnitID, u.Slug);
  const failure = co.PromotionFailures?.[co.PromotionFailures.length - 1];
  const rows: [string, string][] = [
    ['Name', co.Slug],
    ['Space', co.SpaceSlug ?? slugs.get(co.SpaceID) ?? co.SpaceID],
    ['Description', co.Description ?? ''],
    ['State', co.State],
    ['Stage', co.Stage ?? '-'],
    ['Completed', String(!!co.Completed)],
    ['Where Space', co.WhereSpace ?? '-'],
    ['In-Scope Spaces', names(co.InScopeSpaceIDs)],
    ['Resolved Spaces', names(co.ResolvedSpaceIDs)],
    ['Released Spaces', names(co.ReleasedSpaceIDs)],
    ['Skipped Units', Object.entries(co.SkippedUnits ?? {}).map(([id, why]) => `${units.get(id) ?? id} (${why})`).join('; ') || '-'],
  ];
  if (co.AbortedReason) rows.push(['Aborted Reason', co.AbortedReason]);
  if (failure) {
    rows.push([
      'Promotion Failure',
      `${failure.FailedAt} by ${failure.UserID}${failure.Stage ? ` into ${failure.Stage}` : ''}: ${failure.Spaces.map((s: any) => `${s.SpaceSlug} ${s.Action}${s.Error ? ` (${s.Error})` : ''}`).join('; ')}`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n');
}

/** `cub variant promote --change-order`: refusals read like the spec's, other failures per Space. */
async function promoteChangeOrder(a: Args, c: Client, co: string, space: string | undefined): Promise<void> {
  const body = {
    ChangeOrderID: co,
    TargetStage: flag(a, 'target-stage'),
    Space: space,
    WhereSpace: flag(a, 'where-space'),
    DryRun: bool(a, 'dry-run') || undefined,
    PriorRevisions: flag(a, 'prior-revisions'),
    Force: bool(a, 'force') || undefined,
    ForceReason: flag(a, 'force-reason'),
  };
  if (flag(a, 'tag') !== undefined) throw new UsageError("--tag is refused with --change-order: the change order's own tags mark what it promotes");
  if (bool(a, 'protect')) throw new UsageError('--protect is refused here: promoting a change order along the clone lineage or over MergeUnits links is a merge, which protection holds paths against');
  let r;
  try {
    r = await c.post('/promote', body);
  } catch (e) {
    if (e instanceof ApiError && e.status === 409 && e.message.startsWith('unable to promote')) {
      process.stderr.write(`Failed: ${e.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw e;
  }
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(r.body, format);
  if (format === 'mutations') return printUnitResults(r.body.Spaces.flatMap((s: any) => s.Units.map((u: any) => ({ ...u, UnitSlug: `${s.SpaceSlug}/${u.UnitSlug}` }))), 'mutations');
  if (r.body.Message && !r.body.Spaces.length) {
    process.stdout.write(`${r.body.Message}\n`);
    return;
  }
  process.stdout.write(`${r.body.DryRun ? 'Would promote' : 'Promoted'} change order into ${r.body.Stage ? `stage '${r.body.Stage}'` : 'the named spaces'}: ${r.body.Landed} of ${r.body.Total} space(s)${r.body.Forced ? ' (forced past failing gates)' : ''}\n`);
  print(
    r.body.Spaces.flatMap((s: any) => (s.Units.length ? s.Units.map((u: any) => ({ s, u })) : [{ s, u: undefined }])),
    'table',
    [
      ['Space', (x) => x.s.SpaceSlug],
      ['SpaceAction', (x) => x.s.Action],
      ['Unit', (x) => x.u?.UnitSlug ?? ''],
      ['Action', (x) => x.u?.Action ?? ''],
      ['Reason', (x) => x.u?.Reason ?? ''],
      ['Revisions', (x) => (x.u?.RevisionNums ?? []).join(',')],
      ['Error', (x) => x.u?.Error?.Message ?? (x.u ? '' : (x.s.Error ?? ''))],
    ],
  );
  if (r.status === 207) {
    process.stderr.write(`Failed: ${r.body.Message}\n`);
    process.exitCode = 1;
  }
}

/** Per-unit results of an upgrade, clone or promotion: a table, the values that change (`-o mutations`), or JSON/YAML. */
function printUnitResults(results: any[], format: string | undefined): void {
  if (format === 'json' || format === 'yaml') return print(results, format);
  if (format === 'mutations') {
    for (const r of results) {
      if (!r.Changes?.length && !r.Conflicts?.length) continue;
      process.stdout.write(`${r.UnitSlug}:\n`);
      if (r.Changes?.length) process.stdout.write(table(r.Changes, COLUMNS.change!).replace(/^/gm, '  '));
      for (const k of r.Conflicts ?? []) process.stdout.write(`  conflict (protected, kept): ${k.Resource} ${k.Path} upstream=${JSON.stringify(k.UpstreamValue)} downstream=${JSON.stringify(k.DownstreamValue)}\n`);
    }
    return;
  }
  print(results, 'table', [
    ['Unit', (x) => x.UnitSlug],
    ['Action', (x) => x.Action],
    ['Revisions', (x) => (x.RevisionNums ?? []).join(',')],
    ['Conflicts', (x) => (x.Conflicts?.length ? x.Conflicts.length : '')],
    ['Error', (x) => x.Error?.Message ?? ''],
  ]);
}

async function invoke(a: Args, c: Client, mutating: boolean): Promise<void> {
  const verb = mutating ? 'set' : 'get';
  const usage = `cub function ${verb} --space <space> [--unit U] [--where W]${mutating ? ' [--change-desc D] [--protect]' : ''} [--] <function> <args…>`;
  const words = a.rest ?? a.positional;
  const [name, ...args] = a.rest ? [...a.positional, ...a.rest] : words;
  if (!name) throw new UsageError(`name a function: ${usage}`);
  const space = need(a, 'space', usage);
  const units = flags(a, 'unit').flatMap((u) => u.split(','));
  const r = await c.post(`/space/${seg(space)}/function/invoke`, {
    FunctionName: name,
    Arguments: args,
    ...(units.length ? { UnitIDs: units } : {}),
    Where: flag(a, 'where'),
    ChangeDescription: flag(a, 'change-desc'),
    Protect: bool(a, 'protect') || undefined,
    ChangeSetID: flag(a, 'changeset'),
    DryRun: bool(a, 'dry-run') || undefined,
  });
  const results = r.body.Results as any[];
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(r.body, format);
  if (format === 'mutations') {
    for (const res of results) {
      process.stdout.write(`${res.UnitSlug}:\n`);
      process.stdout.write(table(res.Changes ?? [], COLUMNS.change!).replace(/^/gm, '  '));
    }
    return;
  }
  if (!mutating) {
    const rows = results.flatMap((res) => (Array.isArray(res.Output) ? res.Output.map((o: any) => ({ Unit: res.UnitSlug, ...o })) : [{ Unit: res.UnitSlug, Output: res.Output }]));
    if (name === 'get-placeholders' && rows.length === 0) {
      process.stdout.write('No placeholders left\n');
      return;
    }
    print(rows, 'table', Array.isArray(results[0]?.Output) ? [['Unit', (x) => x.Unit], ['Resource', (x) => x.Resource], ['Path', (x) => x.Path]] : [['Unit', (x) => x.Unit], ['Output', (x) => JSON.stringify(x.Output)]]);
    return;
  }
  print(results, 'table', [['Unit', (x) => x.UnitSlug], ['Changed', (x) => x.Changed], ['Revision', (x) => x.RevisionNum ?? ''], ['Error', (x) => x.Error?.Message ?? '']]);
  if (r.status === 207) process.exitCode = 1;
}

const HELP = `cub — the Baton command line

  cub <entity> <verb> [args] [flags]

entities and verbs:
${Object.entries(COMMANDS)
  .map(([e, verbs]) => `  ${e.padEnd(15)} ${Object.keys(verbs).join(', ')}`)
  .join('\n')}

flags everywhere: --server URL, --token T (or CUB_SERVER, CUB_TOKEN, or the context file npm start writes),
                  -o table|json|yaml
`;

export async function main(argv: string[]): Promise<number> {
  try {
    const [entity, verb, ...rest] = argv;
    if (!entity || entity === 'help' || entity === '--help' || entity === '-h') {
      process.stdout.write(HELP);
      return 0;
    }
    const verbs = COMMANDS[entity];
    if (!verbs) throw new UsageError(`unknown command '${entity}'; one of ${Object.keys(COMMANDS).join(', ')}`);
    const cmd = verb ? verbs[verb] : undefined;
    if (!cmd) throw new UsageError(`cub ${entity} takes one of: ${Object.keys(verbs).join(', ')}`);
    const a = parseArgs(rest);
    await cmd(a, new Client(connection(a)));
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof ApiError) {
      process.stderr.write(`Failed: ${e.status ? `HTTP ${e.status}: ` : ''}${e.message}\n`);
      return 1;
    }
    if (e instanceof UsageError) {
      process.stderr.write(`Usage: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

import { bool, flag, flags, need, pairs, UsageError } from '../args.ts';
import { seg } from '../client.ts';
import { print } from '../output.ts';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { type Command, COLUMNS, out, locate, readInput, list, printUnitResults } from '../common.ts';
import { promoteChangeOrder } from './changes.ts';

/** Links and variants (upload, create, promote). */
export const variantsCommands: Record<string, Record<string, Command>> = {
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
};

import { flag, flags, need, pairs, UsageError, type Args } from './args.ts';
import { Client, seg } from './client.ts';
import { print, table, type Column } from './output.ts';
import { readFileSync } from 'node:fs';

/** One `cub <entity> <verb>`. */
export type Command = (a: Args, c: Client) => Promise<void>;

const labelsCol: Column = ['Labels', (r) => r.Labels];
export const COLUMNS: Record<string, Column[]> = {
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

export const out = (a: Args) => flag(a, 'output');

/** `slug` in `--space`, or `space/slug` anywhere. */
export function locate(a: Args, ref: string | undefined, what: string, usage: string): { space: string; slug: string } {
  if (!ref) throw new UsageError(`name the ${what}: ${usage}`);
  const slash = ref.indexOf('/');
  if (slash > 0) return { space: ref.slice(0, slash), slug: ref.slice(slash + 1) };
  return { space: need(a, 'space', usage), slug: ref };
}

export function readInput(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${path === '-' ? 'standard input' : path}: ${(e as Error).message}`);
  }
}

export function labelsPatch(a: Args): { Labels?: Record<string, string | null>; Annotations?: Record<string, string | null> } {
  const labels: Record<string, string | null> = pairs(a, 'label');
  for (const k of flags(a, 'remove-label')) labels[k] = null;
  const annotations: Record<string, string | null> = pairs(a, 'annotation');
  for (const k of flags(a, 'remove-annotation')) annotations[k] = null;
  return { ...(Object.keys(labels).length ? { Labels: labels } : {}), ...(Object.keys(annotations).length ? { Annotations: annotations } : {}) };
}

export async function list(c: Client, a: Args, path: string, kind: string): Promise<void> {
  const r = await c.get(path, { where: flag(a, 'where'), filter: flag(a, 'filter'), limit: flag(a, 'limit'), continue: flag(a, 'continue') });
  print(r.body, out(a), COLUMNS[kind]);
  const next = r.headers.get('x-continue');
  if (next && (out(a) ?? 'table') === 'table') process.stderr.write(`more: --continue ${next}\n`);
}

/** The simple Space-resident kinds: create/get/list/delete alike. */
export function spaceKind(kind: 'tag' | 'changeset' | 'filter' | 'target', segment: string): Record<string, Command> {
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

export function printUnitResults(results: any[], format: string | undefined): void {
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

import { flag, flags, need, pairs, UsageError, type Args } from './args.ts';
import { Client, seg } from './client.ts';
import { print, say, table, type Column } from './output.ts';
import { readFileSync } from 'node:fs';
import { inCwd, io } from './io.ts';
import type { StringMap, WithSpaceSlug } from '../lib/model/common.ts';
import type {
  ChangeSet,
  Component,
  Filter,
  Invocation,
  LinkView,
  Release,
  RevisionView,
  Space,
  Tag,
  Target,
  Unit,
} from '../lib/model/entities.ts';
import type { ChangeOrderView, ChangeWorkflow } from '../lib/model/change-orders.ts';
import type { Change, PromotedUnit } from './api.ts';

/** A path-level change as a Mutation or an answer carries it (a Mutation's Op as stored). */
type ChangeRow = Omit<Change, 'Op'> & { Op: string };

/** One `cub <entity> <verb>`. */
export type Command = (a: Args, c: Client) => Promise<void>;

/** What `cub <entity> <verb> --help` says: a line, its arguments (commander syntax) and the flags it reads, and an example. */
export interface Help {
  summary: string;
  args?: [name: string, help: string][];
  /** Names in FLAGS (cli/flags.ts), or [name, what it means here]; the global flags are added to every verb. */
  flags?: (string | [name: string, help: string, value?: string])[];
  example: string;
}

/** The help of every verb of some entities. */
export type HelpTable = Record<string, Record<string, Help>>;

const LISTING = ['where', 'filter', 'limit', 'continue'];
/** Help for a list in a Space (or everywhere); `example` is what follows `cub <entity> list`. */
export const listHelp = (what: string, entity: string, example: string, inSpace = true): Help => ({
  summary: `List ${what}`,
  flags: inSpace ? ['space', ...LISTING] : LISTING,
  example: `cub ${entity} list ${example}`,
});
/** Help for get/delete of a Space-resident kind named `space/slug` or `--space` + slug; `example` is what follows the verb. */
export const refHelp = (verb: string, what: string, entity: string, example: string, more: string[] = []): Help => ({
  summary: `${verb[0]!.toUpperCase()}${verb.slice(1)} a ${what}`,
  args: [[`[${entity}]`, `the ${what}: <slug> with --space, or <space>/<slug>`]],
  flags: ['space', ...more],
  example: `cub ${entity} ${verb} ${example}`,
});

/** Columns of a table of `R`s. */
const cols = <R>(...c: Column<R>[]): Column<R>[] => c;
const labelsCol: Column<{ Labels: StringMap }> = ['Labels', (r) => r.Labels];

export const COLUMNS = {
  space: cols<Space>(['Name', (r) => r.Slug], labelsCol, ['Version', (r) => r.Version], ['ID', (r) => r.SpaceID]),
  component: cols<Component>(['Name', (r) => r.Slug], ['ID', (r) => r.ComponentID]),
  unit: cols<WithSpaceSlug<Unit>>(
    ['Name', (r) => r.Slug],
    ['Space', (r) => r.SpaceSlug],
    ['Head', (r) => r.HeadRevisionNum],
    ['Upstream', (r) => (r.UpstreamUnitID ? r.UpstreamRevisionNum : '')],
    ['Released', (r) => r.LastReleasedRevisionNum],
    ['Toolchain', (r) => r.ToolchainType],
    ['Change', (r) => r.LastChangeDescription],
  ),
  revision: cols<RevisionView>(
    ['Num', (r) => r.RevisionNum],
    ['Source', (r) => r.Source],
    ['Description', (r) => r.Description],
    ['Created', (r) => r.CreatedAt],
    ['Hash', (r) => r.DataHash.slice(0, 12)],
  ),
  tag: cols<WithSpaceSlug<Tag>>(['Name', (r) => r.Slug], ['Space', (r) => r.SpaceSlug], ['ID', (r) => r.TagID]),
  changeset: cols<ChangeSet>(
    ['Name', (r) => r.Slug],
    ['State', (r) => r.State],
    ['Description', (r) => r.Description],
    ['ID', (r) => r.ChangeSetID],
  ),
  filter: cols<Filter>(['Name', (r) => r.Slug], ['From', (r) => r.From], ['Where', (r) => r.Where]),
  invocation: cols<Invocation>(
    ['Name', (r) => r.Slug],
    ['Toolchain', (r) => r.ToolchainType],
    [
      'Calls',
      (r) =>
        r.FunctionInvocations.map(
          (f) =>
            `${f.FunctionName} ${f.Arguments.map((x) => `--${x.ParameterName}=${x.Evaluator === 'template' ? `template:${x.Value}` : x.Value}`).join(' ')}`,
        ).join('; '),
    ],
    [
      'Parameters',
      (r) => r.Parameters.map((p) => `${p.ParameterName}:${p.DataType}${p.Required ? ':required' : ''}`).join(', '),
    ],
  ),
  target: cols<WithSpaceSlug<Target>>(
    ['Name', (r) => r.Slug],
    ['Space', (r) => r.SpaceSlug],
    ['Facts', (r) => r.Facts],
    ['Deployed By', (r) => r.DeployObject ?? '-'],
    ['ID', (r) => r.TargetID],
  ),
  link: cols<LinkView & { FromUnitSlug?: string; ToUnitRef?: string }>(
    ['Name', (r) => r.Slug],
    ['Type', (r) => r.UpdateType],
    ['From', (r) => r.FromUnitSlug ?? r.FromUnitID],
    ['To', (r) => r.ToUnitRef ?? r.ToUnitID],
    ['Merged', (r) => `${r.UpstreamLastMergedRevisionNum}→${r.DownstreamLastMergedRevisionNum}`],
    ['Stale', (r) => r.Stale],
  ),
  release: cols<WithSpaceSlug<Release>>(
    ['Num', (r) => r.ReleaseNum],
    ['Space', (r) => r.SpaceSlug],
    ['Published', (r) => r.Published],
    ['Units', (r) => r.UnitCount],
    ['Sync', (r) => r.LiveStatus?.Sync ?? ''],
    ['Health', (r) => r.LiveStatus?.Health ?? ''],
    ['Operation', (r) => r.LiveStatus?.Operation ?? ''],
    ['Digest', (r) => r.Digest.slice(0, 12)],
  ),
  changeworkflow: cols<ChangeWorkflow>(
    ['Name', (r) => r.Slug],
    ['Stages', (r) => r.Stages.map((s) => s.Name).join(' → ')],
    ['Final', (r) => (r.Final?.Prerequisites ?? []).join(',')],
  ),
  changeorder: cols<WithSpaceSlug<ChangeOrderView>>(
    ['Name', (r) => r.Slug],
    ['Space', (r) => r.SpaceSlug],
    ['State', (r) => r.State],
    ['Stage', (r) => r.Stage ?? ''],
    ['Completed', (r) => r.Completed],
    ['Description', (r) => r.Description ?? ''],
  ),
  change: cols<ChangeRow>(
    ['Resource', (r) => r.Resource],
    ['Path', (r) => r.Path],
    ['Op', (r) => r.Op],
    ['Value', (r) => (r.Value === undefined ? '' : JSON.stringify(r.Value))],
  ),
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
    return path === '-' ? io().stdin() : readFileSync(inCwd(path), 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${path === '-' ? 'standard input' : path}: ${(e as Error).message}`);
  }
}

export function labelsPatch(a: Args): {
  Labels?: Record<string, string | null>;
  Annotations?: Record<string, string | null>;
} {
  const labels: Record<string, string | null> = pairs(a, 'label');
  for (const k of flags(a, 'remove-label')) labels[k] = null;
  const annotations: Record<string, string | null> = pairs(a, 'annotation');
  for (const k of flags(a, 'remove-annotation')) annotations[k] = null;
  return {
    ...(Object.keys(labels).length ? { Labels: labels } : {}),
    ...(Object.keys(annotations).length ? { Annotations: annotations } : {}),
  };
}

export async function list<R>(c: Client, a: Args, path: string, columns: Column<R>[]): Promise<void> {
  const r = await c.get<R[]>(path, {
    where: flag(a, 'where'),
    filter: flag(a, 'filter'),
    limit: flag(a, 'limit'),
    continue: flag(a, 'continue'),
  });
  print(r.body, out(a), columns);
  const next = r.headers.get('x-continue');
  if (next && (out(a) ?? 'table') === 'table') process.stderr.write(`more: --continue ${next}\n`);
}

/** Links for a table: each end by name (`unit`, `space/unit`), the Units of each Space read once. */
export async function namedLinks(
  c: Client,
  links: LinkView[],
): Promise<(LinkView & { FromUnitSlug?: string; ToUnitRef?: string })[]> {
  const spaces = new Map((await c.get<Space[]>('/space')).body.map((s) => [s.SpaceID, s.Slug]));
  const units = new Map<string, string>();
  for (const id of new Set(links.flatMap((l) => [l.SpaceID, l.ToSpaceID]))) {
    if (!spaces.has(id)) continue;
    for (const u of (await c.get<Unit[]>(`/space/${seg(id)}/unit`)).body) units.set(u.UnitID, u.Slug);
  }
  return links.map((l) => ({
    ...l,
    FromUnitSlug: units.get(l.FromUnitID),
    ToUnitRef: units.has(l.ToUnitID) ? `${spaces.get(l.ToSpaceID)}/${units.get(l.ToUnitID)}` : undefined,
  }));
}

/** Users by ID → their names, read once for a table (empty when the caller may not list users). */
export async function userNames(c: Client): Promise<Map<string, string>> {
  try {
    return new Map((await c.get<{ UserID: string; Slug: string }[]>('/user')).body.map((u) => [u.UserID, u.Slug]));
  } catch {
    return new Map();
  }
}

/** The simple Space-resident kinds: create/get/list/delete alike. */
export function spaceKind<K extends 'tag' | 'changeset' | 'filter' | 'target' | 'invocation'>(
  kind: K,
  segment: string,
): Record<string, Command> {
  const columns: Column<never>[] = COLUMNS[kind];
  const usage = `cub ${kind} get --space <space> <${kind}>`;
  return {
    list: (a, c) =>
      list(c, a, `/space/${seg(need(a, 'space', `cub ${kind} list --space <space>`))}/${segment}`, columns),
    get: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], kind, usage);
      print((await c.get<never>(`/space/${seg(space)}/${segment}/${seg(slug)}`)).body, out(a), columns);
    },
    delete: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], kind, `cub ${kind} delete --space <space> <${kind}>`);
      await c.delete(`/space/${seg(space)}/${segment}/${seg(slug)}`);
      say(out(a), `Deleted ${kind} ${slug}`, { Deleted: kind, Space: space, Slug: slug }, slug);
    },
  };
}

export function printUnitResults(results: PromotedUnit[], format: string | undefined): void {
  if (format === 'json' || format === 'yaml') return print(results, format);
  if (format === 'mutations') {
    for (const r of results) {
      if (!r.Changes?.length && !r.Conflicts?.length) continue;
      process.stdout.write(`${r.UnitSlug}:\n`);
      if (r.Changes?.length) process.stdout.write(table(r.Changes, COLUMNS.change).replace(/^/gm, '  '));
      for (const k of r.Conflicts ?? [])
        process.stdout.write(
          `  conflict (protected, kept): ${k.Resource} ${k.Path} upstream=${JSON.stringify(k.UpstreamValue)} downstream=${JSON.stringify(k.DownstreamValue)}\n`,
        );
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

import { bool, flag, flags, need, UsageError, type Args } from '../args.ts';
import { Client, seg } from '../client.ts';
import { print, say, table } from '../output.ts';
import type { InvokeAnswer } from '../api.ts';
import { withProgress } from '../progress.ts';
import { type Command, type HelpTable, COLUMNS, out } from '../common.ts';

/** Functions: reading or changing Units by running one on them. */
export const functionsCommands: Record<string, Record<string, Command>> = {
  function: {
    set: (a, c) => invoke(a, c, true),
    get: (a, c) => invoke(a, c, false),
    list: async (a, c) => {
      const names = (await c.get<string[]>('/function')).body;
      say(out(a), names.join('\n'), names, names.join('\n'));
    },
  },
};

async function invoke(a: Args, c: Client, mutating: boolean): Promise<void> {
  const verb = mutating ? 'set' : 'get';
  const usage = `cub function ${verb} --space <space> [--unit U] [--where W]${mutating ? ' [--change-desc D] [--protect]' : ''} [--] <function> <args…>`;
  const [name, ...args] = a.positional;
  if (!name) throw new UsageError(`name a function: ${usage}`);
  const space = need(a, 'space', usage);
  const units = flags(a, 'unit').flatMap((u) => u.split(','));
  const r = await withProgress(
    `${name} on ${units.length ? units.join(', ') : space}`,
    c.post<InvokeAnswer>(`/space/${seg(space)}/function/invoke`, {
      FunctionName: name,
      Arguments: args,
      ...(units.length ? { UnitIDs: units } : {}),
      Where: flag(a, 'where'),
      ChangeDescription: flag(a, 'change-desc'),
      Protect: bool(a, 'protect') || undefined,
      ChangeSetID: flag(a, 'changeset'),
      DryRun: bool(a, 'dry-run') || undefined,
    }),
  );

  const results = r.body.Results;
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(r.body, format);
  if (format === 'mutations') {
    for (const res of results) {
      process.stdout.write(`${res.UnitSlug}:\n`);
      process.stdout.write(table(res.Changes ?? [], COLUMNS.change).replace(/^/gm, '  '));
    }
    return;
  }
  if (!mutating) {
    const rows = results.flatMap((res) =>
      Array.isArray(res.Output)
        ? res.Output.map((o: { Resource?: string; Path?: string }) => ({
            Unit: res.UnitSlug,
            Output: undefined as unknown,
            ...o,
          }))
        : [{ Unit: res.UnitSlug, Output: res.Output }],
    );
    if (name === 'get-placeholders' && rows.length === 0) {
      process.stdout.write('No placeholders left\n');
      return;
    }
    print(
      rows,
      'table',
      Array.isArray(results[0]?.Output)
        ? [
            ['Unit', (x) => x.Unit],
            ['Resource', (x) => x.Resource],
            ['Path', (x) => x.Path],
          ]
        : [
            ['Unit', (x) => x.Unit],
            ['Output', (x) => JSON.stringify(x.Output)],
          ],
    );
    return;
  }
  print(results, 'table', [
    ['Unit', (x) => x.UnitSlug],
    ['Changed', (x) => x.Changed],
    ['Revision', (x) => x.RevisionNum ?? ''],
    ['Error', (x) => x.Error?.Message ?? ''],
  ]);
  if (r.status === 207) process.exitCode = 1;
}

const INVOKE = ['space', 'unit', 'where', 'changeset', 'dry-run'];

export const functionsHelp: HelpTable = {
  function: {
    set: {
      summary: 'Change Units by running a function on them (one revision per changed Unit)',
      args: [['[function-and-args...]', 'the function and its arguments (after -- if any start with -)']],
      flags: [...INVOKE, 'change-desc', 'protect'],
      example:
        "cub function set --space acme-base --unit deployment --change-desc 'Release v453: bump the image tag' -- set-image-reference-by-uri ghcr.io/acme/acme :v453",
    },
    get: {
      summary: 'Read Units through a function (nothing is written)',
      args: [['[function-and-args...]', 'the function and its arguments (after -- if any start with -)']],
      flags: INVOKE,
      example: 'cub function get --space acme-base --unit deployment get-placeholders',
    },
    list: { summary: 'The functions there are', example: 'cub function list' },
  },
};

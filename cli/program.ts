import { Command as Cmd, Option } from 'commander';
import { UsageError, type Args } from './args.ts';
import { Client, connection } from './client.ts';
import type { Command, Help, HelpTable } from './common.ts';
import { FLAGS, GLOBAL, UNSUPPORTED } from './flags.ts';
import { setQuiet } from './output.ts';
import { changesCommands, changesHelp } from './commands/changes.ts';
import { holdsCommands, holdsHelp } from './commands/holds.ts';
import { windowsCommands, windowsHelp } from './commands/windows.ts';
import { reportsCommands, reportsHelp } from './commands/reports.ts';
import { notificationsCommands, notificationsHelp } from './commands/notifications.ts';
import { rolloutCommands, rolloutHelp } from './commands/rollout.ts';
import { releasesCommands, releasesHelp } from './commands/releases.ts';
import { spacesCommands, spacesHelp } from './commands/spaces.ts';
import { unitsCommands, unitsHelp } from './commands/units.ts';
import { functionsCommands, functionsHelp } from './commands/functions.ts';
import { variantsCommands, variantsHelp } from './commands/variants.ts';
import { contextCommands, contextHelp } from './commands/contexts.ts';
import { peopleCommands, peopleHelp } from './commands/people.ts';
import { attestationsCommands, attestationsHelp } from './commands/attestations.ts';

/** Every `cub <entity> <verb>`, in the order help lists them, with what the entity is. */
const ENTITIES: [entity: string, what: string, commands: Record<string, Record<string, Command>>, help: HelpTable][] = [
  ['space', 'Spaces: where Units live (one per variant)', spacesCommands, spacesHelp],
  ['component', 'Components: one application across its variants', spacesCommands, spacesHelp],
  ['unit', 'Units: one configuration each, with revisions', unitsCommands, unitsHelp],
  ['revision', 'Revisions of Units', unitsCommands, unitsHelp],
  ['mutation', 'The paths each revision changed', unitsCommands, unitsHelp],
  ['function', 'Functions that read or change Units', functionsCommands, functionsHelp],
  ['changeset', 'ChangeSets: a change over several revisions', spacesCommands, spacesHelp],
  ['link', 'Links: where a Unit takes its changes from', variantsCommands, variantsHelp],
  ['variant', 'Variants: a Space per environment, cloned from its upstream', variantsCommands, variantsHelp],
  ['release', 'Releases and their live status', releasesCommands, releasesHelp],
  ['changeworkflow', 'ChangeWorkflows: the Stages of a rollout', changesCommands, changesHelp],
  ['job', 'Jobs: long promotions, approvals and demotes, followed to their end', holdsCommands, holdsHelp],
  ['hold', 'Holds: stop promotions (or publishes) until lifted or expired', holdsCommands, holdsHelp],
  ['window', 'Deploy windows: when promotions may go (or, freezes, may not)', windowsCommands, windowsHelp],
  [
    'changeorder',
    'ChangeOrders: one change carried through the Stages',
    { changeorder: { ...changesCommands.changeorder, ...rolloutCommands.changeorder, ...windowsCommands.changeorder } },
    { changeorder: { ...changesHelp.changeorder, ...rolloutHelp.changeorder, ...windowsHelp.changeorder } },
  ],
  ['report', 'Reports: how the organization delivers (DORA figures)', reportsCommands, reportsHelp],
  [
    'notification',
    'Notifications: webhooks told of rollouts (Slack and others)',
    notificationsCommands,
    notificationsHelp,
  ],
  ['tag', 'Tags: names for revisions', spacesCommands, spacesHelp],
  ['filter', 'Filters: saved where expressions', spacesCommands, spacesHelp],
  ['target', 'Targets: where Releases deploy', spacesCommands, spacesHelp],
  ['invocation', 'Invocations: saved operations a ChangeOrder runs in each Space', spacesCommands, spacesHelp],
  ['attestation', 'Attestations: approvals and other records about revisions', attestationsCommands, attestationsHelp],
  ['user', 'Users of the organization, with a role', peopleCommands, peopleHelp],
  ['group', 'Groups of users', peopleCommands, peopleHelp],
  ['token', 'Bearer tokens: yours, and service tokens for deploy tools', peopleCommands, peopleHelp],
  ['context', 'Saved contexts: a server and a token each', contextCommands, contextHelp],
];

/** Each entity and what it is, in the order help lists them. */
export const ENTITY_HELP: [entity: string, what: string][] = ENTITIES.map(([entity, what]) => [entity, what]);

/** Each entity's verbs, with their help. */
export const VERBS: Record<string, Record<string, Help & { run: Command }>> = Object.fromEntries(
  ENTITIES.map(([entity, , commands, help]) => [
    entity,
    Object.fromEntries(
      Object.entries(commands[entity]!).map(([verb, run]) => {
        const h = help[entity]?.[verb];
        if (!h) throw new Error(`cub ${entity} ${verb} has no help`);
        return [verb, { ...h, run }];
      }),
    ),
  ]),
);

/** A flag as commander parses it: switches are true, values collect (the last one is the flag's value). */
function option(spec: string | [string, string, string?]): Option {
  const [name, help, value] = typeof spec === 'string' ? [spec] : spec;
  const f = FLAGS[name];
  if (!f) throw new Error(`no flag --${name} in cli/flags.ts`);
  const v = value ?? f.value;
  const o = new Option(`${f.short ? `-${f.short}, ` : ''}--${name}${v ? ` ${v}` : ''}`, help ?? f.help);
  if (v) o.argParser((x: string, prev: string[] | undefined) => [...(prev ?? []), x]);
  if (f.hidden) o.hideHelp();
  return o;
}

/** The parsed command line in the shape the commands read. */
function toArgs(cmd: Cmd): Args {
  const flags = new Map<string, string[]>();
  for (const [key, v] of Object.entries(cmd.opts())) {
    const name = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (UNSUPPORTED[name]) throw new UsageError(UNSUPPORTED[name]);
    flags.set(name, Array.isArray(v) ? v.map(String) : [String(v)]);
  }
  const positional = (cmd.processedArgs as unknown[]).flat().filter((x): x is string => typeof x === 'string');
  return { positional, flags };
}

/**
 * The `cub` program: one commander command per entity and verb. Commander parses, prints help
 * (`-h`/`--help` anywhere prints usage and runs nothing), refuses unknown flags with the nearest one,
 * and names missing arguments; the action runs the verb over the API.
 */
export function program(version: string, write: { out: (s: string) => void; err: (s: string) => void }): Cmd {
  const root = new Cmd('cub')
    .description('cub — the Baton command line: carry one change through every stage of a rollout')
    .usage('<entity> <verb> [args] [flags]')
    .version(`cub ${version}`, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'print usage; runs nothing')
    .helpCommand('help [entity]', 'print the usage of an entity')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: write.out,
      writeErr: write.err,
      outputError: (s, w) =>
        w(
          `Usage: ${s
            .replace(/^error: /, '')
            .replace(/\n\((.*)\)\n?$/, '; $1')
            .trimEnd()}\n`,
        ),
    });
  root.addHelpText(
    'after',
    `\nflags everywhere: --server URL, --token T, --context NAME, -o table|json|yaml, -q (or CUB_SERVER, CUB_TOKEN, the context in use)\ncompletion:       cub completion bash|zsh|fish\nEach verb: cub <entity> <verb> --help`,
  );
  for (const [entity, what] of ENTITIES) {
    const verbs = VERBS[entity]!;
    const e = root
      .command(entity)
      .description(`${what} (${Object.keys(verbs).join(', ')})`)
      .usage('<verb> [args] [flags]');
    e.helpCommand(false);
    for (const [verb, h] of Object.entries(verbs)) {
      const c = e.command(verb).description(h.summary);
      for (const [name, help] of h.args ?? []) c.argument(name, help);
      for (const f of [...(h.flags ?? []), ...GLOBAL]) c.addOption(option(f));
      c.addHelpText('after', `\nExample:\n  ${h.example}`);
      c.action(async () => {
        const a = toArgs(c);
        setQuiet(a.flags.has('quiet'));
        await h.run(a, new Client(connection(a)));
      });
    }
  }
  return root;
}

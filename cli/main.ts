import { bool, parseArgs, UsageError } from './args.ts';
import { ApiError, Client, connection } from './client.ts';
import type { Command } from './common.ts';
import { setQuiet } from './output.ts';
import { changesCommands } from './commands/changes.ts';
import { releasesCommands } from './commands/releases.ts';
import { spacesCommands } from './commands/spaces.ts';
import { unitsCommands } from './commands/units.ts';
import { variantsCommands } from './commands/variants.ts';
import { contextCommands } from './commands/contexts.ts';
import { complete, COMPLETION_SCRIPTS } from './completion.ts';

/** The version of the package the bundle was built from (esbuild defines it). */
declare const CUB_VERSION: string;

/** Every `cub <entity> <verb>`, in the order help lists them. */
const COMMANDS: Record<string, Record<string, Command>> = {
  space: spacesCommands.space!,
  component: spacesCommands.component!,
  unit: unitsCommands.unit!,
  revision: unitsCommands.revision!,
  mutation: unitsCommands.mutation!,
  function: unitsCommands.function!,
  changeset: spacesCommands.changeset!,
  link: variantsCommands.link!,
  variant: variantsCommands.variant!,
  release: releasesCommands.release!,
  changeworkflow: changesCommands.changeworkflow!,
  changeorder: changesCommands.changeorder!,
  tag: spacesCommands.tag!,
  filter: spacesCommands.filter!,
  target: spacesCommands.target!,
  context: contextCommands.context!,
};

const HELP = `cub — the Baton command line

  cub <entity> <verb> [args] [flags]

entities and verbs:
${Object.entries(COMMANDS)
  .map(([e, verbs]) => `  ${e.padEnd(15)} ${Object.keys(verbs).join(', ')}`)
  .join('\n')}

flags everywhere: --server URL, --token T, --context NAME (or CUB_SERVER, CUB_TOKEN, or the context in use),
                  -o table|json|yaml
completion:       cub completion bash|zsh|fish
`;

export async function main(argv: string[]): Promise<number> {
  try {
    const [entity, verb, ...rest] = argv;
    if (entity === '--version' || entity === 'version') {
      process.stdout.write(`cub ${CUB_VERSION}\n`);
      return 0;
    }
    if (!entity || entity === 'help' || entity === '--help' || entity === '-h') {
      process.stdout.write(HELP);
      return 0;
    }
    if (entity === 'completion') {
      const script = verb ? COMPLETION_SCRIPTS[verb] : undefined;
      if (!script) throw new UsageError(`cub completion <${Object.keys(COMPLETION_SCRIPTS).join('|')}>`);
      process.stdout.write(script);
      return 0;
    }
    if (entity === '__complete') {
      const found = await complete(COMMANDS, Number(verb), rest);
      process.stdout.write(found.length ? `${found.join('\n')}\n` : '');
      return 0;
    }
    const verbs = COMMANDS[entity];
    if (!verbs) throw new UsageError(`unknown command '${entity}'; one of ${Object.keys(COMMANDS).join(', ')}`);
    // Asking about a command never runs it: -h/--help anywhere before `--` only prints what it takes.
    const flagWords = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
    if (flagWords.includes('--help') || flagWords.includes('-h')) {
      process.stdout.write(`cub ${entity} ${verb && verbs[verb] ? verb : `<${Object.keys(verbs).join('|')}>`} [args] [flags]\n\nverbs of ${entity}: ${Object.keys(verbs).join(', ')}\nflags everywhere: --server URL, --token T, -o table|json|yaml; cub help lists every command\n`);
      return 0;
    }
    const cmd = verb ? verbs[verb] : undefined;
    if (!cmd) throw new UsageError(`cub ${entity} takes one of: ${Object.keys(verbs).join(', ')}`);
    const a = parseArgs(rest);
    setQuiet(bool(a, 'quiet'));
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

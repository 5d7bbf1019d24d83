import { CommanderError } from 'commander';
import { UsageError } from './args.ts';
import { ApiError, Detached } from './client.ts';
import { failed, setQuiet } from './output.ts';
import { complete, COMPLETION_SCRIPTS } from './completion.ts';
import { program } from './program.ts';
import { withIo, type Io } from './io.ts';

/** The version of the package the bundle was built from (esbuild defines it). */
declare const CUB_VERSION: string;

/** The flags every verb takes that carry a value (`--server URL`, `-o json`). */
const GLOBAL_WITH_VALUE = new Set(['--server', '--token', '--context', '--output', '-o']);

/**
 * `cub --token T -o json space list` as well as `cub space list --token T -o json`: the flags every
 * verb takes, given before the entity, are moved after the verb, where the verb reads them.
 */
export function hoistGlobalFlags(argv: string[]): string[] {
  const before: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.startsWith('--') ? a.split('=')[0]! : a;
    if (GLOBAL_WITH_VALUE.has(name) && !a.includes('=')) {
      if (i + 1 >= argv.length) break;
      before.push(a, argv[++i]!);
    } else if (GLOBAL_WITH_VALUE.has(name) || /^-o\S+$/.test(a) || a === '-q' || a === '--quiet') before.push(a);
    else break;
  }
  const rest = argv.slice(i);
  // Nothing after them (`cub -o json`), or help asked for: leave the line as it was given.
  if (!before.length || !rest.length || rest[0]!.startsWith('-')) return argv;
  return [...rest, ...before];
}

/** Runs one cub command line; `with_` is the environment, standard input and directory it sees (the process's by default). */
export async function main(argv: string[], with_?: Io): Promise<number> {
  return with_ ? withIo(with_, () => run(argv)) : run(argv);
}

async function run(argv: string[]): Promise<number> {
  setQuiet(false);
  argv = hoistGlobalFlags(argv);
  const write = { out: (s: string) => void process.stdout.write(s), err: (s: string) => void process.stderr.write(s) };
  try {
    const [first, second, ...rest] = argv;
    if (first === 'completion') {
      const script = second ? COMPLETION_SCRIPTS[second] : undefined;
      if (!script || rest.length) throw new UsageError(`cub completion <${Object.keys(COMPLETION_SCRIPTS).join('|')}>`);
      write.out(script);
      return 0;
    }
    if (first === '__complete') {
      const found = await complete(Number(second), rest);
      write.out(found.length ? `${found.join('\n')}\n` : '');
      return 0;
    }
    const cub = program(typeof CUB_VERSION === 'string' ? CUB_VERSION : 'dev', write);
    if (!first) {
      cub.outputHelp();
      return 0;
    }
    await cub.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and --version are answers (0); anything else commander refused is a usage mistake (2), already printed.
      return e.exitCode === 0 ? 0 : 2;
    }
    if (e instanceof Detached) return 0;
    if (e instanceof ApiError) {
      failed(`${e.status ? `HTTP ${e.status}: ` : ''}${e.message}`);
      return 1;
    }
    if (e instanceof UsageError) {
      write.err(`Usage: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

import { CommanderError } from 'commander';
import { UsageError } from './args.ts';
import { ApiError } from './client.ts';
import { failed } from './output.ts';
import { complete, COMPLETION_SCRIPTS } from './completion.ts';
import { program } from './program.ts';

/** The version of the package the bundle was built from (esbuild defines it). */
declare const CUB_VERSION: string;

export async function main(argv: string[]): Promise<number> {
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

import { execFile } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { main } from '../../cli/main.ts';
import { expect } from 'vitest';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));

/** What one `cub` run printed and how it exited. */
export interface CubResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a run writes to standard output and error, while it runs in this process. */
const capture = new AsyncLocalStorage<{ out: string[]; err: string[] }>();
let patched = false;
/** Routes writes made inside a captured run to its buffers; every other write goes where it went. */
function patchStreams(): void {
  if (patched) return;
  patched = true;
  for (const [stream, key] of [
    [process.stdout, 'out'],
    [process.stderr, 'err'],
  ] as const) {
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      const c = capture.getStore();
      if (!c) return write(chunk, ...rest);
      c[key].push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    }) as typeof stream.write;
  }
}
/** One cub run at a time in this process: they share process.exitCode and cub's module state. */
let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `cub` as a user would, against a server, with the token in the environment (in `cwd`, where files it
 * names are): cub's own `main` in this process, its environment, standard input and directory passed in, what
 * it writes captured and its exit status returned — the code the bundle runs, without a process start per
 * command. A test of the built binary itself spawns cli/bin.js.
 */
export function cubAt(server: string, token: string, cwd?: string) {
  return cubIn({ ...process.env, CUB_SERVER: server, CUB_TOKEN: token, CUB_CONTEXT: '/nonexistent' }, cwd);
}

/** `cub` run in this process as cubAt's is, with exactly this environment (a context file, no server or token, …). */
export function cubIn(env: Record<string, string | undefined>, cwd?: string) {
  return (args: string[], input?: string): Promise<CubResult> => {
    const run = queue.then(async () => {
      patchStreams();
      const c = { out: [] as string[], err: [] as string[] };
      process.exitCode = undefined;
      let code: number;
      try {
        code = await capture.run(c, () => main(args, { env, cwd: cwd ?? process.cwd(), stdin: () => input ?? '' }));
      } catch (e) {
        c.err.push(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
        code = 1;
      } finally {
        process.exitCode = undefined;
      }
      return { code, stdout: c.out.join(''), stderr: c.err.join('') };
    });
    queue = run.catch(() => undefined);
    return run;
  };
}

/** Runs one line in bash (`pipefail` on), as a person pastes it into a shell: its output and exit status. */
export function bashLine(line: string, o: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CubResult> {
  return new Promise((resolve) =>
    execFile('bash', ['-o', 'pipefail', '-c', line], { cwd: o.cwd, env: o.env }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

/**
 * Runs `cub` on a terminal (a pseudo-terminal through util-linux `script`), as a person at a shell
 * would: returns everything the terminal showed, standard output and error together.
 */
export function cubOnTerminal(server: string, token: string) {
  const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
  return (args: string[], env: Record<string, string> = {}): Promise<CubResult> =>
    new Promise((resolve) => {
      execFile(
        'script',
        ['-qefc', [process.execPath, BIN, ...args].map(quote).join(' '), '/dev/null'],
        {
          env: {
            ...process.env,
            NO_COLOR: '',
            TERM: 'xterm',
            CUB_SERVER: server,
            CUB_TOKEN: token,
            CUB_CONTEXT: '/nonexistent',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            ...env,
          },
        },
        (err, stdout, stderr) =>
          resolve({
            code: err ? ((err as { code?: number }).code ?? 1) : 0,
            stdout: stdout.replace(/\r\n/g, '\n'),
            stderr,
          }),
      );
    });
}

/** Runs `cub` and expects it to succeed quietly; returns what it printed. */
export function cubOk(cub: (args: string[], input?: string) => Promise<CubResult>) {
  return async (args: string[], input?: string): Promise<string> => {
    const r = await cub(args, input);
    expect(r.stderr, `cub ${args.join(' ')}`).toBe('');
    expect(r.code, `cub ${args.join(' ')}`).toBe(0);
    return r.stdout;
  };
}

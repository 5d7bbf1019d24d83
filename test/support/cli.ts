import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));

/** What one `cub` run printed and how it exited. */
export interface CubResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `cub` as a user would, against a server, with the token in the environment (in `cwd`, where files it names are). */
export function cubAt(server: string, token: string, cwd?: string) {
  return (args: string[], input?: string): Promise<CubResult> =>
    new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, ...args],
        {
          cwd,
          env: {
            ...process.env,
            CUB_SERVER: server,
            CUB_TOKEN: token,
            CUB_CONTEXT: '/nonexistent',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
        },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      if (input !== undefined) child.stdin?.end(input);
      else child.stdin?.end();
    });
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

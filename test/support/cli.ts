import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));

/** What one `cub` run printed and how it exited. */
export interface CubResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `cub` as a user would, against a server, with the token in the environment. */
export function cubAt(server: string, token: string) {
  return (args: string[], input?: string): Promise<CubResult> =>
    new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, ...args],
        { env: { ...process.env, CUB_SERVER: server, CUB_TOKEN: token, CUB_CONTEXT: '/nonexistent', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      if (input !== undefined) child.stdin?.end(input);
      else child.stdin?.end();
    });
}

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * What cub reads from outside its arguments: its environment, standard input and the directory relative
 * paths are in. `main` runs with the process's; a test runs cub in its own process with its own.
 */
export interface Io {
  env: Record<string, string | undefined>;
  cwd: string;
  stdin(): string;
}

/** The process's own. */
export const processIo = (): Io => ({ env: process.env, cwd: process.cwd(), stdin: () => readFileSync(0, 'utf8') });

let current: Io | undefined;

/** The Io of the run in progress. */
export function io(): Io {
  return (current ??= processIo());
}

/** Runs `f` with `with` as the Io. */
export async function withIo<T>(with_: Io, f: () => Promise<T>): Promise<T> {
  const was = current;
  current = with_;
  try {
    return await f();
  } finally {
    current = was;
  }
}

/** A path as given on the command line, against the run's directory. */
export const inCwd = (path: string): string => resolve(io().cwd, path);

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { io } from './io.ts';
import { dirname, join } from 'node:path';
import { UsageError } from './args.ts';

/** Where a server is and who to be there. */
export interface Context {
  server?: string;
  token?: string;
}

/** The context file: named contexts and the one in use. `npm start` writes `default`. */
export interface ContextFile {
  current?: string;
  contexts: Record<string, Context>;
}

/** The context file's path: CUB_CONTEXT, else ~/.config/baton/context.json. */
export function contextPath(): string {
  return io().env.CUB_CONTEXT ?? join(homedir(), '.config', 'baton', 'context.json');
}

/** Reads the context file (none yet: no contexts); a file of the first format, `{server, token}`, is the `default` context. */
export function readContexts(): ContextFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(contextPath(), 'utf8'));
  } catch {
    return { contexts: {} };
  }
  const f = (raw ?? {}) as Partial<ContextFile> & Context;
  if (f.contexts && typeof f.contexts === 'object') return { current: f.current, contexts: f.contexts };
  return f.server || f.token
    ? { current: 'default', contexts: { default: { server: f.server, token: f.token } } }
    : { contexts: {} };
}

/** Writes the context file, readable by its owner only (it holds tokens). */
export function writeContexts(f: ContextFile): void {
  const path = contextPath();
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(f, null, 2) + '\n', { mode: 0o600 });
}

/** A context by name, or the one in use; a name that does not exist is refused. */
export function contextNamed(name: string | undefined): Context {
  const f = readContexts();
  if (name === undefined) return (f.current && f.contexts[f.current]) || {};
  const c = f.contexts[name];
  if (!c)
    throw new UsageError(
      `no context '${name}'; ${Object.keys(f.contexts).length ? `one of ${Object.keys(f.contexts).sort().join(', ')}` : 'make one with cub context set <name> --server URL --token T'}`,
    );
  return c;
}

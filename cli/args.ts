/** A parsed command line, as the commands read it: positional words and flags (repeatable; the last value counts). Commander parses (cli/program.ts). */
export interface Args {
  positional: string[];
  flags: Map<string, string[]>;
}

/** A mistake in how a command was typed: exit 2 with the message. */
export class UsageError extends Error {}

export function flag(a: Args, name: string): string | undefined {
  const v = a.flags.get(name);
  return v?.[v.length - 1];
}

export function flags(a: Args, name: string): string[] {
  return a.flags.get(name) ?? [];
}

export function bool(a: Args, name: string): boolean {
  const v = flag(a, name);
  return v !== undefined && v !== 'false';
}

export function need(a: Args, name: string, usage: string): string {
  const v = flag(a, name);
  if (!v) throw new UsageError(`--${name} is required: ${usage}`);
  return v;
}

/** `k=v` pairs from a repeatable flag. */
export function pairs(a: Args, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of flags(a, name)) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--${name} takes key=value, got '${kv}'`);
    out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

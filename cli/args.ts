/** Flags that take no value. Every other `--flag` takes the next word (or `--flag=value`). */
const BOOLEAN = new Set(['move', 'protect', 'recursive', 'recursive-force', 'dry-run', 'help', 'allow-exists', 'force', 'squash', 'quiet', 'upgrade', 'all', 'apply', 'dismiss', 'from-stdin', 'refresh-spaces']);
const SHORT: Record<string, string> = { o: 'output', h: 'help', q: 'quiet' };

/** Parsed command line: positional words, flags (repeatable), and what followed `--`. */
export interface Args {
  positional: string[];
  flags: Map<string, string[]>;
  rest: string[] | undefined;
}

export function parseArgs(argv: string[]): Args {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  let rest: string[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    let name: string | undefined;
    let value: string | undefined;
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      value = eq > 0 ? a.slice(eq + 1) : undefined;
    } else if (/^-[a-zA-Z]$/.test(a)) {
      name = SHORT[a.slice(1)] ?? a.slice(1);
    }
    if (name === undefined) {
      positional.push(a);
      continue;
    }
    if (value === undefined) {
      if (BOOLEAN.has(name)) value = 'true';
      else {
        const next = argv[i + 1];
        if (next === undefined) throw new UsageError(`--${name} needs a value`);
        value = next;
        i++;
      }
    }
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { positional, flags, rest };
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

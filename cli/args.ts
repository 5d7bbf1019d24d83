/** Flags that take no value. Every other `--flag` takes the next word (or `--flag=value`). */
const BOOLEAN = new Set(['move', 'protect', 'recursive', 'recursive-force', 'dry-run', 'help', 'allow-exists', 'force', 'squash', 'quiet', 'upgrade', 'all', 'apply', 'dismiss', 'from-stdin', 'refresh-spaces']);
const SHORT: Record<string, string> = { o: 'output', h: 'help', q: 'quiet' };

/** Every flag some command reads: anything else is a typo, refused rather than silently ignored. */
export const KNOWN = new Set([
  ...BOOLEAN,
  ...'aborted-reason annotation attestation-prerequisite context attestation-prerequisite-count auto-update change-desc change-order change-workflow changeset changeworkflow component continue description dest-space display-name end-tag environment fact filename filter force-reason from granularity health in-scope-space label limit merge-base merge-end merge-source message namespace new-slug operation output prerequisites prior-revisions region release release-target remove-annotation remove-label reporter restore revert revision server space space-filter space-label space-slug stage stage-prerequisites stage-release-prerequisites stage-where-space sync tag target target-stage to token toolchain unit unit-delete-gate update-type variant where where-field where-space where-space-field'.split(
    ' ',
  ),
]);

/** Flags of the established product's promote that Baton does not have, each refused with what to do instead. */
const UNSUPPORTED: Record<string, string> = {
  clearance: '--clearance is not supported: Baton promotes every Space a Stage selects once its gates hold; name fewer Spaces with --where-space or <space>',
  guard: '--guard is not supported: declare what must hold before a Stage as its Prerequisites (built-in or cel:) in the ChangeWorkflow',
  subgroup: '--subgroup is not supported: promote part of a Stage by naming its Spaces with --where-space or <space>',
};

/** The known flag nearest a typo, by edit distance, if it is near enough to be a likely meaning. */
function nearest(name: string): string | undefined {
  const dist = (a: string, b: string) => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) d[0]![j] = j;
    for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    return d[a.length]![b.length]!;
  };
  let best: string | undefined;
  let bestD = 3;
  for (const k of KNOWN) {
    const dd = dist(name, k);
    if (dd < bestD) [best, bestD] = [k, dd];
  }
  return best;
}

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
    if (UNSUPPORTED[name]) throw new UsageError(UNSUPPORTED[name]);
    if (!KNOWN.has(name)) {
      const near = nearest(name);
      throw new UsageError(`unknown flag --${name}${near ? `; did you mean --${near}?` : ''}`);
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

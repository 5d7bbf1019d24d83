import { io } from './io.ts';
import { stringify } from 'yaml';
import { UsageError } from './args.ts';

/** A column of a table of `R`s: header and how to read it. */
export type Column<R> = [string, (row: R) => unknown];

function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    return entries.map(([k, x]) => `${k}=${String(x)}`).join(',');
  }
  return String(v);
}

/** Whether to colour what goes to `stream`: only a terminal, and never when NO_COLOR is set (no-color.org) or TERM is dumb. */
export function colours(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = io().env): boolean {
  return !!stream.isTTY && !env.NO_COLOR && env.TERM !== 'dumb';
}

const paint = (on: boolean, code: string, s: string) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

/** Renders rows as aligned columns; the header is bold on a colour terminal. */
export function table<R>(rows: readonly R[], columns: Column<R>[], bold = colours(process.stdout)): string {
  const grid = [columns.map(([h]) => h.toUpperCase()), ...rows.map((r) => columns.map(([, f]) => cell(f(r))))];
  const widths = columns.map((_, i) => Math.max(...grid.map((g) => g[i]!.length)));
  const lines = grid.map((g) =>
    g
      .map((c, i) => (i === g.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  return [paint(bold, '1', lines[0]!), ...lines.slice(1)].join('\n') + '\n';
}

/** A failure on standard error (`Failed: …`, red on a colour terminal). */
export function failed(
  message: string,
  stream: { isTTY?: boolean; write(s: string): unknown } = process.stderr,
  env?: Record<string, string | undefined>,
): void {
  stream.write(`${paint(colours(stream, env), '31', 'Failed:')} ${message}\n`);
}

let quiet = false;

const isList = <R>(v: R | readonly R[]): v is readonly R[] => Array.isArray(v);

/** `--quiet`/`-q`: tables print only each row's name (its first column), one a line, for pipelines. */
export function setQuiet(on: boolean): void {
  quiet = on;
}

/** Whether `-q` is in force: a verb that writes its own sentence prints only its name or id then. */
export function isQuiet(): boolean {
  return quiet;
}

/** Prints a value per `-o`: table (default), json or yaml. */
export function print<R>(value: R | readonly R[], format: string | undefined, columns?: Column<R>[]): void {
  if (quiet && (format ?? 'table') === 'table') {
    const rows: readonly R[] = isList(value) ? value : [value];
    const name = columns?.[0]?.[1] ?? ((r: R) => (r as { Slug?: string } | undefined)?.Slug ?? '');
    process.stdout.write(
      rows
        .map((r) => cell(name(r)))
        .filter(Boolean)
        .map((n) => `${n}\n`)
        .join(''),
    );
    return;
  }
  switch (format ?? 'table') {
    case 'json':
      process.stdout.write(JSON.stringify(value, null, 2) + '\n');
      return;
    case 'yaml':
      process.stdout.write(stringify(value));
      return;
    case 'table': {
      if (!columns) {
        process.stdout.write(stringify(value));
        return;
      }
      process.stdout.write(table(isList(value) ? value : [value], columns));
      return;
    }
    default:
      throw new UsageError(`-o must be table, json or yaml, not '${format}'`);
  }
}

/**
 * What a command did: a sentence on a terminal or in a table, the answer as one document with
 * `-o json|yaml`, only the name with `--quiet`.
 */
export function say(format: string | undefined, text: string, value: unknown, name: string): void {
  if (format === 'json' || format === 'yaml') return print(value, format);
  if (format !== undefined && format !== 'table')
    throw new UsageError(`-o must be table, json or yaml, not '${format}'`);
  process.stdout.write(quiet ? `${name}\n` : text.endsWith('\n') ? text : `${text}\n`);
}

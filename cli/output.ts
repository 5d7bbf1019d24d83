import { stringify } from 'yaml';
import { UsageError } from './args.ts';

/** A column of a table: header and how to read it. */
export type Column = [string, (row: any) => unknown];

function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    return entries.map(([k, x]) => `${k}=${String(x)}`).join(',');
  }
  return String(v);
}

/** Renders rows as aligned columns. */
export function table(rows: any[], columns: Column[]): string {
  const grid = [columns.map(([h]) => h.toUpperCase()), ...rows.map((r) => columns.map(([, f]) => cell(f(r))))];
  const widths = columns.map((_, i) => Math.max(...grid.map((g) => g[i]!.length)));
  return grid.map((g) => g.map((c, i) => (i === g.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
}

let quiet = false;

/** `--quiet`/`-q`: tables print only each row's name (its first column), one a line, for pipelines. */
export function setQuiet(on: boolean): void {
  quiet = on;
}

/** Prints a value per `-o`: table (default), json or yaml. */
export function print(value: unknown, format: string | undefined, columns?: Column[]): void {
  if (quiet && (format ?? 'table') === 'table') {
    const rows = Array.isArray(value) ? value : [value];
    const name = columns?.[0]?.[1] ?? ((r: any) => r?.Slug ?? '');
    process.stdout.write(rows.map((r) => cell(name(r))).filter(Boolean).map((n) => `${n}\n`).join(''));
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
      process.stdout.write(table(Array.isArray(value) ? value : [value], columns));
      return;
    }
    default:
      throw new UsageError(`-o must be table, json or yaml, not '${format}'`);
  }
}

/**
 * Unit data read as values, once per text and in linear time. Writes validate, diff and check
 * placeholders on these values; the comment-preserving `yaml` Documents (documents.ts) are parsed only
 * where Baton edits text (functions, merges). js-yaml with the YAML 1.2 core schema — the schema the
 * `yaml` Documents use, so both read the same values — is about ten times faster on large maps, and
 * refuses duplicate keys and unknown tags. Aliases are followed by reference when loading, so the
 * values are walked once with a budget: an alias bomb is a 400, not a stall.
 */
import jsYaml from 'js-yaml';
import { Invalid } from '../model/errors.ts';

/** The most values (every map, list and scalar, aliases counted each time they are reached) one Unit's data may expand to. */
export const MAX_VALUES = 2_000_000;
/** The deepest nesting a document may have. */
export const MAX_DEPTH = 200;

const recent: { text: string; docs: unknown[] }[] = [];

/** Walks a value within the budget (what is left of it is returned); throws when over it. */
function walk(v: unknown, depth: number, left: number): number {
  if (--left < 0) throw new Invalid(`Data expands to more than ${MAX_VALUES} values (aliases repeating a large value?)`);
  if (depth > MAX_DEPTH) throw new Invalid(`Data is nested more than ${MAX_DEPTH} levels deep`);
  if (v && typeof v === 'object') {
    for (const x of Array.isArray(v) ? v : Object.values(v)) left = walk(x, depth + 1, left);
  }
  return left;
}

/** The documents of YAML data as plain values (empty documents dropped). A syntax error is a 400 naming the line. */
export function loadYaml(text: string): unknown[] {
  const hit = recent.find((r) => r.text === text);
  if (hit) return hit.docs;
  let docs: unknown[];
  try {
    docs = jsYaml.loadAll(text, undefined, { schema: jsYaml.CORE_SCHEMA }).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    const err = e as { mark?: { line?: number }; reason?: string; message: string };
    throw new Invalid(`Data is not valid YAML${err.mark?.line !== undefined ? ` (line ${err.mark.line + 1})` : ''}: ${err.reason ?? err.message.split('\n')[0]}`);
  }
  let left = MAX_VALUES;
  for (const d of docs) left = walk(d, 0, left);
  recent.unshift({ text, docs });
  if (recent.length > 4) recent.pop();
  return docs;
}

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
  if (--left < 0)
    throw new Invalid(`Data expands to more than ${MAX_VALUES} values (aliases repeating a large value?)`);
  if (depth > MAX_DEPTH) throw new Invalid(`Data is nested more than ${MAX_DEPTH} levels deep`);
  if (v && typeof v === 'object') {
    for (const x of Array.isArray(v) ? v : Object.values(v)) left = walk(x, depth + 1, left);
  }
  return left;
}

/**
 * YAML 1.2's core schema exactly, as the `yaml` library (which writes Unit data) reads it: js-yaml's own
 * CORE_SCHEMA also takes `0b101` and `1_000` as numbers, which `yaml` writes unquoted as strings — a
 * label `0b0` would come back as 0.
 */
const INT = /^[-+]?[0-9]+$|^0o[0-7]+$|^0x[0-9a-fA-F]+$/;
const FLOAT =
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$|^\.(?:nan|NaN|NAN)$/;
const int12 = new jsYaml.Type('tag:yaml.org,2002:int', {
  kind: 'scalar',
  resolve: (d: string) => INT.test(d),
  construct: (d: string) =>
    d.startsWith('0o') ? parseInt(d.slice(2), 8) : d.startsWith('0x') ? parseInt(d.slice(2), 16) : parseInt(d, 10),
  predicate: (o: unknown) => typeof o === 'number' && Number.isInteger(o),
  represent: (o: unknown) => String(o),
});
const float12 = new jsYaml.Type('tag:yaml.org,2002:float', {
  kind: 'scalar',
  resolve: (d: string) => FLOAT.test(d) && !INT.test(d),
  construct: (d: string) =>
    /nan$/i.test(d) ? NaN : /inf$/i.test(d) ? (d.startsWith('-') ? -Infinity : Infinity) : parseFloat(d),
  predicate: (o: unknown) => typeof o === 'number' && !Number.isInteger(o),
  represent: (o: unknown) => String(o),
});
// js-yaml's null and bool are 1.2 core's already (its typings leave out the `types` it exports).
const { types } = jsYaml as unknown as { types: { null: jsYaml.Type; bool: jsYaml.Type } };
const CORE_12 = jsYaml.FAILSAFE_SCHEMA.extend({ implicit: [types.null, types.bool, int12, float12] });

/** The documents of YAML data as plain values (empty documents dropped). A syntax error is a 400 naming the line. */
export function loadYaml(text: string): unknown[] {
  const hit = recent.find((r) => r.text === text);
  if (hit) return hit.docs;
  let docs: unknown[];
  try {
    docs = jsYaml.loadAll(text, undefined, { schema: CORE_12 }).filter((d) => d !== null && d !== undefined);
  } catch (e) {
    const err = e as { mark?: { line?: number }; reason?: string; message: string };
    throw new Invalid(
      `Data is not valid YAML${err.mark?.line !== undefined ? ` (line ${err.mark.line + 1})` : ''}: ${err.reason ?? err.message.split('\n')[0]}`,
    );
  }
  let left = MAX_VALUES;
  for (const d of docs) left = walk(d, 0, left);
  recent.unshift({ text, docs });
  if (recent.length > 4) recent.pop();
  return docs;
}

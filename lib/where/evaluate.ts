import type { Literal, Operand, Query, Term } from './ast.ts';
import { likeMatches, regexFinds } from './patterns.ts';

type Value = string | number | boolean | null | undefined | unknown[] | Record<string, unknown>;

/** Whether one entity (as the API's JSON, with any related entities attached by name) matches a query. */
export function matches(q: Query, item: object): boolean {
  return q.terms.every((t) => termMatches(t, item as Record<string, unknown>));
}

function read(o: Operand, item: Record<string, unknown>): Value[] {
  if (o.kind === 'mapkey') {
    const m = item[o.map] as Record<string, unknown> | undefined;
    // Only the map's own keys: `Labels.constructor` is a label named constructor, never Object's.
    return [m && Object.hasOwn(m, o.key) ? (m[o.key] as Value) : undefined];
  }
  const [head, attr] = o.path as [string, string | undefined];
  let values: Value[];
  if (attr === undefined) values = [item[head] as Value];
  else {
    const rel = item[head];
    const rels = Array.isArray(rel) ? rel : rel && typeof rel === 'object' ? [rel] : [];
    values = rels.map((r) => (r as Record<string, unknown>)[attr] as Value);
    if (values.length === 0) values = [undefined];
  }
  if (o.kind === 'len') {
    return values.map((v) => (Array.isArray(v) ? v.length : v && typeof v === 'object' ? Object.keys(v).length : 0));
  }
  return values;
}

function termMatches(t: Term, item: Record<string, unknown>): boolean {
  const lefts = read(t.left, item);
  // `Entity.*.Attr` matches when any related entity does; a single relation reads as one value.
  return lefts.some((left) => {
    let ok = compare(t, left, item);
    if (t.truth) ok = t.truth.not ? ok !== t.truth.value : ok === t.truth.value;
    return ok;
  });
}

function isNull(v: Value): boolean {
  return v === undefined || v === null || v === '';
}

function literalValue(l: Literal): string | number | boolean {
  return l.value;
}

function compare(t: Term, left: Value, item: Record<string, unknown>): boolean {
  switch (t.op) {
    case 'IS NULL':
      return isNull(left);
    case 'IS NOT NULL':
      return !isNull(left);
    case 'IS BOOL':
      return left === true;
  }
  if (t.op === 'IN' || t.op === 'NOT IN') {
    if (isNull(left)) return false;
    const items = t.right?.kind === 'list' ? t.right.items.map(literalValue) : [];
    const norm = (v: unknown) => (t.left.type === 'uuid' && typeof v === 'string' ? v.toLowerCase() : v);
    const found = items.some((i) => norm(i) === norm(left));
    return t.op === 'IN' ? found : !found;
  }
  let right: Value;
  if (t.right?.kind === 'literal') right = literalValue(t.right.literal);
  else if (t.right?.kind === 'operand') right = read(t.right.operand, item)[0];
  if (t.op === '?') {
    if (Array.isArray(left)) return left.some((v) => v === right);
    // An idset holds the ID as a key; IDs compare without case.
    const id = typeof right === 'string' ? right.toLowerCase() : undefined;
    if (t.left.type === 'idset' && left && typeof left === 'object' && id)
      return Object.keys(left).some((k) => k.toLowerCase() === id);
    return false;
  }
  if (isNull(left) || right === undefined || right === null) return false;
  if (t.left.type === 'uuid' && typeof left === 'string' && typeof right === 'string') {
    left = left.toLowerCase();
    right = right.toLowerCase();
  }
  if (t.left.type === 'time' && typeof left === 'string' && typeof right === 'string') {
    left = Date.parse(left);
    right = Date.parse(right);
  }
  const l = left as string | number | boolean;
  const r = right as string | number | boolean;
  switch (t.op) {
    case '=':
      return l === r;
    case '!=':
      return l !== r;
    case '<':
      return l < r;
    case '<=':
      return l <= r;
    case '>':
      return l > r;
    case '>=':
      return l >= r;
    case 'LIKE':
      return likeMatches(String(r), String(l), false);
    case 'NOT LIKE':
      return !likeMatches(String(r), String(l), false);
    case 'ILIKE':
      return likeMatches(String(r), String(l), true);
    case 'NOT ILIKE':
      return !likeMatches(String(r), String(l), true);
    case '~':
      return regexFinds(String(r), String(l), false);
    case '~*':
      return regexFinds(String(r), String(l), true);
    case '!~':
      return !regexFinds(String(r), String(l), false);
    case '!~*':
      return !regexFinds(String(r), String(l), true);
  }
  return false;
}

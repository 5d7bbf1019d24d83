import { isDeepStrictEqual } from 'node:util';
import { isMap, isSeq, type Document, type YAMLMap } from 'yaml';
import { diffData, diffValues, mergeable, type PathChange } from './diff.ts';
import { parseYaml, resourceKey, stringifyYaml, type ToolchainType } from './documents.ts';
import { parsePath, type Segment } from './paths.ts';

/** A path the downstream decided for itself. */
export interface Protected {
  Resource: string;
  Path: string;
}

/** An upstream change kept out because the downstream protected its path. */
export interface HeldChange {
  Resource: string;
  Path: string;
  Op: string;
  UpstreamValue?: unknown;
  DownstreamValue?: unknown;
}

/** What applying upstream changes to downstream data produced. */
export interface MergeResult {
  data: string;
  held: HeldChange[];
}

const within = (a: string, b: string) => a === b || b === '' || a.startsWith(`${b}.`) || a.startsWith(`${b}[`);

/** Whether a change touches a protected path: the same path, one beneath it, or a subtree holding it. */
export function touchesProtected(change: { Resource: string; Path: string }, protectedPaths: Protected[]): boolean {
  return protectedPaths.some(
    (p) => p.Resource === change.Resource && (within(change.Path, p.Path) || within(p.Path, change.Path)),
  );
}

/**
 * Three-way merge by path: the upstream's changes from `base` to `end` are applied to the downstream's
 * current data. Paths only the downstream changed are kept; a path the upstream changed takes the
 * upstream value, unless the downstream protected it, in which case the downstream value stays and the
 * upstream change is returned as held (a conflict) when the two values differ.
 */
export function mergeData(
  toolchain: ToolchainType,
  base: string,
  end: string,
  downstream: string,
  protectedPaths: Protected[],
): MergeResult {
  return applyChanges(toolchain, downstream, diffData(toolchain, base, end), protectedPaths);
}

/** Applies path-level changes to data, holding back those on protected paths. */
export function applyChanges(
  toolchain: ToolchainType,
  downstream: string,
  changes: PathChange[],
  protectedPaths: Protected[],
): MergeResult {
  if (toolchain === 'Kubernetes/YAML' || toolchain === 'AppConfig/YAML' || toolchain === 'ConfigHub/YAML') {
    return applyToYaml(toolchain, downstream, changes, protectedPaths);
  }
  return applyToPlain(toolchain, downstream, changes, protectedPaths);
}

function applyToYaml(
  toolchain: ToolchainType,
  text: string,
  changes: PathChange[],
  protectedPaths: Protected[],
): MergeResult {
  const docs = text.trim() ? parseYaml(text) : [];
  const byKey = new Map<string, Document.Parsed>();
  const k8s = toolchain === 'Kubernetes/YAML';
  for (const d of docs) byKey.set(k8s ? resourceKey(d.toJS() as Record<string, unknown>) : '', d);
  const held: HeldChange[] = [];
  const removed = new Set<Document.Parsed>();
  const added: Document.Parsed[] = [];
  // An upstream that adds what the downstream added too (a resource, a map, a list of named items):
  // take the upstream's values, keep what only the downstream has. The base had none of it, so
  // nothing the downstream holds there was deleted upstream.
  changes = changes.flatMap((c) => {
    const doc = c.Op === 'Add' ? byKey.get(c.Resource) : undefined;
    if (!doc) return [c];
    const at = parsePath(c.Path);
    const current = c.Path === '' ? doc.toJS() : readPath(doc, at);
    return current !== undefined && (c.Path === '' || mergeable(current, c.Value))
      ? diffValues(c.Resource, current, c.Value, at).filter((x) => x.Op !== 'Delete')
      : [c];
  });
  for (const c of changes) {
    const doc = byKey.get(c.Resource);
    const current = doc ? readPath(doc, parsePath(c.Path)) : undefined;
    if (touchesProtected(c, protectedPaths)) {
      if (!isDeepStrictEqual(current, c.Value))
        held.push({ Resource: c.Resource, Path: c.Path, Op: c.Op, UpstreamValue: c.Value, DownstreamValue: current });
      continue;
    }
    if (c.Path === '') {
      if (c.Op === 'Delete') {
        if (doc) removed.add(doc);
        byKey.delete(c.Resource);
      } else if (doc) {
        doc.contents = doc.createNode(c.Value) as never;
      } else {
        const fresh = parseYaml(stringifyValue(c.Value))[0]!;
        byKey.set(c.Resource, fresh);
        added.push(fresh);
      }
      continue;
    }
    if (!doc) continue; // the downstream deleted this resource: its own decision
    writePath(doc, parsePath(c.Path), c.Op === 'Delete' ? undefined : c.Value, c.Op === 'Delete');
  }
  const out = [...docs.filter((d) => !removed.has(d)), ...added];
  return { data: out.length ? stringifyYaml(out) : '', held };
}

function stringifyValue(v: unknown): string {
  return JSON.stringify(v);
}

/** Resolves a mutation path to the YAML path with indexes, or undefined where a named item is missing. */
function yamlPath(doc: Document.Parsed, segments: Segment[]): (string | number)[] | undefined {
  const out: (string | number)[] = [];
  for (const s of segments) {
    if (typeof s === 'string') {
      out.push(s);
      continue;
    }
    const seq = doc.getIn(out, true);
    if (!isSeq(seq)) return undefined;
    const i = seq.items.findIndex((item) => isMap(item) && (item as YAMLMap).get(s.key) == s.value);
    if (i < 0) return undefined;
    out.push(i);
  }
  return out;
}

function readPath(doc: Document.Parsed, segments: Segment[]): unknown {
  return readValue(doc.toJS(), segments);
}

/** Reads a mutation path out of a plain value, finding named list items by their key. */
/** `v[k]` for any value (a string's character, undefined past a leaf), as a path walk reads it. */
const member = (v: unknown, k: string): unknown =>
  v === null || v === undefined ? undefined : (v as Record<string, unknown>)[k];

export function readValue(value: unknown, segments: Segment[]): unknown {
  let v: unknown = value;
  for (const s of segments) {
    if (typeof s === 'string')
      v = v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[s] : undefined;
    else
      v = Array.isArray(v)
        ? v.find((item) => item && typeof item === 'object' && (item as Record<string, unknown>)[s.key] == s.value)
        : undefined;
    if (v === undefined) return undefined;
  }
  return v;
}

function writePath(doc: Document.Parsed, segments: Segment[], value: unknown, del: boolean): void {
  const last = segments[segments.length - 1]!;
  const parent = segments.slice(0, -1);
  const parentPath = yamlPath(doc, parent);
  if (!parentPath) return; // a named item the path runs through is gone downstream
  if (typeof last !== 'string') {
    // The item of a named list itself: add, replace or remove it by its key.
    const seq = doc.getIn(parentPath, true);
    const i = isSeq(seq)
      ? seq.items.findIndex((item) => isMap(item) && (item as YAMLMap).get(last.key) == last.value)
      : -1;
    if (del) {
      if (i >= 0) doc.deleteIn([...parentPath, i]);
    } else if (i >= 0) doc.setIn([...parentPath, i], doc.createNode(value));
    else if (isSeq(seq)) doc.addIn(parentPath, doc.createNode(value));
    else doc.setIn(parentPath, doc.createNode([value]));
    return;
  }
  if (del) {
    if (doc.hasIn([...parentPath, last])) doc.deleteIn([...parentPath, last]);
    return;
  }
  const existing = doc.getIn([...parentPath, last], true);
  if (
    existing &&
    typeof existing === 'object' &&
    'value' in existing &&
    (value === null || typeof value !== 'object')
  ) {
    // Keep the scalar node (and its comment): change only its value.
    (existing as { value: unknown }).value = value;
    return;
  }
  doc.setIn([...parentPath, last], doc.createNode(value));
}

/** JSON, Properties, Env and Text: merge on plain values, then write them back out. */
function applyToPlain(
  toolchain: ToolchainType,
  text: string,
  changes: PathChange[],
  protectedPaths: Protected[],
): MergeResult {
  const held: HeldChange[] = [];
  if (toolchain === 'AppConfig/Text') {
    const c = changes[0];
    if (!c) return { data: text, held };
    if (touchesProtected(c, protectedPaths))
      return {
        data: text,
        held:
          text === c.Value ? [] : [{ Resource: '', Path: '', Op: c.Op, UpstreamValue: c.Value, DownstreamValue: text }],
      };
    return { data: String(c.Value ?? ''), held };
  }
  const obj: Record<string, unknown> = text.trim()
    ? toolchain === 'AppConfig/JSON'
      ? (JSON.parse(text) as Record<string, unknown>)
      : parseLines(text)
    : {};
  for (const c of changes) {
    const segs = parsePath(c.Path).map(String);
    let parent: unknown = obj;
    for (const s of segs.slice(0, -1)) parent = member(parent, s);
    const leaf = segs[segs.length - 1];
    const current = leaf === undefined ? obj : member(parent, leaf);
    if (touchesProtected(c, protectedPaths)) {
      if (!isDeepStrictEqual(current, c.Value))
        held.push({ Resource: '', Path: c.Path, Op: c.Op, UpstreamValue: c.Value, DownstreamValue: current });
      continue;
    }
    if (leaf === undefined || !parent || typeof parent !== 'object') continue;
    if (c.Op === 'Delete') delete (parent as Record<string, unknown>)[leaf];
    else (parent as Record<string, unknown>)[leaf] = c.Value;
  }
  const data =
    toolchain === 'AppConfig/JSON'
      ? `${JSON.stringify(obj, null, 2)}\n`
      : Object.entries(obj)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join('\n') + '\n';
  return { data, held };
}

function parseLines(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t || t.startsWith('#') || t.startsWith('!')) continue;
    const at = t.search(/[=:]/);
    out[t.slice(0, at).trim()] = t.slice(at + 1).trim();
  }
  return out;
}

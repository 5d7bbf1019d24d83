import { isDeepStrictEqual } from 'node:util';
import type { ToolchainType } from './documents.ts';
import { resourceKey } from './documents.ts';
import { loadYaml } from './load.ts';
import { formatPath, listKey, type Segment } from './paths.ts';

/** How one path changed. */
export const ChangeOp = {
  /** The path did not exist before. */
  Add: 'Add',
  /** A scalar at the path changed. */
  Update: 'Update',
  /** A whole value (a list without keys, or a value of another type) was replaced. */
  Replace: 'Replace',
  /** The path no longer exists. */
  Delete: 'Delete',
} as const;
export type ChangeOp = (typeof ChangeOp)[keyof typeof ChangeOp];

/** One path-level change of a revision, as a Mutation records it. */
export interface PathChange {
  Resource: string;
  Path: string;
  Op: ChangeOp;
  Value?: unknown;
}

/** The resources of unit data as plain JS, keyed as `Kind/name` (or '' for a single non-Kubernetes document). */
export function resources(toolchain: ToolchainType, data: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!data.trim()) return out;
  switch (toolchain) {
    case 'Kubernetes/YAML':
      for (const js of loadYaml(data) as Record<string, unknown>[]) out.set(resourceKey(js), js);
      return out;
    case 'AppConfig/YAML':
    case 'ConfigHub/YAML':
      out.set('', loadYaml(data)[0] ?? null);
      return out;
    case 'AppConfig/JSON':
      out.set('', JSON.parse(data) as unknown);
      return out;
    case 'AppConfig/Env':
    case 'AppConfig/Properties': {
      const m: Record<string, string> = {};
      for (const line of data.split('\n')) {
        const t = line.trim();
        if (!t || t.startsWith('#') || t.startsWith('!')) continue;
        const at = t.search(/[=:]/);
        m[t.slice(0, at).trim()] = t.slice(at + 1).trim();
      }
      out.set('', m);
      return out;
    }
    case 'AppConfig/Text':
      out.set('', data);
      return out;
  }
}

/** Path-level changes that turn `before` into `after`. */
export function diffData(toolchain: ToolchainType, before: string, after: string): PathChange[] {
  const a = resources(toolchain, before);
  const b = resources(toolchain, after);
  const out: PathChange[] = [];
  for (const [key, value] of a) {
    if (!b.has(key)) out.push({ Resource: key, Path: '', Op: ChangeOp.Delete });
    else diffValue(key, [], value, b.get(key), out);
  }
  for (const [key, value] of b) if (!a.has(key)) out.push({ Resource: key, Path: '', Op: ChangeOp.Add, Value: value });
  return out;
}

/** Path-level changes between two values of one resource (found at `at` within it; its root by default). */
export function diffValues(resource: string, a: unknown, b: unknown, at: Segment[] = []): PathChange[] {
  const out: PathChange[] = [];
  diffValue(resource, [...at], a, b, out);
  return out;
}

/** Whether two values merge key by key: both maps, or both lists of items named by the same key. */
export function mergeable(a: unknown, b: unknown): boolean {
  if (isObj(a) && isObj(b)) return true;
  if (!Array.isArray(a) || !Array.isArray(b)) return false;
  const key = listKey(a) ?? listKey(b);
  return !!key && (a.length === 0 || listKey(a) === key) && (b.length === 0 || listKey(b) === key);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The changes under one path, appended to `out`. Linear in the values: maps and keyed lists are walked
 * once, key by key (no deep comparison at every level), and a path is spelled out only for a change.
 * `path` is a stack the walk pushes to and pops from.
 */
function diffValue(resource: string, path: Segment[], a: unknown, b: unknown, out: PathChange[]): void {
  if (a === b) return;
  const at = (seg?: Segment) => formatPath(seg === undefined ? path : [...path, seg]);
  if (isObj(a) && isObj(b)) {
    for (const k of Object.keys(a)) {
      if (!Object.hasOwn(b, k)) out.push({ Resource: resource, Path: at(k), Op: ChangeOp.Delete });
      else if (a[k] !== b[k]) {
        path.push(k);
        diffValue(resource, path, a[k], b[k], out);
        path.pop();
      }
    }
    for (const k of Object.keys(b))
      if (!Object.hasOwn(a, k)) out.push({ Resource: resource, Path: at(k), Op: ChangeOp.Add, Value: b[k] });
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const key = listKey(a) ?? listKey(b);
    if (key && (a.length === 0 || listKey(a) === key) && (b.length === 0 || listKey(b) === key)) {
      const byKey = (items: unknown[]) => new Map(items.map((i) => [(i as Record<string, string | number>)[key]!, i]));
      const am = byKey(a);
      const bm = byKey(b);
      for (const [k, v] of am) {
        const seg = { key, value: k };
        if (!bm.has(k)) out.push({ Resource: resource, Path: at(seg), Op: ChangeOp.Delete });
        else {
          path.push(seg);
          diffValue(resource, path, v, bm.get(k), out);
          path.pop();
        }
      }
      for (const [k, v] of bm)
        if (!am.has(k)) out.push({ Resource: resource, Path: at({ key, value: k }), Op: ChangeOp.Add, Value: v });
      return;
    }
    if (!isDeepStrictEqual(a, b)) out.push({ Resource: resource, Path: at(), Op: ChangeOp.Replace, Value: b });
    return;
  }
  if (a === undefined) out.push({ Resource: resource, Path: at(), Op: ChangeOp.Add, Value: b });
  else if (b === undefined) out.push({ Resource: resource, Path: at(), Op: ChangeOp.Delete });
  else if (isObj(a) || isObj(b) || Array.isArray(a) || Array.isArray(b))
    out.push({ Resource: resource, Path: at(), Op: ChangeOp.Replace, Value: b });
  else if (!isDeepStrictEqual(a, b)) out.push({ Resource: resource, Path: at(), Op: ChangeOp.Update, Value: b });
}

/** One step of a path into a resource: a map key, or the item of a named list whose `key` field is `value`. */
export type Segment = string | { key: string; value: string | number };

const PLAIN = /^[A-Za-z0-9_\-/]+$/;

/** `spec.template.spec.containers.?name=backend.image`; a key with dots is written `["app.kubernetes.io/name"]`. */
export function formatPath(segments: Segment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'string') {
      if (PLAIN.test(s)) out += (out ? '.' : '') + s;
      else out += `[${JSON.stringify(s)}]`;
    } else out += `${out ? '.' : ''}?${s.key}=${s.value}`;
  }
  return out;
}

/** The inverse of `formatPath`. */
export function parsePath(path: string): Segment[] {
  const out: Segment[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '.') {
      i++;
      continue;
    }
    if (path[i] === '[') {
      const end = findStringEnd(path, i + 1);
      out.push(JSON.parse(path.slice(i + 1, end + 1)) as string);
      i = end + 2;
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    const word = path.slice(i, j);
    if (word.startsWith('?') && word.includes('=')) {
      const [key, value] = [word.slice(1, word.indexOf('=')), word.slice(word.indexOf('=') + 1)];
      out.push({ key, value: /^-?\d+$/.test(value) && key !== 'name' ? Number(value) : value });
    } else out.push(word);
    i = j;
  }
  return out;
}

function findStringEnd(s: string, start: number): number {
  // start points at the opening quote
  let i = start + 1;
  while (i < s.length) {
    if (s[i] === '\\') i += 2;
    else if (s[i] === '"') return i;
    else i++;
  }
  return s.length - 1;
}

const LIST_KEYS = ['name', 'containerPort', 'port', 'key', 'mountPath', 'ip'];

/** The field that identifies items of a list (containers by name, ports by containerPort…), if every item has a distinct one. */
export function listKey(items: unknown[]): string | undefined {
  if (items.length === 0 || !items.every((i) => i && typeof i === 'object' && !Array.isArray(i))) return undefined;
  for (const k of LIST_KEYS) {
    const values = items.map((i) => (i as Record<string, unknown>)[k]);
    if (values.every((v) => typeof v === 'string' || typeof v === 'number') && new Set(values).size === values.length)
      return k;
  }
  return undefined;
}

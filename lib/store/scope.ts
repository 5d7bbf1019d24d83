/**
 * How a ChangeOrder's scope (InScopeSpaceIDs: every Space it may reach) is stored: as 16 bytes a Space, not as a
 * list of 36-character strings. A 10,000-Space fleet's scope is 160 KB so, where as a list it took 390 KB, past
 * what one DynamoDB item holds; and each read and write of the ChangeOrder is billed for its size. IDs that are
 * not all canonical UUIDs (tests pass in their own) are kept as the list. The ChangeOrder's records of Spaces
 * (RECORD_ID_LISTS: the Spaces each promotion reached, forced or halted) are packed alike: the Stages of a
 * 10,000-Space fleet name them all once more.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The scope as stored: the packed bytes when every ID is a UUID, else the list as given. Pure. */
export function packScope(ids: unknown): unknown {
  if (!Array.isArray(ids) || !ids.length || !ids.every((id) => typeof id === 'string' && UUID.test(id))) return ids;
  const bytes = new Uint8Array(ids.length * 16);
  ids.forEach((id: string, i) => bytes.set(Buffer.from(id.replace(/-/g, ''), 'hex'), i * 16));
  return bytes;
}

/** The scope as read: a list of IDs, from the packed bytes or the list. Pure. */
export function unpackScope(stored: unknown): unknown {
  if (!(stored instanceof Uint8Array)) return stored;
  const out: string[] = [];
  for (let i = 0; i < stored.length; i += 16) {
    const h = Buffer.from(stored.subarray(i, i + 16)).toString('hex');
    out.push(`${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`);
  }
  return out;
}

/** How many bytes the scope takes as stored (what the item-size check counts). Pure. */
export function storedScopeBytes(ids: unknown): number {
  const s = packScope(ids);
  return s instanceof Uint8Array ? s.length : Buffer.byteLength(JSON.stringify(s ?? null));
}

/**
 * A ChangeOrder's records of Spaces as stored: each record's lists of Space IDs (`fields`) packed as the scope is.
 * Promotions name the Spaces reached, PromotionOverrides the Spaces forced into, PromotionHalts the failed and the
 * not started: at 10,000 Spaces each such list is 6,000 IDs, 220 KB as strings and 94 KB packed. Pure.
 */
export function packRecords(fields: readonly string[]): { pack(v: unknown): unknown; unpack(v: unknown): unknown } {
  const each = (v: unknown, f: (ids: unknown) => unknown) =>
    Array.isArray(v)
      ? v.map((r: Record<string, unknown> | null) =>
          r ? { ...r, ...Object.fromEntries(fields.filter((k) => r[k]).map((k) => [k, f(r[k])])) } : r,
        )
      : v;
  return { pack: (v) => each(v, packScope), unpack: (v) => each(v, unpackScope) };
}

/** The ID lists of each kind of record a ChangeOrder keeps, stored packed. */
export const RECORD_ID_LISTS = {
  Promotions: ['SpaceIDs'],
  PromotionOverrides: ['SpaceIDs'],
  PromotionHalts: ['FailedSpaceIDs', 'NotStartedSpaceIDs'],
} as const;

/** A ChangeOrder's size as stored, near enough: its JSON with the scope and its records' ID lists as packed. Pure. */
export function storedChangeOrderBytes(co: Record<string, unknown> & { InScopeSpaceIDs?: unknown }): number {
  const lists = Object.entries(RECORD_ID_LISTS) as [string, readonly string[]][];
  let bytes = storedScopeBytes(co.InScopeSpaceIDs);
  const rest: Record<string, unknown> = { ...co, InScopeSpaceIDs: null };
  for (const [name, fields] of lists) {
    const records = co[name];
    if (!Array.isArray(records)) continue;
    for (const r of records as Record<string, unknown>[]) {
      bytes += Buffer.byteLength(JSON.stringify({ ...r, ...Object.fromEntries(fields.map((k) => [k, null])) }));
      for (const k of fields) bytes += storedScopeBytes(r?.[k]);
    }
    rest[name] = null;
  }
  return bytes + Buffer.byteLength(JSON.stringify(rest));
}

/**
 * How a ChangeOrder's scope (InScopeSpaceIDs: every Space it may reach) is stored: as 16 bytes a Space, not as a
 * list of 36-character strings. A 10,000-Space fleet's scope is 160 KB so, where as a list it took 390 KB, past
 * what one DynamoDB item holds; and each read and write of the ChangeOrder is billed for its size. IDs that are
 * not all canonical UUIDs (tests pass in their own) are kept as the list. Each promotion's record of the Spaces it
 * reached (Promotions[].SpaceIDs) is packed alike: the Stages of a 10,000-Space fleet name them all once more.
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

/** A ChangeOrder's Promotions as stored: each one's SpaceIDs packed as the scope is. Pure. */
export function packPromotions(v: unknown): unknown {
  return Array.isArray(v)
    ? v.map((p: { SpaceIDs?: unknown }) => (p && p.SpaceIDs ? { ...p, SpaceIDs: packScope(p.SpaceIDs) } : p))
    : v;
}

/** The Promotions as read. Pure. */
export function unpackPromotions(v: unknown): unknown {
  return Array.isArray(v)
    ? v.map((p: { SpaceIDs?: unknown }) => (p && p.SpaceIDs ? { ...p, SpaceIDs: unpackScope(p.SpaceIDs) } : p))
    : v;
}

/** A ChangeOrder's size as stored, near enough: its JSON with the scope and the promotions' Spaces as packed. Pure. */
export function storedChangeOrderBytes(co: {
  InScopeSpaceIDs?: unknown;
  Promotions?: { SpaceIDs?: unknown }[];
}): number {
  return (
    Buffer.byteLength(JSON.stringify({ ...co, InScopeSpaceIDs: null, Promotions: null })) +
    storedScopeBytes(co.InScopeSpaceIDs) +
    (co.Promotions ?? []).reduce((n, p) => n + 64 + storedScopeBytes(p.SpaceIDs), 0)
  );
}

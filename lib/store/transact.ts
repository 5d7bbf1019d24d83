import { storedChangeOrderBytes } from './scope.ts';
import { Conflict, TooLarge, WriteRefused } from '../model/errors.ts';
import type { GroupOutcome, MarkWrite, ReleaseCounter, SpaceKind, StoreOp, WriteKind } from '../ports/store.ts';
import { TRANSACTION_MAX_ITEMS } from '../util/chunk.ts';
import { landGroups } from '../util/groups.ts';
import {
  ID_FIELD,
  orgKeyed,
  orgScope,
  ORG_SLUGGED,
  spaceScope,
  UNSLUGGED,
  untilProcessed,
  type AnyEntity,
  type Table,
} from './table.ts';

/**
 * The transaction path over the table: a list of store ops (create, update guarded by Version, delete,
 * put) becomes one TransactWriteItems, with the slug claims each op carries and the hidden keys of its sparse indexes, and a
 * cancelled one a Conflict naming why. Every part of the store writes through it.
 */

/** The cover entries of one Attestation: one per Unit and content it names (a revocation names none). */
export function attestationCoversOf(
  a: Record<string, unknown>,
): { UnitID: string; DataHash: string; AttestationID: string; SpaceID: string }[] {
  const seen = new Map<string, { UnitID: string; DataHash: string; AttestationID: string; SpaceID: string }>();
  for (const r of (a.Revisions ?? []) as { UnitID: string; DataHash: string }[])
    seen.set(`${r.UnitID}#${r.DataHash}`, {
      UnitID: r.UnitID,
      DataHash: r.DataHash,
      AttestationID: String(a.AttestationID),
      SpaceID: String(a.SpaceID),
    });
  return [...seen.values()];
}

/** The name of a Target's release counter item. */
export const releaseCounterName = (targetId: string) => `RELEASENUM#${targetId}`;
/** The slug-claim scope of the whole table. */
export const GLOBAL = 'GLOBAL';

/** Why a conditional write in a transaction failed, said once per item kind. */
export const REASONS = {
  slugTaken: (kind: string, slug: string) =>
    `${/^[AEIOUaeiou]/.test(kind) ? 'an' : 'a'} ${kind} with slug '${slug}' already exists`,
  stale: (kind: string) =>
    `the ${kind} was changed by someone else since it was read (its Version no longer matches); read it again and retry`,
  revisionTaken: 'another write made that revision first; read the unit again and retry',
  marked: 'the Tag already marks another revision of that Unit; use --move to move it',
};

/** DynamoDB's item limit, less room for key and bookkeeping attributes. */
export const MAX_ITEM_BYTES = 380 * 1024;

/** Refuses an item that would pass DynamoDB's 400 KB (413 naming what is too large), by its JSON size, which is close to DynamoDB's own count. */
function checkItemSize(kind: string, item: object): void {
  // A ChangeOrder's scope and its records' lists of Space IDs are stored packed (lib/store/scope.ts): counted as stored.
  const size =
    kind === 'ChangeOrder'
      ? storedChangeOrderBytes(item as Record<string, unknown>)
      : Buffer.byteLength(JSON.stringify(item));
  if (size > MAX_ITEM_BYTES) {
    const what = kind === 'Revision' ? 'the data, compressed,' : `the ${kind}`;
    throw new TooLarge(
      `${what} would take ${Math.ceil(size / 1024)} KB, more than one stored item holds (${MAX_ITEM_BYTES / 1024} KB); make it smaller, or split it into several Units`,
    );
  }
}

/** An update as ElectroDB builds it for a transaction. */
type UpdateParams = {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
};

/**
 * An update that no longer sets the named attributes (each `#name = :value` of its SET clause), their
 * placeholders gone where nothing else uses them; unchanged when that would leave nothing to set.
 */
export function withoutSetting(u: UpdateParams, names: Set<string>): void {
  const m = /^SET (.+?)( REMOVE [#\w, ]+)?$/.exec(u.UpdateExpression);
  if (!m) return;
  const parts = m[1]!.split(', ');
  // Plain assignments only (`#name = :value`): anything else is left as it is.
  if (!parts.every((p) => /^#\w+ = :\w+$/.test(p))) return;
  const drops = (p: string) => names.has(u.ExpressionAttributeNames[p.slice(0, p.indexOf(' = '))] ?? '');
  const kept = parts.filter((p) => !drops(p));
  if (kept.length === parts.length || !kept.length) return;
  const dropped = parts.filter(drops);
  u.UpdateExpression = `SET ${kept.join(', ')}${m[2] ?? ''}`;
  // The placeholders still in use, by what is left of the update or by its condition (read once, not per placeholder).
  const used = new Set(`${u.UpdateExpression} ${u.ConditionExpression ?? ''}`.match(/[#:]\w+/g));
  for (const p of dropped) {
    const [name, value] = p.split(' = ') as [string, string];
    if (!used.has(name)) delete u.ExpressionAttributeNames[name];
    if (!used.has(value)) delete u.ExpressionAttributeValues[value];
  }
}

/** A mark as a store op: `Move` replaces one already there, otherwise it must be new. */
export function markOp(m: MarkWrite): StoreOp {
  const item = {
    TagID: m.TagID,
    UnitID: m.UnitID,
    SpaceID: m.SpaceID,
    RevisionNum: m.RevisionNum,
    UpdatedAt: m.UpdatedAt,
  };
  return m.Move ? { op: 'put', kind: 'Mark', item } : { op: 'create', kind: 'Mark', item };
}

/** The write half of the store: `transact` and what it is made of, over one table. */

export class Writes {
  constructor(private readonly t: Table) {}

  /**
   * Runs a write transaction; a cancelled one becomes a Conflict (WriteRefused, with the item's place)
   * naming the first item whose condition failed.
   */
  async run(build: (e: Record<string, AnyEntity>) => unknown[], reasons: string[]): Promise<void> {
    const ops = build(this.t.e);
    if (ops.length > TRANSACTION_MAX_ITEMS)
      throw new Conflict(
        `this write touches ${ops.length} items, more than one transaction can hold (${TRANSACTION_MAX_ITEMS})`,
      );
    const write = this.t.svc.transaction.write as unknown as (f: () => unknown[]) => {
      go(): Promise<{ canceled: boolean; data: unknown }>;
    };
    const result = await write(() => ops).go();
    if (result.canceled) {
      const i = (result.data as { rejected?: boolean; code?: string }[]).findIndex(
        (d) => d.rejected || (d.code && d.code !== 'None'),
      );
      throw new WriteRefused(
        reasons[i] ?? reasons[reasons.length - 1] ?? 'the write conflicted with another; retry',
        i < 0 ? ops.length - 1 : i,
      );
    }
  }

  /**
   * An item with the keys of its sparse indexes, each there only while the item belongs in the index and gone with
   * it: a Target's deploy object in its organization, a user's token in that user's part, a Release at the
   * ChangeOrder it was published at, a revocation among its Space's.
   */
  private static indexKeys(kind: WriteKind, item: Record<string, unknown>): Record<string, unknown> {
    const when = (yes: unknown, v: () => string) => (yes ? v() : undefined);
    switch (kind) {
      case 'Target':
        return { ...item, DeployKey: when(item.DeployObject, () => `${item.OrganizationID}#${item.DeployObject}`) };
      case 'ApiToken':
        return {
          ...item,
          UserKey: when(item.UserID, () => `${item.OrganizationID}#${item.UserID}`),
          UserOrder: when(item.UserID, () => `${item.CreatedAt}#${item.TokenID}`),
        };
      case 'Release':
        return { ...item, AtChangeOrder: when(item.ChangeOrderID, () => `${item.SpaceID}#${item.ChangeOrderID}`) };
      case 'Attestation':
        return {
          ...item,
          RevocationIn: when(item.RevokedAttestationID, () => String(item.SpaceID)),
          Revokes: when(item.RevokedAttestationID, () => String(item.RevokedAttestationID)),
        };
      default:
        return item;
    }
  }

  /** The attributes the entity declares, defined ones only: what is added for reading (a Space's slug, a Link's staleness) is never written. */
  private static clean(entity: AnyEntity, item: object): Record<string, unknown> {
    const attrs = entity.schema.attributes as Record<string, unknown>;
    return Object.fromEntries(Object.entries(item).filter(([k, v]) => v !== undefined && k in attrs));
  }

  /**
   * A patch that sets every defined field, removes optional ones now absent, and requires the Version
   * read. Given the item as read (`before`), only what differs from it: at that Version the stored item
   * is the one read, so the write is the same, smaller (an index key's fields go together).
   */
  private patch(
    entity: AnyEntity,
    keys: Record<string, unknown>,
    next: Record<string, unknown>,
    expectedVersion: number,
    given?: Record<string, unknown>,
  ): unknown {
    // An index with a condition (a sparse one: Progress's) is judged on what the write sets: such an item is written whole.
    const before = Object.values(entity.schema.indexes as Record<string, { condition?: unknown }>).some(
      (i) => i.condition,
    )
      ? undefined
      : given;
    const attrs = entity.schema.attributes as Record<string, { required?: boolean }>;
    const same = (name: string) =>
      before !== undefined &&
      (next[name] === before[name] ||
        (typeof next[name] === 'object' &&
          next[name] !== null &&
          JSON.stringify(next[name]) === JSON.stringify(before[name])));
    const changed = new Set(Object.keys(attrs).filter((name) => !(name in keys) && !same(name)));
    if (before) {
      for (const index of Object.values(
        entity.schema.indexes as Record<string, { pk: { composite: string[] }; sk?: { composite: string[] } }>,
      )) {
        const composite = [...index.pk.composite, ...(index.sk?.composite ?? [])];
        if (composite.some((c) => changed.has(c))) for (const c of composite) if (!(c in keys)) changed.add(c);
      }
    }
    const set: Record<string, unknown> = {};
    const remove: string[] = [];
    for (const [name, def] of Object.entries(attrs)) {
      if (!changed.has(name)) continue;
      const v = next[name];
      if (v !== undefined) set[name] = v;
      else if (!def.required && name !== 'Data') remove.push(name);
    }
    let op = entity.patch(keys).set(set);
    if (remove.length) op = op.remove(remove);
    const params = op.where((a, o) => o.eq!(a.Version, expectedVersion)).commit() as {
      Update: UpdateParams;
    };
    // The item is there at the Version read, written by this entity with these keys: its key fields and
    // ElectroDB's entity name and version, which a patch sets again, are already what they would be set to.
    if (before) withoutSetting(params.Update, new Set([...Object.keys(keys), '__edb_e__', '__edb_v__']));
    return params;
  }

  claim(scope: string, kind: string, slug: string, id: string): unknown {
    return this.t.e.SlugClaim!.create({ Scope: scope, Kind: kind, Slug: slug, ID: id }).commit();
  }
  unclaim(scope: string, kind: string, slug: string): unknown {
    return this.t.e.SlugClaim!.delete({ Scope: scope, Kind: kind, Slug: slug }).commit();
  }

  /** The key attributes of an item of a kind. */
  private static keyOf(kind: WriteKind, item: Record<string, unknown>): Record<string, unknown> {
    if (orgKeyed(kind)) return { OrganizationID: item.OrganizationID, [ID_FIELD[kind]]: item[ID_FIELD[kind]] };
    switch (kind) {
      case 'ApiToken':
        return { TokenHash: item.TokenHash };
      case 'Revision':
      case 'Mutation':
        return { UnitID: item.UnitID, RevisionNum: item.RevisionNum };
      case 'Mark':
        return { TagID: item.TagID, UnitID: item.UnitID };
      case 'ReleaseCounter':
        return { Name: releaseCounterName(String(item.TargetID)) };
      case 'Progress':
        return { ChangeOrderID: item.ChangeOrderID, SpaceID: item.SpaceID };
      case 'Outbox':
        return { EventID: item.EventID };
      case 'Job':
        return { JobID: item.JobID };
      case 'JobPart':
        return { JobID: item.JobID, Part: item.Part };
      case 'JobPlan':
        return { JobID: item.JobID, Chunk: item.Chunk };
      case 'NotificationDelivery':
        return { NotificationID: item.NotificationID, At: item.At, DeliveryID: item.DeliveryID };
      default:
        return { SpaceID: item.SpaceID, [ID_FIELD[kind]]: item[ID_FIELD[kind]] };
    }
  }

  /** Where a kind's slugs are unique, or undefined for kinds without slugs. */
  private static slugScope(kind: WriteKind, item: Record<string, unknown>): string | undefined {
    if (ORG_SLUGGED.has(kind)) return orgScope(String(item.OrganizationID));
    if (UNSLUGGED.has(kind)) return undefined;
    return spaceScope(String(item.SpaceID));
  }

  async transact(ops: StoreOp[]): Promise<void> {
    const built = this.items(ops);
    await this.writeCovers(ops);
    await this.run(() => built.items, built.reasons);
  }

  /**
   * The cover entries of the attestations these ops create (one per Unit and content each names), written
   * just before them: an attestation may name more Units than its transaction could hold with them. A
   * cover whose attestation did not land is passed over when read (`attestationsNaming`).
   */
  private async writeCovers(ops: StoreOp[]): Promise<void> {
    const covers = ops.flatMap((o) =>
      o.op === 'create' && o.kind === 'Attestation' ? attestationCoversOf(o.item as Record<string, unknown>) : [],
    );
    const key = (c: { UnitID: string; DataHash: string; AttestationID: string }) =>
      `${c.UnitID}#${c.DataHash}#${c.AttestationID}`;
    const byKey = new Map(covers.map((c) => [key(c), c]));
    await untilProcessed('write', covers, async (left) => {
      // What the database left is named by its keys: written again whole.
      const { unprocessed } = await this.t.db.AttestationCover.put(left).go();
      return (unprocessed as { UnitID: string; DataHash: string; AttestationID: string }[]).map((k) =>
        byKey.get(key(k))!,
      );
    });
  }

  /**
   * Writes groups of ops, each whole or not at all, in as few transactions as they fit (landGroups): a
   * Space's Units in one write where they fit, one Unit's conflict costing the others nothing. Each group
   * is built once, whatever number of times its part is sent.
   */
  async transactGroups(groups: StoreOp[][], o: { tail?: number } = {}): Promise<GroupOutcome[]> {
    const built = groups.map((g) => this.items(g));
    await this.writeCovers(groups.flat());
    return landGroups(
      built,
      (b) => b.items.length,
      TRANSACTION_MAX_ITEMS,
      (part) =>
        this.run(
          () => part.flatMap((b) => b.items),
          part.flatMap((b) => b.reasons),
        ),
      o.tail,
    );
  }

  /** The items a list of store ops writes (with the slug claims each carries), and why each could be refused. */
  private items(ops: StoreOp[]): { items: unknown[]; reasons: string[] } {
    // DynamoDB refuses an item over 400 KB only after the call; refuse it here, before anything is sent.
    for (const o of ops) checkItemSize(o.kind, o.item);
    const reasons: string[] = [];
    const e = this.t.e;
    const items = ops.flatMap((o) => {
      // A release counter is stored under the name of its Target's counter.
      const item =
        o.kind === 'ReleaseCounter'
          ? { ...(o.item as ReleaseCounter), Name: releaseCounterName((o.item as ReleaseCounter).TargetID) }
          : Writes.indexKeys(o.kind, o.item as Record<string, unknown>);
      const entity = e[o.kind === 'ReleaseCounter' ? 'Counter' : o.kind]!;
      const scope = Writes.slugScope(o.kind, item);
      const slugKind = o.kind.toLowerCase();
      const slug = String(item.Slug ?? '');
      const out: unknown[] = [];
      const add = (op: unknown, reason: string) => {
        out.push(op);
        reasons.push(reason);
      };
      switch (o.op) {
        case 'create':
          if (scope)
            add(
              this.claim(scope, slugKind, slug, String(item[ID_FIELD[o.kind as SpaceKind]])),
              REASONS.slugTaken(o.kind, slug),
            );
          add(
            entity.create(Writes.clean(entity, item)).commit(),
            o.kind === 'Revision' || o.kind === 'Mutation'
              ? REASONS.revisionTaken
              : o.kind === 'Mark'
                ? REASONS.marked
                : `the ${o.kind} already exists`,
          );
          break;
        case 'update': {
          add(
            this.patch(
              entity,
              Writes.keyOf(o.kind, item),
              item,
              o.expectedVersion,
              o.before as Record<string, unknown> | undefined,
            ),
            REASONS.stale(o.kind),
          );
          if (scope && o.oldSlug !== undefined && o.oldSlug !== slug) {
            add(
              this.claim(scope, slugKind, slug, String(item[ID_FIELD[o.kind as SpaceKind]])),
              REASONS.slugTaken(o.kind, slug),
            );
            add(this.unclaim(scope, slugKind, o.oldSlug), 'slug claim missing');
          }
          break;
        }
        case 'delete': {
          const del = entity.delete(Writes.keyOf(o.kind, item));
          const guarded =
            typeof item.Version === 'number' ? del.where((a, op) => op.eq!(a.Version, item.Version)) : del;
          add(guarded.commit(), REASONS.stale(o.kind));
          if (scope) add(this.unclaim(scope, slugKind, slug), 'slug claim missing');
          break;
        }
        case 'put':
          add(entity.put(Writes.clean(entity, item)).commit(), 'mark');
          break;
      }
      return out;
    });
    return { items, reasons };
  }
}

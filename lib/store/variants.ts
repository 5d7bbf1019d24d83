import { createConversions } from 'electrodb';
import type { Mark, Mutation, Revision, Space, StoredRevision, Target } from '../model/entities.ts';
import type { StoreOp, VariantStore } from '../ports/store.ts';
import * as E from './entities.ts';
import { checkCursor, ID_FIELD, orgScope, spaceScope, type Table } from './table.ts';
import { markOp, type Writes } from './transact.ts';

/** A revision without its data: what a list of revisions reads. */
const REVISION_META = [
  'OrganizationID',
  'SpaceID',
  'UnitID',
  'RevisionID',
  'RevisionNum',
  'Description',
  'Source',
  'UserID',
  'ChangeSetID',
  'DataHash',
  'DataSize',
  'CreatedAt',
] as const;
/** A revision without its data: its hash and validation errors with the rest of what a list reads. */
const REVISION_FACTS = Object.keys(
  (E.Revision as unknown as { schema: { attributes: object } }).schema.attributes,
).filter((a) => a !== 'Data');
/** Revisions' and mutations' keys (UnitID, RevisionNum) as DynamoDB cursors and back. */
const revisionCursors = createConversions(E.Revision);
const mutationCursors = createConversions(E.Mutation);
const byUnitKey = (m: { TagID: string; UnitID: string }) => ({ TagID: m.TagID, UnitID: m.UnitID });

/** Spaces, Components, Units and their revisions, mutations and marks, Links, Targets and the other Space-resident kinds. */
export function variants(t: Table, w: Writes): VariantStore {
  const { db, e } = t;
  const marksOfTag = async (tagId: string): Promise<Mark[]> =>
    (await db.Mark.query.primary({ TagID: tagId }).go({ pages: 'all' })).data;
  const marksOfUnit = async (unitId: string): Promise<Mark[]> =>
    (await db.Mark.query.byUnit({ UnitID: unitId }).go({ pages: 'all' })).data;
  /** A page of a Unit's items keyed by revision number (revisions, mutations), newest first, with DynamoDB's cursor; another Unit's cursor is Invalid. */
  async function unitPage<T extends { RevisionNum: number }>(
    kind: 'Revision' | 'Mutation',
    unitId: string,
    limit: number,
    after?: string,
    attributes?: readonly string[],
  ): Promise<{ items: { item: T; cursor: string }[]; next?: string }> {
    const cursors = kind === 'Revision' ? revisionCursors : mutationCursors;
    checkCursor(cursors, after, { UnitID: unitId });
    const page = await e[kind]!.query.primary!({ UnitID: unitId }).go({
      order: 'desc',
      limit,
      cursor: after ?? null,
      ...(attributes ? { attributes } : {}),
    });
    return {
      items: (page.data as T[]).map((item) => ({
        item,
        cursor: cursors.fromComposite.toCursor({ UnitID: unitId, RevisionNum: item.RevisionNum }),
      })),
      next: page.cursor ?? undefined,
    };
  }

  return {
    spaceIdBySlug: (orgId, slug) => t.claimed(orgScope(orgId), 'space', slug),
    componentIdBySlug: (orgId, slug) => t.claimed(orgScope(orgId), 'component', slug),
    idInSpace: (spaceId, kind, slug) => t.claimed(spaceScope(spaceId), kind.toLowerCase(), slug),

    // Spaces and Components live under their organization.
    async createSpace(space) {
      await w.transact([{ op: 'create', kind: 'Space', item: space }]);
    },
    async getSpace(orgId, spaceId) {
      return (await db.Space.get({ OrganizationID: orgId, SpaceID: spaceId }).go()).data ?? undefined;
    },
    async spaceAndSlug(orgId, spaceId, kind, slug) {
      const [space, claim] = (await t.getAcross([
        { kind: 'Space', key: { OrganizationID: orgId, SpaceID: spaceId } },
        { kind: 'SlugClaim', key: { Scope: spaceScope(spaceId), Kind: kind.toLowerCase(), Slug: slug } },
      ])) as [Space | undefined, { ID: string } | undefined];
      return { space, id: claim?.ID };
    },
    async listSpaces(orgId) {
      return (await db.Space.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data;
    },
    async updateSpace(space, expectedVersion, oldSlug) {
      await w.transact([{ op: 'update', kind: 'Space', item: space, expectedVersion, oldSlug }]);
    },
    async deleteSpace(space) {
      await w.transact([{ op: 'delete', kind: 'Space', item: space }]);
    },
    async createComponent(c) {
      await w.transact([{ op: 'create', kind: 'Component', item: c }]);
    },
    async getComponent(orgId, id) {
      return (await db.Component.get({ OrganizationID: orgId, ComponentID: id }).go()).data ?? undefined;
    },
    async listComponents(orgId) {
      return (await db.Component.query.primary({ OrganizationID: orgId }).go({ pages: 'all' })).data;
    },

    // Units and their revisions.
    async getUnit(spaceId, unitId) {
      return (await db.Unit.get({ SpaceID: spaceId, UnitID: unitId }).go()).data ?? undefined;
    },
    async listUnits(spaceId) {
      return (await db.Unit.query.primary({ SpaceID: spaceId }).go({ pages: 'all' })).data;
    },
    async updateUnit(unit, expectedVersion, oldSlug) {
      await w.transact([{ op: 'update', kind: 'Unit', item: unit, expectedVersion, oldSlug }]);
    },
    async deleteUnit(unit) {
      await w.transact([{ op: 'delete', kind: 'Unit', item: unit }]);
      // Revisions, mutations and marks are history: removed after the unit, in batches; nothing reads them without the unit.
      const keys = { pages: 'all', attributes: ['UnitID', 'RevisionNum'] } as const;
      const [revs, muts, marks] = await Promise.all([
        db.Revision.query.primary({ UnitID: unit.UnitID }).go(keys),
        db.Mutation.query.primary({ UnitID: unit.UnitID }).go(keys),
        marksOfUnit(unit.UnitID),
      ]);
      if (revs.data.length) await db.Revision.delete(revs.data).go();
      if (muts.data.length) await db.Mutation.delete(muts.data).go();
      if (marks.length) await db.Mark.delete(marks.map(byUnitKey)).go();
    },
    async getRevision(unitId, num) {
      return ((await db.Revision.get({ UnitID: unitId, RevisionNum: num }).go()).data ?? undefined) as
        StoredRevision | undefined;
    },
    // Revisions by key: BatchGetItem takes 100 keys a request, and what comes back unprocessed is read alone.
    getRevisions: (keys) => t.batchRead<StoredRevision>('Revision', keys.map(revisionKey)),
    revisionsAt: (keys) => t.batchRead<Revision>('Revision', keys.map(revisionKey), REVISION_FACTS),
    async revisionsBetween(unitId, after, upTo) {
      if (upTo <= after) return [];
      return (
        await db.Revision.query
          .primary({ UnitID: unitId })
          .between({ RevisionNum: after + 1 }, { RevisionNum: upTo })
          .go({ pages: 'all', attributes: REVISION_META })
      ).data;
    },
    async listRevisions(unitId) {
      return (await db.Revision.query.primary({ UnitID: unitId }).go({ pages: 'all', attributes: REVISION_META })).data;
    },
    async revisionPage(unitId, limit, after) {
      const page = await unitPage<Revision>('Revision', unitId, limit, after, REVISION_META);
      return { items: page.items.map(({ item, cursor }) => ({ revision: item, cursor })), next: page.next };
    },
    /** A page of what a Unit's revisions changed, newest first, with DynamoDB's cursor over the Unit's Mutation items. */
    async mutationPage(unitId, limit, after) {
      const page = await unitPage<Mutation>('Mutation', unitId, limit, after);
      return { items: page.items.map(({ item, cursor }) => ({ mutation: item, cursor })), next: page.next };
    },
    async listMutations(unitId) {
      return (await db.Mutation.query.primary({ UnitID: unitId }).go({ pages: 'all' })).data;
    },

    // Tags, ChangeSets, Filters, Targets: Space-resident, one shape.
    async createInSpace(kind, item, also) {
      await w.transact([{ op: 'create', kind, item }, ...(also?.marks ?? []).map(markOp)]);
    },
    async getInSpace<T>(kind: keyof typeof ID_FIELD, spaceId: string, id: string) {
      return ((await e[kind]!.get({ SpaceID: spaceId, [ID_FIELD[kind]]: id }).go()).data ?? undefined) as T | undefined;
    },
    async listInSpace<T>(kind: string, spaceId: string) {
      return (await e[kind]!.query.primary!({ SpaceID: spaceId }).go({ pages: 'all' })).data as T[];
    },
    async updateInSpace(kind, item, expectedVersion, oldSlug) {
      await w.transact([{ op: 'update', kind, item, expectedVersion, oldSlug }]);
    },
    async deleteInSpace(kind, item) {
      await w.transact([{ op: 'delete', kind, item }]);
      if (kind === 'Tag') {
        const marks = await marksOfTag(String((item as Record<string, unknown>).TagID));
        if (marks.length) await db.Mark.delete(marks.map(byUnitKey)).go();
      }
    },
    async closeChangeSet(cs, next, tags, marks, unlock) {
      await w.transact([
        { op: 'update', kind: 'ChangeSet', item: next, expectedVersion: cs.Version },
        ...tags.map((tag): StoreOp => ({ op: 'create', kind: 'Tag', item: tag })),
        ...marks.map(markOp),
        ...unlock.map((u): StoreOp => ({
          op: 'update',
          kind: 'Unit',
          item: { ...u, ChangeSetID: undefined, ChangeSetStartRevisionNum: undefined, Version: u.Version + 1 },
          expectedVersion: u.Version,
        })),
      ]);
    },

    async linksInto(unitId) {
      return (await db.Link.query.byUpstream({ ToUnitID: unitId }).go({ pages: 'all' })).data;
    },
    async targetsDeploying(orgId, deployObject) {
      return (await db.Target.query.byDeployObject({ DeployKey: `${orgId}#${deployObject}` }).go({ pages: 'all' }))
        .data as Target[];
    },
    async spacesReleasingTo(targetId) {
      return (await db.Space.query.byTarget({ ReleaseTargetID: targetId }).go({ pages: 'all' })).data as Space[];
    },

    async putMark(m) {
      await w.transact([markOp(m)]);
    },
    marksOfTag,
    marksOfUnit,
    async marksAt(unitIds, tagIds) {
      const [units, tags] = [[...new Set(unitIds)], [...new Set(tagIds)]];
      const read = await t.batchRead<Mark>(
        'Mark',
        units.flatMap((UnitID) => tags.map((TagID) => ({ TagID, UnitID }))),
      );
      return read.sort((a, b) => (a.UnitID < b.UnitID ? -1 : a.UnitID > b.UnitID ? 1 : a.TagID < b.TagID ? -1 : 1));
    },
  };
}

const revisionKey = (k: { UnitID: string; RevisionNum: number }) => ({ UnitID: k.UnitID, RevisionNum: k.RevisionNum });

import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import type { ChangeOrder, Link, Mutation, StoredRevision, Tag } from '../../lib/model/entities.ts';
import { WriteRefused } from '../../lib/model/errors.ts';
import type { Store, StoreOp } from '../../lib/ports/store.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';

/** A store over a fresh table, each transaction's items shown to `see` as it is sent. */
async function storeSeeing(
  name: string,
  see: (items: { Update?: { UpdateExpression: string } }[]) => void,
): Promise<Store> {
  const client = dynamoClient(inject('dynamoEndpoint'));
  const table = `${name}-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand')
        see((args.input as { TransactItems: { Update?: { UpdateExpression: string } }[] }).TransactItems);
      return next(args);
    },
    { step: 'initialize', name: 'seeTransactions' },
  );
  return dynamoStore(client, table);
}

/** The table's packing of groups (a promotion writes a Space's Units so): counted in DynamoDB items, slug claims included. */
describe('groups of writes on DynamoDB', () => {
  const tag = (spaceId: string, slug: string, version = 1): Tag => ({
    OrganizationID: 'org-1',
    SpaceID: spaceId,
    TagID: `tag-${slug}`,
    Slug: slug,
    Labels: {},
    Annotations: {},
    CreatedAt: '2026-12-03T00:00:00.000Z',
    UpdatedAt: '2026-12-03T00:00:00.000Z',
    Version: version,
  });
  const create = (t: Tag): StoreOp => ({ op: 'create', kind: 'Tag', item: t });

  it('land whole, each refused one alone (by the item DynamoDB names, claims counted), the tail only after all; packed in as few transactions as fit', async () => {
    let transactions = 0;
    const store = await storeSeeing('groups', () => transactions++);
    await store.transact([create(tag('s1', 'taken'))]);
    transactions = 0;
    // Each create of a Tag is two items (its slug claim and itself). Group 1 takes a slug already taken; group 3 updates a Tag not at that Version.
    const groups: StoreOp[][] = [
      [create(tag('s1', 'a')), create(tag('s1', 'b'))],
      [create(tag('s1', 'c')), create(tag('s1', 'taken'))],
      [create(tag('s1', 'd'))],
      [{ op: 'update', kind: 'Tag', item: tag('s1', 'taken', 7), expectedVersion: 6 }],
      [create(tag('s1', 'e'))],
    ];
    const out = await store.transactGroups(groups, { tail: 1 });
    expect(out.map((o) => (o instanceof WriteRefused ? o.message : o))).toEqual([
      'landed',
      "a Tag with slug 'taken' already exists",
      'landed',
      'the Tag was changed by someone else since it was read (its Version no longer matches); read it again and retry',
      'skipped',
    ]);
    const slugs = (await store.listInSpace<Tag>('Tag', 's1')).map((t) => t.Slug).sort();
    expect(slugs).toEqual(['a', 'b', 'd', 'taken']);
    // One transaction refused for group 1, again refused for group 3, then the rest landed.
    expect(transactions).toBe(3);
    // 60 Tags in 15 groups of 4 (8 items each, claims included): 120 items, in 2 transactions (12 groups, 96 items; then 3).
    transactions = 0;
    const many = Array.from({ length: 15 }, (_, g) =>
      Array.from({ length: 4 }, (_, i) => create(tag('s2', `m-${g}-${i}`))),
    );
    expect(await store.transactGroups(many)).toEqual(Array(15).fill('landed'));
    expect(transactions).toBe(2);
    expect(await store.listInSpace<Tag>('Tag', 's2')).toHaveLength(60);
  });

  it('an update given the item as read writes only what differs (an index key’s fields together), and leaves what a whole write would', async () => {
    const expressions: string[] = [];
    const store = await storeSeeing('patch', (items) => {
      for (const t of items) if (t.Update) expressions.push(t.Update.UpdateExpression);
    });
    const link = (id: string): Link => ({
      OrganizationID: 'org-1',
      SpaceID: 's1',
      LinkID: id,
      Slug: id,
      DisplayName: 'shown',
      Labels: { a: '1' },
      Annotations: {},
      CreatedAt: '2026-12-03T00:00:00.000Z',
      UpdatedAt: '2026-12-03T00:00:00.000Z',
      Version: 1,
      FromUnitID: 'u-down',
      ToUnitID: 'u-up',
      ToSpaceID: 's0',
      UpdateType: 'UpgradeUnit',
      Squash: true,
      UpstreamLastMergedRevisionNum: 1,
      DownstreamLastMergedRevisionNum: 1,
    });
    await store.transact([
      { op: 'create', kind: 'Link', item: link('whole') },
      { op: 'create', kind: 'Link', item: link('diff') },
    ]);
    // The same change both ways: the cursor moves, the upstream Unit changes (an index key), an optional field goes.
    const change = (l: Link): Link => ({
      ...l,
      ToUnitID: 'u-other',
      UpstreamLastMergedRevisionNum: 3,
      DisplayName: undefined,
      Version: 2,
      UpdatedAt: '2026-12-03T01:00:00.000Z',
    });
    expressions.length = 0;
    await store.transact([{ op: 'update', kind: 'Link', item: change(link('whole')), expectedVersion: 1 }]);
    await store.transact([
      { op: 'update', kind: 'Link', item: change(link('diff')), expectedVersion: 1, before: link('diff') },
    ]);
    const [whole, diff] = await Promise.all(['whole', 'diff'].map((id) => store.getInSpace<Link>('Link', 's1', id)));
    const { LinkID: _a, Slug: _b, ...w } = whole!;
    const { LinkID: _c, Slug: _d, ...d } = diff!;
    expect(d).toEqual(w);
    expect(d).toMatchObject({
      ToUnitID: 'u-other',
      UpstreamLastMergedRevisionNum: 3,
      Version: 2,
      Squash: true,
      Labels: { a: '1' },
    });
    expect(d.DisplayName).toBeUndefined();
    // The index moved with it: the Link is found from its new upstream Unit, not the old.
    expect((await store.linksInto('u-other')).map((l) => l.LinkID).sort()).toEqual(['diff', 'whole']);
    expect(await store.linksInto('u-up')).toEqual([]);
    // The whole write sets every field; the other only what changed (the Slug, Labels and times made stay as they are).
    expect(expressions[0]).toMatch(/#Slug\b/);
    expect(expressions[1]).not.toMatch(/#Slug\b|#Labels\b|#CreatedAt\b|#Squash\b/);
    expect(expressions[1]).toMatch(/#ToUnitID\b.*REMOVE #DisplayName/);
    // Nor the key's fields, or the entity's name and version ElectroDB keeps on the item: they are what they were.
    expect(expressions[0]).toMatch(/#LinkID = .*#__edb_e__ = /);
    expect(expressions[1]).not.toMatch(/#SpaceID\b|#LinkID\b|#__edb_e__|#__edb_v__/);
    // A stale Version is still refused.
    await expect(
      store.transact([
        {
          op: 'update',
          kind: 'Link',
          item: { ...change(link('diff')), Version: 3 },
          expectedVersion: 1,
          before: link('diff'),
        },
      ]),
    ).rejects.toThrow(/changed by someone else/);
  });

  it('a ChangeOrder’s scope is stored as 16 bytes a Space: 10,000 Spaces fit one item, written and updated, read back as the IDs', async () => {
    const scopes: unknown[] = [];
    const store = await storeSeeing('scope', (items) => {
      for (const i of items as {
        Put?: { Item: Record<string, unknown> };
        Update?: { ExpressionAttributeValues?: Record<string, unknown> };
      }[]) {
        if (i.Put?.Item.InScopeSpaceIDs !== undefined) scopes.push(i.Put.Item.InScopeSpaceIDs);
        for (const v of Object.values(i.Update?.ExpressionAttributeValues ?? {}))
          if (v instanceof Uint8Array) scopes.push(v);
      }
    });
    const ids = Array.from({ length: 10_000 }, () => randomUUID());
    const co = {
      OrganizationID: 'org-1',
      SpaceID: 'base',
      ChangeOrderID: randomUUID(),
      Slug: 'wide',
      Labels: {},
      Annotations: {},
      UpdateType: 'MergeUnits',
      InScopeSpaceIDs: ids,
      StartTagID: 't1',
      EndTagID: 't2',
      PublishTagID: 't3',
      SkippedUnits: [],
      PriorRevisions: 'Include',
      Promotions: [],
      PromotionFailures: [],
      PromotionOverrides: [],
      CreatedAt: '2026-12-07T00:00:00.000Z',
      UpdatedAt: '2026-12-07T00:00:00.000Z',
      Version: 1,
    } as unknown as ChangeOrder;
    await store.transact([{ op: 'create', kind: 'ChangeOrder', item: co }]);
    expect(scopes).toHaveLength(1);
    expect(scopes[0]).toBeInstanceOf(Uint8Array);
    expect((scopes[0] as Uint8Array).length).toBe(160_000);
    const read = await store.getInSpace<ChangeOrder>('ChangeOrder', 'base', co.ChangeOrderID);
    expect(read?.InScopeSpaceIDs).toEqual(ids);
    // Its promotions' records of the Spaces they reached are packed alike: 6,000 of them beside the scope still fit.
    const promotions = [
      { PromotedAt: '2026-12-07T01:00:00.000Z', SpaceIDs: ids.slice(4000), Stage: 'prod', UserID: 'u' },
    ];
    const narrower = { ...read!, InScopeSpaceIDs: ids.slice(1), Promotions: promotions, Version: 2 };
    await store.transact([{ op: 'update', kind: 'ChangeOrder', item: narrower, expectedVersion: 1 }]);
    const updated = await store.getInSpace<ChangeOrder>('ChangeOrder', 'base', co.ChangeOrderID);
    expect(updated?.InScopeSpaceIDs).toEqual(ids.slice(1));
    expect(updated?.Promotions).toEqual(promotions);
    expect((scopes.at(-1) as Uint8Array).length).toBe(159_984);
    // And so are its overrides' and halts' Spaces: 3,000 promoted, forced and halted beside the scope fit (as strings
    // they would take 330 KB more, past the item).
    const prod = ids.slice(7000);
    const records = {
      Promotions: [{ PromotedAt: '2026-12-07T02:00:00.000Z', SpaceIDs: prod, Stage: 'prod', UserID: 'u' }],
      PromotionOverrides: [
        {
          FailedGates: [],
          OverriddenAt: '2026-12-07T02:00:00.000Z',
          Reason: 'r',
          SpaceIDs: prod,
          Stage: 'prod',
          UserID: 'u',
        },
      ],
      PromotionHalts: [
        {
          HaltedAt: '2026-12-07T02:00:00.000Z',
          Stage: 'prod',
          UserID: 'u',
          Allowance: 0,
          FailedSpaceIDs: prod.slice(0, 1),
          NotStartedSpaceIDs: prod.slice(1),
        },
      ],
    };
    await store.transact([
      { op: 'update', kind: 'ChangeOrder', item: { ...updated!, ...records, Version: 3 }, expectedVersion: 2 },
    ]);
    const forced = await store.getInSpace<ChangeOrder>('ChangeOrder', 'base', co.ChangeOrderID);
    expect(forced).toMatchObject(records);
    expect(forced?.InScopeSpaceIDs).toEqual(ids.slice(1));
  });

  it('a revision and its mutation are two items, written in one transaction and read back apart', async () => {
    const written: number[] = [];
    const store = await storeSeeing('fold', (items) => written.push(items.length));
    const revision = (n: number, data: string): StoredRevision => ({
      OrganizationID: 'org-1',
      SpaceID: 's1',
      UnitID: 'u1',
      RevisionID: `r${n}`,
      RevisionNum: n,
      Source: 'Update',
      UserID: 'user-1',
      DataHash: 'h',
      DataSize: data.length,
      Data: data,
      CreatedAt: '2026-12-03T00:00:00.000Z',
      Description: `rev ${n}`,
    });
    const mutation = (n: number, value: string): Mutation => ({
      OrganizationID: 'org-1',
      SpaceID: 's1',
      UnitID: 'u1',
      MutationID: `m${n}`,
      RevisionNum: n,
      Source: 'Update',
      Changes: [{ Resource: 'Deployment/x', Path: 'spec.replicas', Op: 'Update', Value: value }],
      CreatedAt: '2026-12-03T00:00:00.000Z',
    });
    await store.transact([
      { op: 'create', kind: 'Revision', item: revision(1, 'small') },
      { op: 'create', kind: 'Mutation', item: mutation(1, 'one') },
    ]);
    // Data and changes that fit one item each.
    const big = 'x'.repeat(200 * 1024);
    await store.transact([
      { op: 'create', kind: 'Revision', item: revision(2, big) },
      { op: 'create', kind: 'Mutation', item: mutation(2, big) },
    ]);
    expect(written).toEqual([2, 2]);
    expect(await store.getRevision('u1', 1)).toEqual(revision(1, 'small'));
    expect((await store.getRevisions([{ UnitID: 'u1', RevisionNum: 1 }]))[0]).toEqual(revision(1, 'small'));
    expect(await store.listMutations('u1')).toEqual([mutation(1, 'one'), mutation(2, big)]);
    expect((await store.mutationPage('u1', 5)).items.map((i) => i.mutation)).toEqual([
      mutation(2, big),
      mutation(1, 'one'),
    ]);
    // A range of revisions is read as it is asked, (after, upTo], without their data.
    for (let n = 3; n <= 12; n++)
      await store.transact([
        { op: 'create', kind: 'Revision', item: revision(n, `d${n}`) },
        { op: 'create', kind: 'Mutation', item: mutation(n, `v${n}`) },
      ]);
    const range = async (after: number, upTo: number) =>
      (await store.revisionsBetween('u1', after, upTo)).map((r) => r.RevisionNum);
    expect(await range(3, 10)).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(await range(0, 2)).toEqual([1, 2]);
    expect(await range(9, 12)).toEqual([10, 11, 12]);
    expect(await range(10, 10)).toEqual([]);
    expect((await store.revisionsBetween('u1', 4, 5))[0]).toEqual({ ...revision(5, ''), Data: undefined, DataSize: 2 });
    // Revisions by key without their data: what the gates and an approval read of them.
    const facts = await store.revisionsAt([
      { UnitID: 'u1', RevisionNum: 7 },
      { UnitID: 'u1', RevisionNum: 2 },
      { UnitID: 'u1', RevisionNum: 99 },
    ]);
    expect(facts.map((r) => r.RevisionNum).sort((a, b) => a - b)).toEqual([2, 7]);
    expect(facts.find((r) => r.RevisionNum === 7)).toEqual({ ...revision(7, ''), Data: undefined, DataSize: 2 });
    expect(facts.every((r) => !('Data' in r))).toBe(true);
    // A second write of revision 1 (a race) is still refused.
    await expect(
      store.transact([
        { op: 'create', kind: 'Revision', item: revision(1, 'again') },
        { op: 'create', kind: 'Mutation', item: mutation(1, 'again') },
      ]),
    ).rejects.toThrow(/another write made that revision first/);
  });
});

import { describe, expect, it } from 'vitest';
import { intervalOf } from '../../lib/changes/intervals.ts';
import { checkNoSkips, downstreamOf, selectScope } from '../../lib/changes/scope.ts';
import {
  deriveProgress,
  lastNonEmpty,
  reachedStage,
  recordedStageIndex,
  storedFilters,
  type StageSpaces,
} from '../../lib/changes/state.ts';
import { mergeWaves } from '../../lib/changes/waves.ts';
import type { ChangeOrder, Link, Progress, Space, Unit } from '../../lib/model/entities.ts';
import { Conflict, Invalid } from '../../lib/model/errors.ts';
import { parseWhere } from '../../lib/where/index.ts';
import { planPromotion } from '../../lib/changes/promote/plan.ts';

const space = (id: string, upstream?: string, labels: Record<string, string> = {}, target?: string): Space => ({
  OrganizationID: 'o',
  SpaceID: id,
  Slug: id,
  Labels: labels,
  Annotations: {},
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
  UpstreamSpaceID: upstream,
  ReleaseTargetID: target,
});

// base → dev → staging → prod-us, prod-eu; other is unrelated.
const base = space('base');
const dev = space('dev', 'base', { Stage: 'dev' });
const staging = space('staging', 'dev', { Stage: 'staging' });
const prodUs = space('prod-us', 'staging', { Stage: 'prod' }, 't1');
const prodEu = space('prod-eu', 'staging', { Stage: 'prod' }, 't2');
const other = space('other');
const fleet = [base, dev, staging, prodUs, prodEu, other];
const byId = new Map(fleet.map((s) => [s.SpaceID, s]));

describe('scope: which Spaces a ChangeOrder covers', () => {
  it('follows the clone lineage hop by hop from the base', () => {
    expect([...downstreamOf(base, fleet, new Set())].sort()).toEqual(['dev', 'prod-eu', 'prod-us', 'staging']);
    expect([...downstreamOf(staging, fleet, new Set())].sort()).toEqual(['prod-eu', 'prod-us']);
  });

  it.each([
    {
      name: 'by default, wherever the lineage reaches, in slug order',
      listed: undefined,
      where: [],
      expected: ['dev', 'prod-eu', 'prod-us', 'staging'],
    },
    {
      name: 'a where selects among every Space, never the base',
      listed: undefined,
      where: ["Labels.Stage IN ('dev', 'staging')"],
      expected: ['dev', 'staging'],
    },
    {
      name: 'a list ANDed with a where keeps what both select',
      listed: ['dev', 'staging', 'prod-us'],
      where: ["Labels.Stage != 'prod'"],
      expected: ['dev', 'staging'],
    },
    { name: 'a listed base is dropped', listed: ['base', 'dev'], where: [], expected: ['dev'] },
  ])('$name', ({ listed, where, expected }) => {
    expect(
      selectScope({
        base,
        spaces: fleet,
        updateType: 'UpgradeUnit',
        linkSpaces: new Set(),
        listed,
        queries: where.map((w) => parseWhere(w, 'Space')),
      }),
    ).toEqual(expected);
  });

  it('reaches only the MergeUnits Links for a MergeUnits change', () => {
    expect(
      selectScope({ base, spaces: fleet, updateType: 'MergeUnits', linkSpaces: new Set(['other']), queries: [] }),
    ).toEqual(['other']);
  });

  it.each([
    { scope: ['staging'], message: "the selection skips space 'dev', which lies between 'base' and 'staging'" },
    {
      scope: ['dev', 'prod-us'],
      message: "the selection skips space 'staging', which lies between 'base' and 'prod-us'",
    },
    { scope: ['other'], message: "space 'other' is not downstream of 'base'" },
  ])('refuses a selection $scope that does not move hop by hop', ({ scope, message }) => {
    expect(() => checkNoSkips(base, scope, byId, 'UpgradeUnit')).toThrow(Invalid);
    expect(() => checkNoSkips(base, scope, byId, 'UpgradeUnit')).toThrow(message);
  });
});

const unit = (over: Partial<Unit> = {}): Unit => ({
  OrganizationID: 'o',
  SpaceID: 'base',
  UnitID: 'u1',
  Slug: 'backend',
  Labels: {},
  Annotations: {},
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
  ToolchainType: 'Kubernetes/YAML',
  HeadRevisionNum: 5,
  LastReleasedRevisionNum: 0,
  UpstreamRevisionNum: 0,
  Conflicts: [],
  ProtectedPaths: [],
  DataHash: '',
  DataSize: 0,
  ValidationErrors: {},
  ...over,
});
const link = (spaceId: string, cursor: number): Link => ({
  OrganizationID: 'o',
  SpaceID: spaceId,
  LinkID: `l-${spaceId}`,
  Slug: 'l',
  Labels: {},
  Annotations: {},
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
  FromUnitID: `d-${spaceId}`,
  ToUnitID: 'u1',
  ToSpaceID: 'base',
  UpdateType: 'UpgradeUnit',
  UpstreamLastMergedRevisionNum: cursor,
  DownstreamLastMergedRevisionNum: 1,
});

describe('intervals: where each Unit’s change starts and ends', () => {
  const spaceName = (id: string) => id;
  it.each([
    {
      name: 'from the followers’ cursor to head',
      u: unit(),
      links: [link('dev', 3)],
      end: undefined,
      prior: 'Include',
      want: { start: 3, end: 5 },
    },
    {
      name: 'to what the end Tag marks',
      u: unit(),
      links: [link('dev', 3)],
      end: { revision: 4 },
      prior: 'Include',
      want: { start: 3, end: 4 },
    },
    {
      name: 'an end Tag that marks nothing on the Unit carries nothing',
      u: unit(),
      links: [link('dev', 3)],
      end: {},
      prior: 'Include',
      want: { start: 3, end: 3 },
    },
    {
      name: 'an end Tag that marks nothing, with All, runs to head',
      u: unit(),
      links: [link('dev', 3)],
      end: {},
      prior: 'All',
      want: { start: 3, end: 5 },
    },
    {
      name: 'nothing follows it: no change at what was released',
      u: unit({ LastReleasedRevisionNum: 2 }),
      links: [],
      end: undefined,
      prior: 'Include',
      want: { start: 2, end: 2 },
    },
    {
      name: 'nothing follows it, with All: released to head',
      u: unit({ LastReleasedRevisionNum: 2 }),
      links: [],
      end: undefined,
      prior: 'All',
      want: { start: 2, end: 5 },
    },
  ] as const)('$name', ({ u, links, end, prior, want }) => {
    const i = intervalOf({ unit: u, updateType: 'UpgradeUnit', links: [...links], endTagged: end, prior, spaceName });
    expect('start' in i && { start: i.start, end: i.end }).toEqual(want);
    expect('start' in i && !!i.skipped).toBe(want.start === want.end);
  });

  it.each([
    {
      name: 'a ConfigHub/YAML Unit',
      u: unit({ ToolchainType: 'ConfigHub/YAML' }),
      type: 'UpgradeUnit',
      reason: 'ConfigHub/YAML units are not promoted',
    },
    {
      name: 'a Unit nothing follows by a MergeUnits Link',
      u: unit(),
      type: 'MergeUnits',
      reason: 'nothing follows it by a MergeUnits link',
    },
  ] as const)('leaves out $name', ({ u, type, reason }) => {
    expect(intervalOf({ unit: u, updateType: type, links: [], prior: 'Include', spaceName })).toEqual({
      unit: u,
      excluded: reason,
    });
  });

  it('refuses Links that disagree on the start, naming each Space and cursor', () => {
    const run = () =>
      intervalOf({
        unit: unit(),
        updateType: 'UpgradeUnit',
        links: [link('dev', 3), link('qa', 4)],
        prior: 'Include',
        spaceName,
      });
    expect(run).toThrow(Conflict);
    expect(run).toThrow(
      "unit 'backend': the links pointing at it disagree on where the change starts: dev has merged to revision 3, qa has merged to revision 4",
    );
  });

  it('refuses an end Tag before where the followers have merged to', () => {
    expect(() =>
      intervalOf({
        unit: unit(),
        updateType: 'UpgradeUnit',
        links: [link('dev', 4)],
        endTagged: { revision: 2 },
        prior: 'Include',
        spaceName,
      }),
    ).toThrow('past the end of the change (2)');
  });
});

const co = (over: Partial<ChangeOrder> = {}): ChangeOrder => ({
  OrganizationID: 'o',
  SpaceID: 'base',
  ChangeOrderID: 'c',
  Slug: 'c',
  Labels: {},
  Annotations: {},
  CreatedAt: '',
  UpdatedAt: '',
  Version: 1,
  UpdateType: 'UpgradeUnit',
  InScopeSpaceIDs: ['dev', 'staging', 'prod-us', 'prod-eu'],
  StartTagID: 's',
  EndTagID: 'e',
  PublishTagID: 'p',
  SkippedUnits: {},
  PriorRevisions: 'Include',
  Promotions: [],
  PromotionFailures: [],
  PromotionOverrides: [],
  ...over,
});
const took = (...ids: string[]): Progress[] =>
  ids.map((id) => ({ ChangeOrderID: 'c', SpaceID: id, ResolvedAt: 't', Version: 1 }));
const released = (...ids: string[]): Progress[] =>
  ids.map((id) => ({
    ChangeOrderID: 'c',
    SpaceID: id,
    ResolvedAt: 't',
    ReleaseID: `r-${id}`,
    ReleaseNum: 1,
    Version: 2,
  }));

describe('State: derived from which Spaces took and released the change', () => {
  it.each([
    { name: 'New while only the base holds it', c: co(), p: took('base'), state: 'New' },
    { name: 'InProgress while some Spaces took it', c: co(), p: took('base', 'dev'), state: 'InProgress' },
    {
      name: 'Resolved when every Space took it',
      c: co(),
      p: took('base', 'dev', 'staging', 'prod-us', 'prod-eu'),
      state: 'Resolved',
    },
    {
      name: 'Resolved while one Space with a Target has not released it',
      c: co(),
      p: [...took('base', 'dev', 'staging', 'prod-us'), ...released('prod-eu')],
      state: 'Resolved',
    },
    {
      name: 'Released when every Space with a Target released it',
      c: co(),
      p: [...took('base', 'dev', 'staging'), ...released('prod-us', 'prod-eu')],
      state: 'Released',
    },
    {
      name: 'Resolved, not Released, when no Space in scope has a Target',
      c: co({ InScopeSpaceIDs: ['dev', 'staging'] }),
      p: took('base', 'dev', 'staging'),
      state: 'Resolved',
    },
    { name: 'Aborted wins', c: co({ AbortedReason: 'bad' }), p: took('base', 'dev'), state: 'Aborted' },
  ])('$name', ({ c, p, state }) => {
    const d = deriveProgress(c, p, byId);
    expect(d.State).toBe(state);
    expect(d.ResolvedSpaceIDs).toEqual(p.map((x) => x.SpaceID));
    expect(d.ReleasedSpaceIDs).toEqual(p.filter((x) => x.ReleaseID).map((x) => x.SpaceID));
  });

  it('reads Completed from the recorded Stage', () => {
    expect(deriveProgress(co({ Stage: 'Completed' }), [], byId).Completed).toBe(true);
    expect(deriveProgress(co({ Stage: 'prod' }), [], byId).Completed).toBe(false);
  });
});

const stage = (name: string, spaces: Space[], prerequisites: string[] = []): StageSpaces => ({
  name,
  spaces,
  prerequisites,
  release: [],
});
const stages = [
  stage('dev', [dev]),
  stage('staging', [staging], ['Released']),
  stage('prod', [prodEu, prodUs], ['Healthy']),
];

describe('Stage: the latest Stage every Space of which took the change', () => {
  it.each([
    { taken: [], want: -1 },
    { taken: ['dev'], want: 0 },
    { taken: ['dev', 'staging', 'prod-us'], want: 1 },
    { taken: ['dev', 'staging', 'prod-us', 'prod-eu'], want: 2 },
    { taken: ['staging'], want: -1 },
  ])('taken by $taken is stage index $want', ({ taken, want }) => {
    expect(reachedStage(stages, (id) => taken.includes(id))).toBe(want);
  });

  it('passes over a Stage with no Spaces: it neither holds the change back nor counts as reached', () => {
    const withEmpty = [stage('dev', [dev]), stage('empty', []), stage('prod', [prodUs]), stage('tail', [])];
    expect(reachedStage(withEmpty, () => true)).toBe(2);
    expect(reachedStage(withEmpty, (id) => id === 'dev')).toBe(0);
    expect(lastNonEmpty(withEmpty, 2)).toBe(true);
    expect(lastNonEmpty(withEmpty, 0)).toBe(false);
    expect(reachedStage([stage('empty', []), stage('tail', [])], () => true)).toBe(-1);
  });

  it.each([
    { recorded: undefined, want: -1 },
    { recorded: 'staging', want: 1 },
    { recorded: 'Completed', want: 3 },
  ])('a recorded Stage $recorded stands at $want', ({ recorded, want }) => {
    expect(
      recordedStageIndex(
        co({
          Stage: recorded,
          ChangeWorkflow: { Stages: stages.map((s) => ({ Name: s.name, WhereSpace: 'Slug IS NOT NULL' })) },
        }),
      ),
    ).toBe(want);
  });
});

describe('MergeUnits waves: a Space after the Spaces it merges from', () => {
  const t = (id: string) => ({ SpaceID: id });
  it.each([
    { name: 'independent Spaces in one wave', from: {}, want: [['a', 'b', 'c']] },
    { name: 'a chain in order', from: { c: ['b'], b: ['a'] }, want: [['a'], ['b'], ['c']] },
    {
      name: 'sources outside the targets do not hold a Space back',
      from: { a: ['x'], b: ['a'] },
      want: [['a', 'c'], ['b']],
    },
    { name: 'a cycle lands whole in the last wave', from: { a: ['b'], b: ['a'] }, want: [['c'], ['a', 'b']] },
  ])('$name', ({ from, want }) => {
    const mergesFrom = new Map(Object.entries(from).map(([k, v]) => [k, new Set<string>(v as string[])]));
    expect(mergeWaves([t('a'), t('b'), t('c')], mergesFrom).map((w) => w.map((s) => s.SpaceID))).toEqual(want);
  });
});

describe('promotion plan: which Stage, which Spaces, gates over which', () => {
  const ids = (l: Space[]) => l.map((s) => s.SpaceID);
  it('takes the first Stage with a Space that has not taken the change; gates over the base for the first', () => {
    const p = planPromotion(stages, base, () => false, {});
    expect(
      'stageIndex' in p && { i: p.stageIndex, targets: ids(p.targets), before: ids(p.before), earlier: ids(p.earlier) },
    ).toEqual({ i: 0, targets: ['dev'], before: ['base'], earlier: [] });
  });

  it('gates a later Stage over the Stage before, and requires every earlier Stage to have taken it', () => {
    const p = planPromotion(stages, base, (id) => id === 'dev', { targetStage: 'prod' });
    expect(
      'stageIndex' in p && { i: p.stageIndex, targets: ids(p.targets), before: ids(p.before), earlier: ids(p.earlier) },
    ).toEqual({ i: 2, targets: ['prod-eu', 'prod-us'], before: ['staging'], earlier: ['dev'] });
  });

  it('gates a Stage over the nearest earlier Stage with Spaces, never over an empty one', () => {
    const p = planPromotion(
      [stage('dev', [dev]), stage('qa', []), stage('staging', [staging], ['Released'])],
      base,
      (id) => id === 'dev',
      {},
    );
    expect('stageIndex' in p && { i: p.stageIndex, before: ids(p.before), earlier: ids(p.earlier) }).toEqual({
      i: 2,
      before: ['dev'],
      earlier: [],
    });
    const first = planPromotion([stage('qa', []), stage('staging', [staging], ['Released'])], base, () => false, {});
    expect('stageIndex' in first && ids(first.before)).toEqual(['base']);
  });

  it('passes over a base Stage, which took the change when it was made, and gates the next over the base', () => {
    const p = planPromotion(
      [stage('Base', [base]), stage('dev', [dev], ['Released'])],
      base,
      (id) => id === 'base',
      {},
    );
    expect('stageIndex' in p && { i: p.stageIndex, targets: ids(p.targets), before: ids(p.before) }).toEqual({
      i: 1,
      targets: ['dev'],
      before: ['base'],
    });
  });

  it('gates named Spaces at the latest Stage among them', () => {
    const p = planPromotion(stages, base, () => false, { named: [prodUs, staging, prodUs] });
    expect('stageIndex' in p && { i: p.stageIndex, targets: ids(p.targets) }).toEqual({
      i: 2,
      targets: ['prod-us', 'staging'],
    });
  });

  it.each([
    { name: 'a Stage the workflow lacks', s: stages, req: { targetStage: 'qa' }, want: { unknownStage: 'qa' } },
    { name: 'every Stage reached', s: stages, req: {}, want: { everyStageReached: true } },
    { name: 'no workflow and no Spaces named', s: [], req: {}, want: { noWorkflow: true } },
  ])('refuses: $name', ({ s, req, want }) => {
    expect(planPromotion(s, base, () => true, req)).toEqual(want);
  });
});

describe('a ChangeOrder list: what its where rules out before anything is derived', () => {
  const filters = (...wheres: string[]) => storedFilters(wheres.map((w) => parseWhere(w, 'ChangeOrder')));
  it('leaves out Completed ones for Completed = false, and aborted ones for States only a ChangeOrder not aborted has', () => {
    expect(filters("State IN ('New', 'InProgress', 'Resolved', 'Released') AND Completed = false")).toEqual({
      notCompleted: true,
      notAborted: true,
    });
    expect(filters('Completed != true')).toEqual({ notCompleted: true, notAborted: false });
    expect(filters("State = 'InProgress'")).toEqual({ notCompleted: false, notAborted: true });
    // A where that may keep one of them rules nothing out.
    expect(filters("State IN ('New', 'Aborted')", 'Completed = true', "State != 'Aborted'", "Slug = 'x'")).toEqual({
      notCompleted: false,
      notAborted: false,
    });
    expect(filters("State IN ('Restored')")).toEqual({ notCompleted: false, notAborted: false });
    // Two queries (a where and a saved filter) are ANDed: either may rule out.
    expect(filters("Slug LIKE 'r%'", 'Completed = false')).toEqual({ notCompleted: true, notAborted: false });
    expect(filters()).toEqual({ notCompleted: false, notAborted: false });
  });
});

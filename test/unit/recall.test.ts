import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../support/memory-store.ts';
import { promoteJob } from '../../lib/changes/promote/job.ts';
import { recallMatch } from '../../lib/changes/recall.ts';

describe('what a recall watches for (pure)', () => {
  it.each([
    [['Degraded'], { Health: 'Degraded' }, 'Degraded'],
    [['Degraded', 'Failed'], { Health: 'Progressing', Operation: 'Failed' }, 'Failed'],
    [['Failed'], { Health: 'Degraded', Operation: 'Succeeded' }, undefined],
    [['Missing'], { Health: 'Healthy', Operation: 'Failed' }, undefined],
    [['Unknown', 'Degraded'], { Health: 'Unknown' }, 'Unknown'],
  ] as const)('On %j, reported %j: %s', (on, status, match) => {
    expect(recallMatch([...on], status)).toBe(match);
  });
});

describe('a recall stops a running promotion job', () => {
  it('starts no Space of a part once the change order is recalled', async () => {
    const store = new MemoryStore();
    const co = {
      ChangeOrderID: 'co-1',
      SpaceID: 'base',
      OrganizationID: 'org',
      Slug: 'scale',
      Version: 1,
      Recall: { SpaceSlug: 'acme-canary', Matched: 'Degraded', RecalledAt: '2026-12-02T12:04:11.000Z' },
    };
    await store.transact([{ op: 'create', kind: 'ChangeOrder', item: co }]);
    const deps = {
      store,
      bus: { put: async () => undefined },
      now: () => new Date(),
      newId: () => 'x',
      newToken: () => 't',
    };
    const plan = {
      ChangeOrderID: 'co-1',
      SpaceID: 'base',
      BaseSpaceID: 'base',
      Options: {},
      Gates: [],
      FailedGates: [],
      Taken: [],
      TargetIDs: ['p1', 'p2'],
    };
    const out = await promoteJob.run(
      deps as never,
      { JobID: 'job-1', Caller: { OrganizationID: 'org', UserID: 'u' } } as never,
      plan as never,
      0,
      [
        { SpaceID: 'p1', Slug: 'acme-p1' },
        { SpaceID: 'p2', Slug: 'acme-p2' },
      ] as never,
    );
    expect(out.results).toEqual(
      ['p1', 'p2'].map((id) => ({
        SpaceID: id,
        SpaceSlug: `acme-${id}`,
        Action: 'NotStarted',
        Error: 'not started: the change order was recalled (acme-canary reported Degraded at 2026-12-02T12:04:11.000Z)',
        Units: [],
      })),
    );
  });
});

import { describe, expect, it } from 'vitest';
import { jobView, resumeJob, runJobPart, startJob, type JobHandler, type JobHandlers } from '../../lib/changes/jobs.ts';
import type { Caller, Space } from '../../lib/model/entities.ts';
import type { Deps, JobMessage } from '../../lib/ports/deps.ts';
import { MemoryStore } from '../support/memory-store.ts';
import { decompress } from '../../lib/config/hash.ts';

const caller: Caller = { OrganizationID: 'org', UserID: 'alice', Role: 'Admin' };
const space = (slug: string) => ({ SpaceID: `id-${slug}`, Slug: slug }) as Space;

/** A kind of job that records, per Space, which wave ran it; the end writes the list it got. */
function recorder(
  log: string[],
  fail: (slug: string) => boolean = () => false,
): JobHandler<{ note: string }, { SpaceID: string; Slug: string; Wave: number; Note: string; Failed?: string }> {
  return {
    async run(_deps, _job, plan, wave, spaces) {
      for (const s of spaces) if (fail(s.Slug)) throw new Error(`${s.Slug} broke`);
      log.push(...spaces.map((s) => `${wave}:${s.Slug}`));
      return { results: spaces.map((s) => ({ SpaceID: s.SpaceID, Slug: s.Slug, Wave: wave, Note: plan.note })) };
    },
    gaveUp: (spaces, error) =>
      spaces.map((s) => ({ SpaceID: s.SpaceID, Slug: s.Slug, Wave: -1, Note: '', Failed: error })),
    summary: (r) => ({
      SpaceID: r.SpaceID,
      Action: r.Failed ? 'Failed' : 'Done',
      ...(r.Failed ? { Error: r.Failed } : {}),
    }),
    async finish(deps, _job, plan, results, end) {
      await deps.store.transact(end(results.some((r) => r.Failed) ? 207 : 200, { Note: plan.note }));
    },
    answer: (head, results) => ({
      ...(head as object),
      Slugs: results.map((r) => r.Slug),
      Failed: results.filter((r) => r.Failed).map((r) => r.Slug),
    }),
  };
}

/**
 * Deps whose queue only collects messages, dropping one already waiting (as a FIFO queue's deduplication
 * does); the test delivers them, in any order, as often as it likes.
 */
function setup() {
  const store = new MemoryStore();
  const sent: JobMessage[] = [];
  const waiting = new Set<string>();
  const key = (m: JobMessage) => `${m.JobID}:${m.Wave}:${m.Part}`;
  let n = 0;
  const deps: Deps = {
    store,
    bus: { put: async () => undefined },
    now: () => new Date('2026-12-03T00:00:00Z'),
    newId: () => `id-${++n}`,
    newToken: () => 't',
    jobs: {
      queue: {
        send: async (ms) => {
          for (const m of ms) {
            if (waiting.has(key(m))) continue;
            waiting.add(key(m));
            sent.push(m);
          }
        },
      },
      thresholdSpaces: 2,
      partSpaces: 2,
    },
  };
  const run = (handlers: JobHandlers, m: JobMessage, giveUp?: string) => {
    waiting.delete(key(m));
    return runJobPart(deps, handlers, m, giveUp);
  };
  /** The process dies: what the queue held is lost. */
  const lose = () => {
    sent.length = 0;
    waiting.clear();
  };
  return { store, sent, deps, run, lose };
}

const waves = [['a', 'b', 'c'].map(space), [space('d')], ['e', 'f'].map(space)];

describe('jobs', () => {
  it('runs wave after wave, each part once, and ends with the answer its handler gives', async () => {
    const { sent, deps, store, run } = setup();
    const log: string[] = [];
    const handlers = { Promote: recorder(log) } as unknown as JobHandlers;
    const job = await startJob(deps, caller, { jobId: 'j1', kind: 'Promote', waves, plan: { note: 'n' } });
    expect(job).toMatchObject({ State: 'Running', Total: 6, Parts: [2, 1, 1], PartSpaces: 2 });
    expect(await store.runningJobs()).toEqual(['j1']);
    // Only the first wave is sent; the next is sent by whoever writes the wave's last part.
    expect(sent).toEqual([
      { JobID: 'j1', Wave: 0, Part: 0 },
      { JobID: 'j1', Wave: 0, Part: 1 },
    ]);
    await run(handlers, sent[1]!);
    const midway = await jobView(deps, handlers, caller, 'j1');
    expect(midway).toMatchObject({ State: 'Running', Done: 1, Total: 6 });
    expect(midway.Spaces!.map((s) => `${s.SpaceSlug}:${s.State}`)).toEqual([
      'a:Pending',
      'b:Pending',
      'c:Done',
      'd:Pending',
      'e:Pending',
      'f:Pending',
    ]);
    await run(handlers, sent[0]!);
    expect(sent.slice(2)).toEqual([{ JobID: 'j1', Wave: 1, Part: 0 }]);
    // A message delivered again does nothing twice (the next wave's part, still waiting, is not sent twice).
    await run(handlers, sent[0]!);
    expect(sent).toHaveLength(3);
    await run(handlers, sent[2]!);
    await run(handlers, sent[3]!);
    expect(log).toEqual(['0:c', '0:a', '0:b', '1:d', '2:e', '2:f']);
    const done = await jobView(deps, handlers, caller, 'j1');
    expect(done).toMatchObject({
      State: 'Done',
      Done: 6,
      Status: 200,
      Result: { Note: 'n', Slugs: ['a', 'b', 'c', 'd', 'e', 'f'], Failed: [] },
    });
    // The Job item keeps the answer's head only; what each Space came to is read from its parts.
    expect(JSON.parse(decompress((await store.getJob('j1'))!.Result!))).toEqual({ Note: 'n' });
    // A brief view is where the job stands and how it was answered, without the Spaces or the answer.
    expect(await jobView(deps, handlers, caller, 'j1', { brief: true })).toEqual({
      JobID: 'j1',
      Kind: 'Promote',
      State: 'Done',
      UserID: 'alice',
      CreatedAt: '2026-12-03T00:00:00.000Z',
      UpdatedAt: '2026-12-03T00:00:00.000Z',
      FinishedAt: '2026-12-03T00:00:00.000Z',
      Total: 6,
      Done: 6,
      Failed: 0,
      Status: 200,
    });
    expect(await store.runningJobs()).toEqual([]);
    // Another organization does not see it.
    await expect(jobView(deps, handlers, { ...caller, OrganizationID: 'other' }, 'j1')).rejects.toThrow(
      "job 'j1' not found",
    );
  });

  it('writes a part given up on as failed, so the job still ends and says which Spaces failed', async () => {
    const { sent, deps, run } = setup();
    const handlers = { Promote: recorder([], (s) => s === 'd') } as unknown as JobHandlers;
    await startJob(deps, caller, { jobId: 'j2', kind: 'Promote', waves, plan: { note: 'n' } });
    await run(handlers, sent[0]!);
    await run(handlers, sent[1]!);
    await expect(run(handlers, sent[2]!)).rejects.toThrow('d broke');
    await run(handlers, sent[2]!, 'd broke');
    await run(handlers, sent[3]!);
    const v = await jobView(deps, handlers, caller, 'j2');
    expect(v).toMatchObject({ State: 'Done', Status: 207, Failed: 1, Result: { Failed: ['d'] } });
    expect(v.Spaces!.find((s) => s.SpaceSlug === 'd')).toMatchObject({
      State: 'Done',
      Action: 'Failed',
      Error: 'd broke',
    });
  });

  it('is taken up after a restart from what the table says: the parts not written are sent again', async () => {
    const { sent, deps, run, lose } = setup();
    const log: string[] = [];
    const handlers = { Promote: recorder(log) } as unknown as JobHandlers;
    await startJob(deps, caller, { jobId: 'j3', kind: 'Promote', waves, plan: { note: 'n' } });
    await run(handlers, sent[0]!);
    // The process dies: the second part's message is lost.
    lose();
    await resumeJob(deps, handlers, 'j3');
    expect(sent).toEqual([{ JobID: 'j3', Wave: 0, Part: 1 }]);
    while (sent.length) await run(handlers, sent.shift()!);
    expect((await jobView(deps, handlers, caller, 'j3')).State).toBe('Done');
    expect(log).toEqual(['0:a', '0:b', '0:c', '1:d', '2:e', '2:f']);
  });

  it('finishes once when the last part is delivered to two workers at once', async () => {
    const { sent, deps, store, run } = setup();
    let finished = 0;
    const base = recorder([]);
    const handlers = {
      Promote: {
        ...base,
        finish: async (...a: Parameters<typeof base.finish>) => void (finished++, await base.finish(...a)),
      },
    } as unknown as JobHandlers;
    await startJob(deps, caller, { jobId: 'j4', kind: 'Promote', waves: [[space('a')]], plan: { note: 'n' } });
    await Promise.all([run(handlers, sent[0]!), run(handlers, sent[0]!)]);
    expect(finished).toBe(1);
    expect(await store.jobParts('j4')).toHaveLength(1);
  });
});

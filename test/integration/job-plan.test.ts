import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { JOB_PLAN_CHUNK, jobView, runJobPart, startJob, type JobHandlers } from '../../lib/changes/jobs.ts';
import type { Caller, Space } from '../../lib/model/entities.ts';
import type { Deps, JobMessage } from '../../lib/ports/deps.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';

const caller: Caller = { OrganizationID: 'org', UserID: 'alice', Role: 'Admin' };

/** A job's plan is kept in pieces beside its Job, so a plan larger than a DynamoDB item is stored and read back whole. */
describe('a job plan on DynamoDB', () => {
  it('larger than an item is written in pieces before its Job, read back whole by the worker; the Job item stays small', async () => {
    const client = dynamoClient(inject('dynamoEndpoint'));
    const table = `jobplan-${randomUUID().slice(0, 8)}`;
    await ensureTable(client, table);
    const store = dynamoStore(client, table);
    const sizes: number[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'GetItemCommand')
          sizes.push(JSON.stringify((out.output as { Item?: unknown }).Item ?? {}).length);
        return out;
      },
      { step: 'initialize', name: 'count' },
    );
    const sent: JobMessage[] = [];
    const deps: Deps = {
      store,
      bus: { put: async () => undefined },
      now: () => new Date('2026-12-07T00:00:00Z'),
      newId: () => randomUUID(),
      newToken: () => 't',
      jobs: { queue: { send: async (ms) => void sent.push(...ms) }, thresholdSpaces: 1, partSpaces: 2 },
    };
    // About 1.3 MB that does not compress: four pieces of at most JOB_PLAN_CHUNK characters.
    const note = randomBytes(1_000_000).toString('base64');
    const spaces = ['a', 'b', 'c'].map((s) => ({ SpaceID: `id-${s}`, Slug: s }) as Space);
    const seen: string[] = [];
    const handlers = {
      Promote: {
        async run(_d: unknown, _j: unknown, plan: { note: string }, _w: number, part: Space[]) {
          seen.push(...part.map((s) => `${s.Slug}:${plan.note === note}`));
          return { results: part.map((s) => ({ SpaceID: s.SpaceID })) };
        },
        gaveUp: () => [],
        summary: (r: { SpaceID: string }) => ({ SpaceID: r.SpaceID, Action: 'Done' }),
        async finish(
          d: Deps,
          _j: unknown,
          plan: { note: string },
          _r: unknown[],
          end: (s: number, h: unknown) => never[],
        ) {
          await d.store.transact(end(200, { Same: plan.note === note }));
        },
        answer: (head: object, results: unknown[]) => ({ ...head, Count: results.length }),
      },
    } as unknown as JobHandlers;

    const job = await startJob(deps, caller, { jobId: 'big', kind: 'Promote', waves: [spaces], plan: { note } });
    expect(job.PlanChunks).toBeGreaterThanOrEqual(4);
    const pieces = await store.jobPlan('big');
    expect(pieces.map((p) => p.Chunk)).toEqual([...Array(job.PlanChunks).keys()]);
    for (const p of pieces) expect(p.Data.length).toBeLessThanOrEqual(JOB_PLAN_CHUNK);
    // Kept eight days from the start: past the week the Job is kept after a job that ends within a day.
    for (const p of pieces) expect(p.ExpiresAtEpoch).toBe(Date.parse('2026-12-15T00:00:00Z') / 1000);

    // The worker reads the Job (small: no plan in it) and the plan's pieces once, then runs both parts.
    sizes.length = 0;
    for (const m of [...sent]) await runJobPart(deps, handlers, m, undefined, { firstDelivery: true });
    expect(seen).toEqual(['a:true', 'b:true', 'c:true']);
    expect(Math.max(...sizes)).toBeLessThan(4096);
    const view = await jobView(deps, handlers, caller, 'big');
    expect(view).toMatchObject({ State: 'Done', Status: 200, Result: { Same: true, Count: 3 } });
    expect(view.Spaces!.map((s) => s.SpaceSlug)).toEqual(['a', 'b', 'c']);
  });
});

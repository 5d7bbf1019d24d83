import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resume } from '../../lib/changes/job-kinds.ts';
import { runPart } from '../../lib/changes/job-kinds.ts';
import { decompress } from '../../lib/config/hash.ts';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import type { LocalJobPool } from '../../lib/local/jobs.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import type { Deps, JobMessage } from '../../lib/ports/deps.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import type { Store } from '../../lib/ports/store.ts';
import { TooLarge } from '../../lib/model/errors.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';
import { Api, deploymentYaml } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

/** A server whose promotions of more than 3 Spaces are jobs of 2-Space parts, retried quickly. */
let server: LocalServer;
let api: Api;
let deps: Deps;
let pool: LocalJobPool;
let store: Store;
const client = dynamoClient(inject('dynamoEndpoint'));

beforeAll(async () => {
  const table = `jobs-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  store = dynamoStore(client, table);
  ({ deps, pool } = localDeps(
    store,
    {},
    { jobs: { thresholdSpaces: 3, partSpaces: 2, concurrency: 2, backoff: () => 10 } },
  ));
  server = await startServer(deps, { checkAnswers: true });
  const { token } = await createOrganization(deps, `jobs-${table}`);
  api = new Api(server.url, token);
});
afterAll(async () => {
  await server.close();
});

/** A base of three Units, `n` Production variants, a one-Stage workflow and a change order setting replicas. */
async function fleet(name: string, n: number, replicas = '4'): Promise<string[]> {
  const units = ['a', 'b', 'c'].map((u) => ({ Slug: u, Data: deploymentYaml(u) }));
  expect((await api.post('/variant/upload', { Component: name, Variant: 'base', Units: units })).status).toBe(201);
  const spaces = Array.from({ length: n }, (_, i) => `p${i}`);
  for (const v of spaces)
    expect((await api.post('/variant', { Name: v, UpstreamSpaceID: `${name}-base`, Stage: 'Production' })).status).toBe(
      201,
    );
  await api.post(`/space/${name}-base/change_workflow`, {
    Slug: 'w',
    Stages: [{ Name: 'Production', WhereSpace: `Labels.Stage = 'Production' AND Slug LIKE '${name}-%'` }],
  });
  await api.post(`/space/${name}-base/function/invoke`, {
    FunctionName: 'set-replicas',
    Arguments: [replicas],
    UnitIDs: ['a', 'b', 'c'],
  });
  expect(
    (await api.post(`/space/${name}-base/change_order`, { Slug: 'scale', ChangeWorkflowID: `${name}-base/w` })).status,
  ).toBe(201);
  return spaces.map((v) => `${name}-${v}`);
}

/** Follows a job until it ends, as `cub` does; every answer seen on the way. */
async function follow(id: string): Promise<any[]> {
  const seen = [];
  for (;;) {
    const r = await api.get(`/job/${id}`);
    expect(r.status).toBe(200);
    seen.push(r.body);
    if (r.body.State === 'Done') return seen;
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** An answer with the names and ids that differ between two fleets taken out. */
const normal = (body: unknown, name: string) =>
  JSON.parse(
    JSON.stringify(body)
      .replaceAll(name, 'X')
      .replace(/"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"/g, '"ID"')
      .replace(/"\d{4}-\d\d-\d\dT[^"]+"/g, '"T"'),
  );

describe('long promotions run as jobs', () => {
  it('a stage over the threshold answers 202; the job reports each Space, then exactly the answer the request would have given', async () => {
    await fleet('sync', 7);
    const targets = await fleet('job', 7);
    const sync = await api.post('/promote', { ChangeOrderID: 'sync-base/scale', Async: false });
    expect(sync.status).toBe(200);
    // Hold the pool's second part until the test has seen the job half-way.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    pool.run = async (d, msg, giveUp) => {
      if (msg.Wave === 0 && msg.Part === 1) await held;
      return runPart(d, msg, giveUp);
    };
    const accepted = await api.post('/promote', { ChangeOrderID: 'job-base/scale' });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('location')).toBe(`/job/${accepted.body.JobID}`);
    expect(accepted.body).toMatchObject({
      Kind: 'Promote',
      State: 'Running',
      Total: 7,
      Subject: { ChangeOrderSlug: 'scale', Stage: 'Production' },
    });
    // Another promotion of the same change order waits its turn, naming the job.
    const second = await api.post('/promote', { ChangeOrderID: 'job-base/scale', Async: false });
    expect(second.status).toBe(409);
    expect(second.body.Message).toContain(`being promoted already by job ${accepted.body.JobID}`);
    for (let i = 0; i < 500 && (await api.get(`/job/${accepted.body.JobID}`)).body.Done < 5; i++)
      await new Promise((r) => setTimeout(r, 20));
    const midway = (await api.get(`/job/${accepted.body.JobID}`)).body;
    expect(midway).toMatchObject({ State: 'Running', Done: 5, Total: 7, Failed: 0 });
    // The brief answer a follower polls: the counts, without the Spaces (or a Result, still running).
    const brief = await api.get(`/job/${accepted.body.JobID}?brief=true`);
    expect(brief.status).toBe(200);
    expect(Object.keys(brief.body).sort()).toEqual(
      ['CreatedAt', 'Done', 'Failed', 'JobID', 'Kind', 'State', 'Subject', 'Total', 'UpdatedAt', 'UserID'].sort(),
    );
    expect(brief.body).toMatchObject({ State: 'Running', Done: 5, Total: 7, Failed: 0 });
    expect((await api.get(`/job/${accepted.body.JobID}?brief=yes`)).body.Message).toMatch(/brief/);
    expect(midway.Spaces.map((s: { SpaceSlug: string }) => s.SpaceSlug)).toEqual(targets);
    expect(
      midway.Spaces.filter((s: { State: string }) => s.State === 'Pending').map(
        (s: { SpaceSlug: string }) => s.SpaceSlug,
      ),
    ).toEqual(['job-p2', 'job-p3']);
    expect(
      midway.Spaces.filter((s: { State: string }) => s.State === 'Done').every(
        (s: { Action: string }) => s.Action === 'Promote',
      ),
    ).toBe(true);
    release();
    const seen = await follow(accepted.body.JobID);
    const done = seen.at(-1);
    pool.run = runPart;
    expect(done.Status).toBe(200);
    expect(normal(done.Result, 'job')).toEqual(normal(sync.body, 'sync'));
    expect(done.Result).toMatchObject({ Landed: 7, Total: 7, Stage: 'Production' });
    const co = (await api.get('/space/job-base/change_order/scale')).body;
    expect(co).toMatchObject({ State: 'Resolved', PromotionFailures: [] });
    expect(co.PromotionLease).toBeUndefined();
    expect(co.Promotions).toHaveLength(1);
    expect(co.Promotions[0].SpaceIDs).toHaveLength(7);
    for (const t of targets) expect((await api.get(`/space/${t}/unit/b/data`)).text).toContain('replicas: 4');
    expect(await deps.store.runningJobs()).not.toContain(accepted.body.JobID);
    // The Job item keeps the answer's head only; the per-Space results live in its parts (so a job of
    // 10,000 Spaces fits DynamoDB's 400 KB item).
    const stored = JSON.parse(decompress((await deps.store.getJob(accepted.body.JobID))!.Result!));
    expect(stored).toMatchObject({ Landed: 7, Total: 7 });
    expect(stored.Spaces).toBeUndefined();
  });

  it('ends with 413 when its record is too large to store, its Spaces written, rather than running on', async () => {
    const targets = await fleet('huge', 4);
    // The ChangeOrder's record of a Stage of ~10,000 Spaces is past the item limit (measured: 523 KB); here any record
    // written with the job's end is.
    const transact = store.transact;
    store.transact = async (ops, ...rest) => {
      const ends = ops.some((o) => o.kind === 'Job' && (o.item as { State?: string }).State === 'Done');
      if (ends && ops.some((o) => o.kind === 'ChangeOrder'))
        throw new TooLarge('the ChangeOrder would take 523 KB, more than one stored item holds (380 KB)');
      return transact(ops, ...rest);
    };
    let jobId: string;
    try {
      const accepted = await api.post('/promote', { ChangeOrderID: 'huge-base/scale' });
      expect(accepted.status).toBe(202);
      jobId = accepted.body.JobID;
      const done = (await follow(jobId)).at(-1);
      expect(done).toMatchObject({ State: 'Done', Status: 413, Done: 4, Total: 4, Failed: 0 });
      expect(done.Result.Message).toBe(
        'every part of the job ran, but its record could not be written: the ChangeOrder would take 523 KB, more than one stored item holds (380 KB)',
      );
      expect(
        done.Result.Spaces.map((s: { SpaceSlug: string; Action: string }) => `${s.SpaceSlug}:${s.Action}`),
      ).toEqual(targets.map((t) => `${t}:Promote`));
    } finally {
      store.transact = transact;
    }
    expect(await deps.store.runningJobs()).not.toContain(jobId);
    // cub shows the job as ended, with the status and why.
    const shown = await cubAt(server.url, api.token!)(['job', 'get', jobId, '-o', 'json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ State: 'Done', Status: 413, Result: { Code: 'PayloadTooLarge' } });
    for (const t of targets) expect((await api.get(`/space/${t}/unit/b/data`)).text).toContain('replicas: 4');
    // The lease the record would have given back is given back: the change order is not held for its 10 minutes.
    expect((await api.get('/space/huge-base/change_order/scale')).body.PromotionLease).toBeUndefined();
    const again = await api.post('/promote', { ChangeOrderID: 'huge-base/scale', Async: false });
    expect(again.status, again.text).not.toBe(409);
  });

  it('retries a part that fails, and when it fails every time reports its Spaces failed; a rerun finishes the wave', async () => {
    await fleet('flaky', 5);
    let failures = 0;
    pool.run = async (d, msg: JobMessage, giveUp) => {
      // The first part fails once and is retried; the last part fails every time.
      if (giveUp === undefined && ((msg.Part === 0 && failures++ === 0) || msg.Part === 2))
        throw new Error(`worker lost part ${msg.Part}`);
      return runPart(d, msg, giveUp);
    };
    const accepted = await api.post('/promote', { ChangeOrderID: 'flaky-base/scale', Async: true });
    expect(accepted.status).toBe(202);
    const done = (await follow(accepted.body.JobID)).at(-1);
    pool.run = runPart;
    expect(done.Status).toBe(207);
    expect(done.Result.Landed).toBe(4);
    const failed = done.Result.Spaces.filter((s: { Action: string }) => s.Action === 'Failed');
    expect(failed.map((s: { SpaceSlug: string }) => s.SpaceSlug)).toEqual(['flaky-p4']);
    expect(failed[0].Error).toMatch(
      /the job's worker gave up on it after every attempt \(worker lost part 2\).*promote again to finish/,
    );
    const co = (await api.get('/space/flaky-base/change_order/scale')).body;
    expect(co.PromotionFailures).toHaveLength(1);
    expect(co.PromotionLease).toBeUndefined();
    const rerun = await api.post('/promote', { ChangeOrderID: 'flaky-base/scale', Async: true });
    expect(rerun.status).toBe(202);
    const again = (await follow(rerun.body.JobID)).at(-1);
    expect(again.Status).toBe(200);
    expect(again.Result.Spaces.map((s: { Action: string }) => s.Action)).toEqual([
      'Unchanged',
      'Unchanged',
      'Unchanged',
      'Unchanged',
      'Promote',
    ]);
    expect((await api.get('/space/flaky-base/change_order/scale')).body.State).toBe('Resolved');
  });

  it('is taken up where the table says after the server stops in the middle of one', async () => {
    await fleet('crash', 6);
    // A server whose pool dies after the first part: nothing else it was given runs.
    const dying = localDeps(deps.store, {}, { jobs: { thresholdSpaces: 3, partSpaces: 2 } });
    let ran = 0;
    dying.pool.run = async (d, msg, giveUp) => {
      if (ran++ > 0) return new Promise<void>(() => undefined);
      return runPart(d, msg, giveUp);
    };
    const doomed = await startServer(dying.deps);
    try {
      const accepted = await new Api(doomed.url, api.token).post('/promote', { ChangeOrderID: 'crash-base/scale' });
      expect(accepted.status).toBe(202);
      for (let i = 0; i < 500 && (await api.get(`/job/${accepted.body.JobID}`)).body.Done < 2; i++)
        await new Promise((r) => setTimeout(r, 20));
      dying.pool.stop();
      expect((await api.get(`/job/${accepted.body.JobID}`)).body).toMatchObject({
        State: 'Running',
        Done: 2,
        Total: 6,
      });
      expect(await deps.store.runningJobs()).toContain(accepted.body.JobID);
      // The next start (this server's pool) resumes what the table says is unfinished.
      for (const id of await deps.store.runningJobs()) await resume(deps, id);
      const done = (await follow(accepted.body.JobID)).at(-1);
      expect(done.Status).toBe(200);
      expect(done.Result.Landed).toBe(6);
      expect((await api.get('/space/crash-base/change_order/scale')).body).toMatchObject({
        State: 'Resolved',
        PromotionFailures: [],
      });
    } finally {
      await doomed.close();
    }
  });

  it('approves over a stage and demotes as jobs, with the answers the requests would give', async () => {
    await fleet('appr', 5);
    expect((await api.post('/promote', { ChangeOrderID: 'appr-base/scale' })).status).toBe(202);
    await pool.idle();
    const approved = await api.post('/attest', {
      ChangeOrderID: 'appr-base/scale',
      Stage: 'Production',
      Note: 'looks right',
    });
    expect(approved.status).toBe(202);
    const a = (await follow(approved.body.JobID)).at(-1);
    expect(a.Status).toBe(201);
    expect(a.Result.Attestations).toHaveLength(5);
    expect(a.Result.Spaces.map((s: { Action: string }) => s.Action)).toEqual(Array(5).fill('Attest'));
    const listed = (await api.get('/space/appr-p3/attestation')).body;
    expect(listed).toEqual([expect.objectContaining({ Note: 'looks right', Type: 'Approval', Result: 'Pass' })]);
    // A dry run is never a job, and Async says so.
    expect(
      (await api.post('/attest', { ChangeOrderID: 'appr-base/scale', Stage: 'Production', DryRun: true })).status,
    ).toBe(200);
    const bad = await api.post('/attest', {
      ChangeOrderID: 'appr-base/scale',
      Stage: 'Production',
      DryRun: true,
      Async: true,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.Message).toBe(
      'Async does not apply to a dry run: it writes nothing and is answered in the request',
    );

    const co = (await api.get('/space/appr-base/change_order/scale')).body;
    await api.patch('/space/appr-base/change_order/scale', { Version: co.Version, AbortedReason: 'too many replicas' });
    const demoted = await api.post('/demote', { Space: 'appr-p1', ChangeOrderID: 'appr-base/scale', Async: true });
    expect(demoted.status).toBe(202);
    const d = (await follow(demoted.body.JobID)).at(-1);
    expect(d.Status).toBe(200);
    expect(d.Result).toMatchObject({
      SpaceSlug: 'appr-p1',
      Restored: true,
      Units: [
        { UnitSlug: 'a', Action: 'Restore' },
        { UnitSlug: 'b', Action: 'Restore' },
        { UnitSlug: 'c', Action: 'Restore' },
      ],
    });
    expect((await api.get('/space/appr-p1/unit/a/data')).text).not.toContain('replicas: 4');
  });

  it('refuses what a job cannot be, and shows a job to its organization only', async () => {
    expect((await api.get('/job/nope')).status).toBe(404);
    const other = await createOrganization(deps, `jobs-other-${randomUUID().slice(0, 4)}`);
    const outsider = new Api(server.url, other.token);
    await fleet('own', 4);
    const accepted = await api.post('/promote', { ChangeOrderID: 'own-base/scale' });
    expect(accepted.status).toBe(202);
    expect((await outsider.get(`/job/${accepted.body.JobID}`)).status).toBe(404);
    await pool.idle();
    expect((await api.post('/promote', { Space: 'own-p0', Async: true })).body.Message).toBe(
      'Async applies only to a change order promotion',
    );
    expect((await api.post('/promote', { ChangeOrderID: 'own-base/scale', Async: 'yes' })).status).toBe(400);
  });
});

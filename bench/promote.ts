/**
 * `npm run bench [-- --sizes 10,100,1000] [--runs 3] [--latency-runs 8] [--units 5] [--json] [--jobs] [--trace] [--profile file] [--cold]`: for each size, builds a fleet (a base of
 * M Units and N variant Spaces across dev, staging and prod), promotes one ChangeOrder through the three
 * stages, and prints Units promoted per second, DynamoDB requests per Unit (and by command), the
 * ceiling of the same DynamoDB engine for the minimal write per Unit (one transaction: revision, head,
 * start and end marks; 16 in flight; over at least 1,000 Units) measured in the same run just before and just after the promotions,
 * the ratio of the two (to the ceiling's mean); the same engine's
 * rate for the write a promotion does make (7 items per Unit, a Space's Units in one transaction, bare), for its reads alone
 * (each Space's Units and Links) and for the two back to back, and the promotion's ratio to each; this process's CPU over
 * the promotions (in cores: Node runs the API and the promotions on one);
 * the dry run of the prod Stage (time, requests); the requests one `changeorder get` and the rollout page's
 * first read and its next (what each poll costs) cost, and each stage's wall time. A stage runs as a user's promotion would: in
 * the request up to BATON_JOB_THRESHOLD (100) Spaces, as a job past it (marked `j`; timed to the worker pool's end, and followed
 * as cub follows it, with its progress bar on a terminal, through a second server whose requests are not counted); `--jobs`
 * runs every stage as a job. With --json, one JSON object per size;
 * with --trace, each DynamoDB request of the promotions as it is sent; with --profile, a CPU profile of them. The engine and
 * this process are both warmed first, unmeasured, until they settle (the ceiling again until two runs agree within 5%, then 100-Space
 * fleets promoted, their prod Stage as a job, until two agree within 10%); `--cold` skips the fleets. Each table is dropped once measured.
 * `npm run bench` caps V8's old space at 384 MB (package.json), as a process given 512 MB would be: uncapped, V8 sizes its
 * heap to the machine and collects lazily, so the peak RSS measured the machine more than the live set (at 2,000 Spaces 394 MB
 * uncapped, heap in use up to 243 MB; 232 MB capped at 256 MB, up to 95 MB, at the same throughput). The peak RSS, the heap
 * in use at most and V8's limit are printed.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { createOrganization } from '../lib/local/bootstrap.ts';
import { startDynamoLocal } from '../lib/local/dynamo.ts';
import { startServer } from '../lib/local/server.ts';
import { localDeps } from '../lib/local/wiring.ts';
import { dynamoStore } from '../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../lib/store/table.ts';
import {
  apiCaller,
  buildFleet,
  ceiling,
  dropTable,
  option,
  settle,
  stageCounts,
  upgradedUnits,
  warmCeiling,
} from './fleet.ts';
import { readSpace } from '../lib/changes/promote/context.ts';
import { meterCapacity } from './capacity.ts';
import { promoteAndReplay } from './replay.ts';
import { followJob, type JobAnswer } from '../cli/progress.ts';
import { FUNCTION_MEMORY_MB } from '../infra/sizes.ts';
import prices from './prices.json' with { type: 'json' };

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
const argv = process.argv.slice(2);
const SIZES = (option('sizes') ?? process.env.BENCH_SIZES ?? '10,100,1000').split(',').map(Number);
const M = Number(option('units') ?? process.env.BENCH_UNITS ?? 5);
const JSON_OUT = argv.includes('--json');
/** What a read a person waits on (get, explain, the page's poll) may cost at any size (issue 41): printed against each. */
const READ_REQUESTS = 20;
const READ_MS = 300;
/** Small fleets: runs of the 10-Space promotion and its replay, and the most the promotion's median may be of the replay's. */
const LATENCY_RUNS = Number(option('latency-runs') ?? 8);
const LATENCY_TARGET = 1.3;
/** The most a Lambda behind API Gateway may answer (its response payload limit). */
const LAMBDA_RESPONSE_BYTES = 6 * 2 ** 20;
/** Runs of each size (the issue's medians are of 3 at 100 and 1,000 Spaces). */
const RUNS = Number(option('runs') ?? 1);

/** The q-quantile of xs, between the two nearest ranks (the median of 8 is the mean of the 4th and 5th). */
function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  return sorted[lo]! + (sorted[Math.min(lo + 1, sorted.length - 1)]! - sorted[lo]!) * (at - lo);
}
/** Every stage as a job (`Async`), as a stage past the threshold runs; otherwise each as a user's promotion would run. */
const ALL_JOBS = argv.includes('--jobs');
/** Every DynamoDB request of the promotions, one line each (command, and the entity or key it touches), to see where requests go. */
const TRACING = argv.includes('--trace');
/** `--profile <file>`: a CPU profile (.cpuprofile, for Chrome DevTools) of this process over the promotions alone. */
const PROFILING = option('profile');

/** Starts the V8 profiler in this process; the returned function stops it and writes the profile. */
async function profile(file: string): Promise<() => Promise<void>> {
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async () => {
    const { profile: p } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(p));
    session.disconnect();
  };
}

/** What a request touches, for --trace: the key's or the condition's values, ElectroDB's prefixes kept (they name the entity). */
function touched(input: any): string {
  const keys = (o: any) =>
    o
      ? Object.values(o)
          .map((v: any) => String(v?.S ?? v?.N ?? v))
          .join(' ')
      : '';
  if (input.TransactItems)
    return input.TransactItems.map((t: any) => {
      const [op, x] = Object.entries(t)[0] as [string, any];
      return `${op}(${keys(x.Key ?? { pk: x.Item?.pk, sk: x.Item?.sk })})`;
    }).join(', ');
  if (input.RequestItems)
    return Object.values(input.RequestItems)
      .map((r: any) => `${(r.Keys ?? r).length} keys, first ${keys(r.Keys?.[0])}`)
      .join('; ');
  if (input.Key) return keys(input.Key);
  if (input.ExpressionAttributeValues) return `${input.IndexName ?? 'table'}: ${keys(input.ExpressionAttributeValues)}`;
  return '';
}

interface Run {
  spaces: number;
  units: number;
  seconds: number;
  requests: number;
  byCommand: Record<string, number>;
  getRequests: number;
  /** The rollout page's data (GET …/rollout), read twice: DynamoDB requests, wall time, and the queries of one Space's Releases among them. */
  rollout: { requests: number; seconds: number; releaseQueries: number }[];
  /** Each stage, from its request to its end (the job's end when it ran as one). */
  jobSeconds: number[];
  /** How each stage ran: in the request, or as a job. */
  ranAs: ('request' | 'job')[];
  /** The dry run of the prod Stage before it was promoted (not counted in the promotion's time or requests). */
  dryRun: { requests: number; seconds: number };
  /** How long each command's requests took on average (ms, from sent to answered): where the promotions wait. */
  latency: Record<string, number>;
  /** The engine's rate for the promotion's per-Space reads alone (Units and Links), in Units/s. */
  readsPerSecond: number;
  /** This process's CPU over the promotions, in cores (user + system over wall time). */
  nodeCores: number;
  /** What DynamoDB bills the promotions (bench/capacity.ts): read and write request units. */
  readUnits: number;
  writeUnits: number;
  /** Lambda time the promotions would bill: the API's requests (each stage's call) and the job worker's parts, in GB-seconds at their configured memory, and the invocations. */
  lambdaGBSeconds: number;
  lambdaInvocations: number;
  /** `changeorder get` after the promotions and `changeorder explain` of prod before it: DynamoDB requests and wall time. */
  getSeconds: number;
  explain: { requests: number; seconds: number };
  /** This process's peak resident memory while the fleet was built and promoted (MB). */
  peakRssMB: number;
  /** Its JavaScript heap in use at that peak's sampling points, at most (MB): garbage not yet collected included. */
  peakHeapMB: number;
  /** The old space's cap (--max-old-space-size, MB), as V8 was started. */
  heapLimitMB: number;
  /** The largest job's whole answer (GET /job at its end, what cub reads once): bytes and seconds; 0 when none ran as a job. */
  wholeAnswer: { bytes: number; gzipBytes: number; seconds: number };
}

async function fleet(
  endpoint: string,
  spaces: number,
  unitsPer: number,
  justBefore?: () => Promise<void>,
  warmup = false,
): Promise<Run> {
  // A warm-up run traces and profiles nothing.
  const [TRACE, PROFILE] = warmup ? [false, undefined] : [TRACING, PROFILING];
  const client = dynamoClient(endpoint);
  let requests = 0;
  let releaseQueries = 0;
  let byCommand: Record<string, number> = {};
  let tracing = false;
  /** When the command being traced began (performance.now()). */
  let commandStart = 0;
  /** Milliseconds spent waiting on each command, summed over the requests in flight. */
  const waited: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      requests++;
      const input = args.input as { IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
      // A Space's Releases, newest first (its index), as the page reads for each Space's cell.
      if (
        input.IndexName === 'gsi1' &&
        Object.values(input.ExpressionAttributeValues ?? {}).some((v) => String(v).startsWith('$release_1#'))
      )
        releaseQueries++;
      const command = String(context.commandName);
      byCommand[command] = (byCommand[command] ?? 0) + 1;
      const t = performance.now();
      const n = requests;
      try {
        return await next(args);
      } finally {
        if (tracing) waited[command] = (waited[command] ?? 0) + performance.now() - t;
        // Sent at (ms since the command began) and answered after (ms): where a command waits.
        if (TRACE && tracing)
          console.log(
            `  ${String(n).padStart(4)} ${(t - commandStart).toFixed(0).padStart(6)} +${(performance.now() - t).toFixed(0).padStart(4)} ${command.replace('Command', '')} ${touched(args.input)}`.slice(
              0,
              240,
            ),
          );
      }
    },
    { step: 'initialize', name: 'countRequests' },
  );
  const table = `bench-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  // Every stage runs as a job (as a 1,000-Space stage does): the in-process pool runs its parts.
  const meter = meterCapacity(client);
  const { deps, pool } = localDeps(dynamoStore(client, table));
  // Each part's run time: what a job worker Lambda would be billed for it.
  let partSeconds = 0;
  let parts = 0;
  const runPart = pool.run;
  pool.run = async (...a) => {
    const p0 = performance.now();
    try {
      return await runPart(...a);
    } finally {
      if (tracing) {
        partSeconds += (performance.now() - p0) / 1000;
        parts++;
      }
    }
  };
  const server = await startServer(deps);
  // What cub's follower reads (GET /job, brief while it runs, whole at the end) goes to a second server over the same
  // table through a client not counted: a user's polls are not the promotion's requests, nor its billed units.
  const followClient = dynamoClient(endpoint);
  const followServer = await startServer(localDeps(dynamoStore(followClient, table)).deps);
  // This process's resident memory, sampled while the fleet is built and promoted: the server and the job worker both run in it.
  let peakRss = process.memoryUsage().rss;
  let peakHeap = process.memoryUsage().heapUsed;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const sampler = setInterval(sample, 200);
  const { token, caller } = await createOrganization(deps, `bench-${table}`);
  const call = apiCaller(server.url, token);
  /** Each job's whole answer as cub reads it at the end: its size and how long the read took. */
  const wholeAnswers: { bytes: number; gzipBytes: number; seconds: number }[] = [];
  const followGet = async (id: string, brief: boolean): Promise<JobAnswer> => {
    const w0 = performance.now();
    const r = await fetch(`${followServer.url}/job/${encodeURIComponent(id)}${brief ? '?brief=true' : ''}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`GET /job/${id}: ${r.status} ${text.slice(0, 400)}`);
    // Sent gzipped (fetch asks for it); its size as sent is the gzip of the JSON.
    if (!brief)
      wholeAnswers.push({
        bytes: Buffer.byteLength(text),
        gzipBytes: gzipSync(text).length,
        seconds: (performance.now() - w0) / 1000,
      });
    return JSON.parse(text) as JobAnswer;
  };
  await buildFleet(call, spaces, unitsPer);
  await justBefore?.();
  requests = 0;
  byCommand = {};
  tracing = true;
  meter.reset();
  meter.on = true;
  let callSeconds = 0;
  let explain = { requests: 0, seconds: 0 };
  const stopProfile = PROFILE
    ? await profile(`${PROFILE.replace(/\.cpuprofile$/, '')}-${spaces}.cpuprofile`)
    : undefined;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let promoted = 0;
  const jobSeconds: number[] = [];
  const follows: Promise<JobAnswer>[] = [];
  const answers: any[] = [];
  const ranAs: ('request' | 'job')[] = [];
  let dryRun = { requests: 0, seconds: 0 };
  for (const stage of ['dev', 'staging', 'prod']) {
    if (stage === 'prod') {
      // The preview a user (or the rollout page) asks for before promoting the largest Stage: answered in the request.
      if (TRACE) console.log(`dry run of ${stage} (not counted):`);
      commandStart = performance.now();
      const [before, commandsBefore, waitedBefore, d0] = [requests, { ...byCommand }, { ...waited }, performance.now()];
      const [readBefore, writeBefore] = [meter.readUnits, meter.writeUnits];
      const preview = await call('POST', '/promote', {
        ChangeOrderID: 'fleet-base/bench',
        TargetStage: stage,
        DryRun: true,
      });
      if (preview.Spaces.length !== spaces - stageCounts(spaces).devAndStaging)
        throw new Error(`the dry run previewed ${preview.Spaces.length} spaces`);
      dryRun = { requests: requests - before, seconds: (performance.now() - d0) / 1000 };
      // What `cub changeorder explain` costs with the largest Stage next.
      const e0 = [requests, performance.now()] as const;
      const explained = await call('GET', '/space/fleet-base/change_order/bench/explain');
      if (explained.Stage !== stage) throw new Error(`explain named stage ${explained.Stage}`);
      explain = { requests: requests - e0[0], seconds: (performance.now() - e0[1]) / 1000 };
      requests = before;
      meter.readUnits = readBefore;
      meter.writeUnits = writeBefore;
      byCommand = commandsBefore;
      for (const k of Object.keys(waited)) waited[k] = waitedBefore[k] ?? 0;
    }
    const s0 = performance.now();
    if (TRACE) console.log(`promote ${stage}:`);
    commandStart = performance.now();
    const c0 = performance.now();
    const answer = await call('POST', '/promote', {
      ChangeOrderID: 'fleet-base/bench',
      TargetStage: stage,
      ...(ALL_JOBS || (warmup && stage === 'prod') ? { Async: true } : {}),
    });
    callSeconds += (performance.now() - c0) / 1000;
    if (answer.JobID) {
      // Followed as cub follows it (cli/progress.ts: its bar on standard error, on a terminal), through the uncounted
      // server; the stage's time is to the pool's end, not to the follower's next poll.
      follows.push(followJob(followGet, answer.JobID, `promoting ${stage} (${spaces} spaces)`, { every: 1000 }));
      await pool.idle();
      ranAs.push('job');
    } else {
      answers.push(answer);
      ranAs.push('request');
    }
    jobSeconds.push((performance.now() - s0) / 1000);
  }
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  sample();
  const cpu = process.cpuUsage(cpu0);
  tracing = false;
  meter.on = false;
  await stopProfile?.();
  const counted = requests;
  // A copy: the reads measured after the promotions (get, rollout, reads alone) are not theirs.
  const commands = { ...byCommand };
  const latency = Object.fromEntries(
    Object.entries(waited).map(([k, v]) => [k, +(v / (byCommand[k] ?? 1)).toFixed(1)]),
  );
  for (const job of await Promise.all(follows)) {
    if (job.State !== 'Done' || job.Status !== 200) throw new Error(`job ${job.JobID} ended ${job.Status}`);
    answers.push(job.Result);
  }
  for (const r of answers) {
    if (r.Landed !== r.Total) throw new Error(`${r?.Landed} of ${r?.Total} landed: ${r?.Message}`);
    promoted += upgradedUnits(r);
  }
  requests = 0;
  const g0 = performance.now();
  await call('GET', '/space/fleet-base/change_order/bench');
  const getSeconds = (performance.now() - g0) / 1000;
  const getRequests = requests;
  // What the rollout page reads at each poll: every Space's cell (progress, Release, gates) and the next promotion.
  // The first read gives each Space's Releases their entries (once); the next is what every later poll costs.
  const rollout: Run['rollout'] = [];
  for (let i = 0; i < 2; i++) {
    requests = 0;
    releaseQueries = 0;
    const r0 = performance.now();
    await call('GET', '/space/fleet-base/change_order/bench/rollout');
    rollout.push({ requests, seconds: (performance.now() - r0) / 1000, releaseQueries });
  }
  // The engine's rate for what a promotion reads per Space (its Units and its Links), alone, 16 Spaces at a time.
  const variants = (await deps.store.listSpaces(caller.OrganizationID)).filter((s) => s.Labels.Stage);
  let nextRead = 0;
  const q0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (nextRead < variants.length) await readSpace(deps, variants[nextRead++]!);
    }),
  );
  const readsPerSecond = (variants.length * unitsPer) / ((performance.now() - q0) / 1000);
  await server.close();
  await followServer.close();
  followClient.destroy();
  await dropTable(client, table);
  client.destroy();
  if (promoted !== spaces * unitsPer) throw new Error(`expected ${spaces * unitsPer} units upgraded, got ${promoted}`);
  // This process's CPU (the API, the promotions, the SDK) over the promotions, in cores: at 1 it is the bottleneck.
  const nodeCores = (cpu.user + cpu.system) / 1e6 / seconds;
  return {
    spaces,
    units: promoted,
    seconds: seconds - dryRun.seconds - explain.seconds,
    requests: counted,
    byCommand: commands,
    getRequests,
    jobSeconds,
    ranAs,
    rollout,
    dryRun,
    latency,
    readsPerSecond,
    nodeCores,
    readUnits: meter.readUnits,
    writeUnits: meter.writeUnits,
    lambdaGBSeconds: (callSeconds * FUNCTION_MEMORY_MB.Api + partSeconds * FUNCTION_MEMORY_MB.JobWorker) / 1024,
    lambdaInvocations: 3 + parts,
    getSeconds,
    explain,
    peakRssMB: peakRss / 2 ** 20,
    peakHeapMB: peakHeap / 2 ** 20,
    heapLimitMB: v8.getHeapStatistics().heap_size_limit / 2 ** 20,
    wholeAnswer: wholeAnswers.reduce((a, b) => (b.bytes > a.bytes ? b : a), { bytes: 0, gzipBytes: 0, seconds: 0 }),
  };
}

const dynamo = process.env.AWS_ENDPOINT_URL ? undefined : await startDynamoLocal();
try {
  const endpoint = process.env.AWS_ENDPOINT_URL ?? dynamo!.endpoint;
  // Both sides warmed first, unmeasured, until they settle: a JIT compiles as it runs, the engine's (a cold DynamoDB Local writes at
  // half its speed) and V8's, and the engine compiles the promotion's query, batch-read and conditional-write paths only as they run,
  // which the ceiling's bare writes do not. One 100-Space warm-up was not enough: four 100-Space runs after it in one process measured
  // 0.63, 0.77, 0.79 and 0.86 of a ceiling that held at 335 units/s (2026-12-04), so a run measured how warm it was as much as the code.
  const warm = { ceiling: await warmCeiling(endpoint), promotion: [] as number[] };
  if (!argv.includes('--cold')) {
    warm.promotion = await settle(
      async () => {
        const r = await fleet(endpoint, 100, M, undefined, true);
        return r.units / r.seconds;
      },
      0.1,
      2,
      5,
    );
  }
  const rounded = (xs: number[]) => xs.map((x) => +x.toFixed(1));
  const warmUp = { ceilingUnitsPerSecond: rounded(warm.ceiling), promote100UnitsPerSecond: rounded(warm.promotion) };
  if (!JSON_OUT)
    console.log(
      `warm-up (not measured): ceiling ${warmUp.ceilingUnitsPerSecond.join(', ')} units/s; ${warmUp.promote100UnitsPerSecond.length ? `a 100-Space fleet promoted at ${warmUp.promote100UnitsPerSecond.join(', ')} units/s` : 'no fleet (--cold)'}`,
    );
  if (!JSON_OUT) {
    console.log(
      `Fleet: a base of ${M} units; spaces 10% dev, 30% staging, 60% prod; one change order promoted through all three stages.\n`,
    );
    console.log(
      [
        'spaces'.padStart(6),
        'units'.padStart(6),
        'promote s'.padStart(9),
        'units/s'.padStart(8),
        'req/unit'.padStart(8),
        'ceiling/s'.padStart(9),
        'ratio'.padStart(6),
        'get req'.padStart(7),
        'stage s (dev/staging/prod; j: a job)',
      ].join('  '),
    );
  }
  const measured: {
    unitsPerSecond: number;
    ratio: number;
    requestsPerUnit: number;
    spaces: number;
    readUnitsPerUnit: number;
    writeUnitsPerUnit: number;
    lambdaGBSecondsPer1000Units: number;
    lambdaInvocations: number;
    units: number;
  }[] = [];
  for (const size of SIZES.flatMap((x) => Array<number>(RUNS).fill(x))) {
    // The ceiling measured just before the promotions and just after, against their mean: a machine whose speed drifts (other
    // work, a shared host's CPU taken) moves both sides of the ratio alike. Both are printed.
    let before = 0;
    const r = await fleet(endpoint, size, M, async () => void (before = await ceiling(endpoint, size * M)));
    const after = await ceiling(endpoint, r.units);
    const ceil = (before + after) / 2;
    const write = await ceiling(endpoint, r.units, M);
    const out = {
      spaces: r.spaces,
      units: r.units,
      unitsPerSecond: +(r.units / r.seconds).toFixed(1),
      requestsPerUnit: +(r.requests / r.units).toFixed(2),
      ceilingUnitsPerSecond: +ceil.toFixed(1),
      ceilingBeforeAfter: [+before.toFixed(1), +after.toFixed(1)],
      ratio: +(r.units / r.seconds / ceil).toFixed(2),
      fullWriteUnitsPerSecond: +write.toFixed(1),
      fullWriteRatio: +(r.units / r.seconds / write).toFixed(2),
      readsUnitsPerSecond: +r.readsPerSecond.toFixed(1),
      engineBoundUnitsPerSecond: +(1 / (1 / write + 1 / r.readsPerSecond)).toFixed(1),
      nodeCores: +r.nodeCores.toFixed(2),
      getRequests: r.getRequests,
      promoteSeconds: +r.seconds.toFixed(2),
      jobSeconds: r.jobSeconds.map((x) => +x.toFixed(2)),
      ranAs: r.ranAs,
      dryRunSeconds: +r.dryRun.seconds.toFixed(2),
      dryRunRequests: r.dryRun.requests,
      rolloutRequests: r.rollout[1]!.requests,
      rolloutReleaseQueries: r.rollout[1]!.releaseQueries,
      rolloutSeconds: +r.rollout[1]!.seconds.toFixed(2),
      rolloutFirstRequests: r.rollout[0]!.requests,
      rolloutFirstSeconds: +r.rollout[0]!.seconds.toFixed(2),
      requestsByCommand: r.byCommand,
      latencyMs: r.latency,
      getSeconds: +r.getSeconds.toFixed(3),
      explainRequests: r.explain.requests,
      explainSeconds: +r.explain.seconds.toFixed(3),
      readUnitsPerUnit: +(r.readUnits / r.units).toFixed(2),
      writeUnitsPerUnit: +(r.writeUnits / r.units).toFixed(2),
      lambdaGBSecondsPer1000Units: +((r.lambdaGBSeconds / r.units) * 1000).toFixed(2),
      lambdaInvocations: r.lambdaInvocations,
      peakRssMB: Math.round(r.peakRssMB),
      peakHeapMB: Math.round(r.peakHeapMB),
      heapLimitMB: Math.round(r.heapLimitMB),
      jobAnswerMB: +(r.wholeAnswer.bytes / 2 ** 20).toFixed(2),
      jobAnswerGzipMB: +(r.wholeAnswer.gzipBytes / 2 ** 20).toFixed(2),
      jobAnswerSeconds: +r.wholeAnswer.seconds.toFixed(2),
      warmUp,
    };
    measured.push(out);
    if (JSON_OUT) console.log(JSON.stringify(out));
    else {
      console.log(
        [
          String(out.spaces).padStart(6),
          String(out.units).padStart(6),
          out.promoteSeconds.toFixed(2).padStart(9),
          out.unitsPerSecond.toFixed(1).padStart(8),
          out.requestsPerUnit.toFixed(2).padStart(8),
          out.ceilingUnitsPerSecond.toFixed(1).padStart(9),
          out.ratio.toFixed(2).padStart(6),
          String(out.getRequests).padStart(7),
          out.jobSeconds.map((x, i) => `${x.toFixed(2)}${out.ranAs[i] === 'job' ? 'j' : ''}`).join(' / '),
        ].join('  '),
      );
      console.log(
        `        ceiling just before the promotions ${before.toFixed(1)} units/s, just after ${after.toFixed(1)} (the ratio is to their mean)`,
      );
      console.log(
        `        the promotion's own write, bare (7 items per Unit, a Space's Units in one transaction, 16 in flight): ${out.fullWriteUnitsPerSecond.toFixed(1)} units/s, ${(out.fullWriteUnitsPerSecond / out.ceilingUnitsPerSecond).toFixed(2)}x the ceiling; promote is ${out.fullWriteRatio.toFixed(2)}x of it`,
      );
      console.log(
        `        its reads alone (each Space's Units and Links, 16 Spaces at a time): ${out.readsUnitsPerSecond.toFixed(1)} units/s; the write and the reads back to back: ${out.engineBoundUnitsPerSecond.toFixed(1)} units/s, ${(out.engineBoundUnitsPerSecond / out.ceilingUnitsPerSecond).toFixed(2)}x the ceiling; promote is ${(out.unitsPerSecond / out.engineBoundUnitsPerSecond).toFixed(2)}x of it`,
      );
      console.log(
        `        peak resident memory while building and promoting (the server and the job worker, one process): ${out.peakRssMB} MB${out.peakRssMB <= 512 ? '' : ' (over 512)'}; its heap in use at most ${out.peakHeapMB} MB, of a ${out.heapLimitMB} MB limit`,
      );
      if (out.jobAnswerMB)
        console.log(
          `        the largest job's whole answer (GET /job once it is done, as cub reads it): ${out.jobAnswerMB} MB of JSON, sent gzipped as ${out.jobAnswerGzipMB} MB (${((out.jobAnswerGzipMB * 4) / 3).toFixed(2)} MB base64 from a Lambda, which may answer ${LAMBDA_RESPONSE_BYTES / 2 ** 20} MB${(out.jobAnswerGzipMB * 4) / 3 > LAMBDA_RESPONSE_BYTES / 2 ** 20 ? ': over' : ''}), in ${out.jobAnswerSeconds} s`,
        );
      console.log(
        `        this process's CPU over the promotions (API, promotions, SDK; one core is all it can use): ${out.nodeCores.toFixed(2)} cores`,
      );
      console.log(
        `        dry run of prod (in the request): ${out.dryRunSeconds.toFixed(2)} s, ${out.dryRunRequests} requests`,
      );
      console.log(
        `        rollout page read: first ${out.rolloutFirstRequests} requests (${(out.rolloutFirstRequests / out.spaces).toFixed(1)} per space), ${out.rolloutFirstSeconds.toFixed(2)} s; each poll after: ${out.rolloutRequests} requests (${(out.rolloutRequests / out.spaces).toFixed(1)} per space), ${out.rolloutSeconds.toFixed(2)} s; ${out.rolloutReleaseQueries} of them read one Space's Releases (the page shows each Space's newest: a query a Space is its bound, short of a summary kept beside the Spaces)`,
      );
      const reads = (n: number, sec: number) =>
        `${n} requests${n <= READ_REQUESTS ? '' : ` (over ${READ_REQUESTS})`}, ${(sec * 1000).toFixed(0)} ms${sec * 1000 <= READ_MS ? '' : ` (over ${READ_MS})`}`;
      console.log(
        `        changeorder get: ${reads(out.getRequests, out.getSeconds)}; changeorder explain (prod next): ${reads(out.explainRequests, out.explainSeconds)}; the rollout page's poll: ${reads(out.rolloutRequests, out.rolloutSeconds)}`,
      );
      console.log(
        `        billed (DynamoDB on-demand; Lambda at ${FUNCTION_MEMORY_MB.Api} MB API, ${FUNCTION_MEMORY_MB.JobWorker} MB worker, from this machine's time): ${out.readUnitsPerUnit.toFixed(2)} read and ${out.writeUnitsPerUnit.toFixed(2)} write request units per Unit; ${out.lambdaGBSecondsPer1000Units.toFixed(2)} Lambda GB-s per 1,000 Units (${out.lambdaInvocations} invocations)`,
      );
      console.log(
        `        time per request (ms, sent to answered): ${Object.entries(r.latency)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k.replace('Command', '')} ${v.toFixed(1)}`)
          .join(', ')}`,
      );
      console.log(
        `        requests by command: ${Object.entries(r.byCommand)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k.replace('Command', '')} ${(v / r.units).toFixed(2)}/unit`)
          .join(', ')}`,
      );
    }
  }
  // Each size's runs, summed up against the targets: from 100 Spaces up, at least 0.8 of the ceiling (the median of the
  // runs) and at most 1.0 request per Unit; past 1,000, within 15% of the 1,000-Space throughput.
  const bySize = SIZES.map((size) => {
    const rs = measured.filter((m) => m.spaces === size);
    return {
      spaces: size,
      runs: rs.length,
      unitsPerSecondMedian: +quantile(
        rs.map((r) => r.unitsPerSecond),
        0.5,
      ).toFixed(1),
      ratioMedian: +quantile(
        rs.map((r) => r.ratio),
        0.5,
      ).toFixed(2),
      requestsPerUnit: +quantile(
        rs.map((r) => r.requestsPerUnit),
        0.5,
      ).toFixed(2),
    };
  });
  const thousand = bySize.find((b) => b.spaces === 1000);
  if (JSON_OUT) console.log(JSON.stringify({ bySize }));
  else if (RUNS > 1 || SIZES.some((x) => x > 1000)) {
    console.log(`\nMedians of ${RUNS} run(s) a size:`);
    for (const b of bySize) {
      const checks = [
        ...(b.spaces >= 100
          ? [
              `ratio ${b.ratioMedian.toFixed(2)} (target at least 0.8)`,
              `${b.requestsPerUnit.toFixed(2)} requests per Unit (target at most 1.0)`,
            ]
          : [`ratio ${b.ratioMedian.toFixed(2)}`]),
        ...(b.spaces > 1000 && thousand
          ? [
              `${((b.unitsPerSecondMedian / thousand.unitsPerSecondMedian - 1) * 100).toFixed(0)}% against the 1,000-Space ${thousand.unitsPerSecondMedian} units/s (target within 15%)`,
            ]
          : []),
      ];
      console.log(
        `  ${String(b.spaces).padStart(6)} Spaces: ${b.unitsPerSecondMedian.toFixed(1)} units/s; ${checks.join('; ')}`,
      );
    }
  }
  // Small fleets, latency: what a user feels at 10 Spaces is how long the command takes, against the same requests replayed bare.
  if (SIZES.includes(10)) {
    const runs = [];
    for (let i = 0; i < LATENCY_RUNS; i++) runs.push(await promoteAndReplay(endpoint, 10, M, 5));
    const median = (xs: number[]) => quantile(xs, 0.5);
    const promote = median(runs.map((r) => r.promoteSeconds));
    const replay = median(runs.map((r) => r.replaySeconds));
    const ms = (xs: number[]) => ({ p50: +quantile(xs, 0.5).toFixed(1), p95: +quantile(xs, 0.95).toFixed(1) });
    const small = {
      spaces: 10,
      units: 10 * M,
      runs: LATENCY_RUNS,
      promoteSecondsMedian: +promote.toFixed(3),
      replaySecondsMedian: +replay.toFixed(3),
      promoteOverReplay: +(promote / replay).toFixed(2),
      target: LATENCY_TARGET,
      promoteSeconds: runs.map((r) => r.promoteSeconds),
      replaySeconds: runs.map((r) => r.replaySeconds),
      // dev is one Space of the ten: a single-Space promotion, as a user runs it.
      singleSpacePromoteMs: ms(runs.map((r) => r.stageSeconds[0]! * 1000)),
      getMs: ms(runs.flatMap((r) => r.getMs)),
      explainMs: ms(runs.flatMap((r) => r.explainMs)),
    };
    if (JSON_OUT) console.log(JSON.stringify({ smallFleet: small }));
    else {
      console.log(
        `\nSmall fleet, latency (10 Spaces x ${M} Units through dev, staging and prod, ${LATENCY_RUNS} runs): the promotion's median ${small.promoteSecondsMedian.toFixed(3)} s against the replay of its own requests' ${small.replaySecondsMedian.toFixed(3)} s: ${small.promoteOverReplay.toFixed(2)}x (target at most ${LATENCY_TARGET}x)`,
      );
      console.log(
        `        each run, promotion / replay (s): ${runs.map((r) => `${r.promoteSeconds.toFixed(2)}/${r.replaySeconds.toFixed(2)}`).join(', ')}`,
      );
      console.log(
        `        a single-Space promotion (dev): p50 ${small.singleSpacePromoteMs.p50} ms, p95 ${small.singleSpacePromoteMs.p95} ms; changeorder get: p50 ${small.getMs.p50} ms, p95 ${small.getMs.p95} ms; changeorder explain: p50 ${small.explainMs.p50} ms, p95 ${small.explainMs.p95} ms`,
      );
    }
  }
  // One 10,000-Space rollout priced from the largest fleet measured, per Unit (prices: bench/prices.json).
  const big = measured.at(-1);
  if (big) {
    const units = 10_000 * M;
    const d = prices.dynamodb;
    const dynamoCost =
      (units * big.readUnitsPerUnit * d.perMillionReadRequestUnits +
        units * big.writeUnitsPerUnit * d.perMillionWriteRequestUnits) /
      1e6;
    const lambdaCost =
      (units / 1000) * big.lambdaGBSecondsPer1000Units * prices.lambda.perGBSecondArm +
      ((big.lambdaInvocations * units) / big.units / 1e6) * prices.lambda.perMillionRequests;
    const price = {
      spaces: 10_000,
      units,
      fromSpaces: big.spaces,
      dynamodb: +dynamoCost.toFixed(4),
      lambda: +lambdaCost.toFixed(4),
      total: +(dynamoCost + lambdaCost).toFixed(4),
      prices: `${prices.region}, read ${prices.read}`,
    };
    if (JSON_OUT) console.log(JSON.stringify({ price }));
    else
      console.log(
        `\nOne 10,000-Space rollout (${units} Units) on AWS, at the ${big.spaces}-Space fleet's figures per Unit (${prices.region} prices read ${prices.read}, bench/prices.json): DynamoDB $${price.dynamodb.toFixed(4)}, Lambda $${price.lambda.toFixed(4)}, $${price.total.toFixed(4)} in all (API Gateway, EventBridge and the outbox's consumers not counted)`,
      );
  }
} finally {
  await dynamo?.stop();
}

/**
 * A promotion and the replay of its own requests (`npm run bench:chain`, and `npm run bench`'s small-fleet latency):
 * builds the fleet, promotes one ChangeOrder through dev, staging and prod as users would, recording each DynamoDB
 * request the three commands send (as sent: marshalled) and its round — a round begins when a request is sent while
 * none of the promotion's is in flight, and each command begins one. Then it copies the table as it was before the
 * promotions and replays the same requests on the copy, round by round, every request of a round sent at once: only
 * the SDK and the engine. With `samples`, `changeorder get` and `changeorder explain` are timed that many times each
 * after dev (not recorded, not replayed).
 */
import * as ddb from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createOrganization } from '../lib/local/bootstrap.ts';
import { startServer } from '../lib/local/server.ts';
import { localDeps } from '../lib/local/wiring.ts';
import { dynamoStore } from '../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../lib/store/table.ts';
import { apiCaller, buildFleet, ceiling, dropTable, upgradedUnits } from './fleet.ts';

interface Sent {
  round: number;
  command: string;
  input: any;
}

/** Every item of a table, read consistently. */
async function scanAll(client: ddb.DynamoDBClient, table: string): Promise<Record<string, ddb.AttributeValue>[]> {
  const items: Record<string, ddb.AttributeValue>[] = [];
  let start: Record<string, ddb.AttributeValue> | undefined;
  do {
    const r = await client.send(
      new ddb.ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    items.push(...(r.Items ?? []));
    start = r.LastEvaluatedKey;
  } while (start);
  return items;
}

/** A request's input with its table's name replaced by `to`'s (as `TableName`, and as a key of `RequestItems`). */
function retarget(x: any, from: string, to: string): any {
  if (Array.isArray(x)) return x.map((v) => retarget(v, from, to));
  if (x && typeof x === 'object' && !(x instanceof Uint8Array))
    return Object.fromEntries(
      Object.entries(x).map(([k, v]) => [
        k === from ? to : k,
        k === 'TableName' && v === from ? to : retarget(v, from, to),
      ]),
    );
  return x;
}

export async function promoteAndReplay(endpoint: string, SPACES: number, M: number, samples = 0) {
  const client = dynamoClient(endpoint);
  let recording = false;
  let inFlight = 0;
  let round = -1;
  const sent: Sent[] = [];
  const entries = new WeakMap<object, Sent>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (recording && inFlight === 0) round++;
      inFlight++;
      if (recording) entries.set(context, { round, command: String(context.commandName), input: undefined });
      try {
        return await next(args);
      } finally {
        inFlight--;
      }
    },
    { step: 'initialize', name: 'rounds' },
  );
  // The input as sent: the document client marshals it before it is serialized.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const entry = entries.get(context);
      if (entry && entry.input === undefined) {
        entry.input = args.input;
        sent.push(entry);
      }
      return next(args);
    },
    { step: 'build', name: 'recordInput' },
  );
  const table = `chain-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps, pool } = localDeps(dynamoStore(client, table));
  const server = await startServer(deps);
  const { token } = await createOrganization(deps, `chain-${table}`);
  const call = apiCaller(server.url, token);
  await buildFleet(call, SPACES, M);
  await pool.idle();
  const before = await scanAll(client, table);
  const ceilingBefore = await ceiling(endpoint, SPACES * M);
  recording = true;
  const t0 = performance.now();
  let units = 0;
  const stageSeconds: number[] = [];
  const getMs: number[] = [];
  const explainMs: number[] = [];
  let paused = 0;
  for (const stage of ['dev', 'staging', 'prod']) {
    round++;
    const s0 = performance.now();
    let answer = await call('POST', '/promote', { ChangeOrderID: 'fleet-base/bench', TargetStage: stage });
    if (answer.JobID) {
      await pool.idle();
      answer = (await call('GET', `/job/${answer.JobID}`)).Result;
    }
    if (answer.Landed !== answer.Total)
      throw new Error(`${stage}: ${answer.Landed} of ${answer.Total} landed: ${answer.Message}`);
    units += upgradedUnits(answer);
    stageSeconds.push((performance.now() - s0) / 1000);
    if (stage === 'dev' && samples) {
      // What a person waits on between promotions, timed apart from them: neither recorded nor in the promotion's time.
      const p0 = performance.now();
      recording = false;
      for (let i = 0; i < samples; i++) {
        for (const [path, into] of [
          ['/space/fleet-base/change_order/bench', getMs],
          ['/space/fleet-base/change_order/bench/explain', explainMs],
        ] as const) {
          const r0 = performance.now();
          await call('GET', path);
          into.push(performance.now() - r0);
        }
      }
      recording = true;
      paused += performance.now() - p0;
    }
  }
  const promoteSeconds = (performance.now() - t0 - paused) / 1000;
  recording = false;
  await server.close();
  if (units !== SPACES * M) throw new Error(`expected ${SPACES * M} units upgraded, got ${units}`);
  // The table as it was before the promotions, then the same requests on it, round by round.
  const copy = `replay-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, copy);
  for (let i = 0; i < before.length; i += 25) {
    let requestItems: Record<string, ddb.WriteRequest[]> | undefined = {
      [copy]: before.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })),
    };
    // What the engine left unwritten is written again: the copy must be whole.
    while (requestItems && Object.keys(requestItems).length)
      requestItems = (await client.send(new ddb.BatchWriteItemCommand({ RequestItems: requestItems })))
        .UnprocessedItems;
  }
  const rounds: Sent[][] = [];
  for (const s of sent) (rounds[s.round] ??= []).push({ ...s, input: retarget(s.input, table, copy) });
  const replayed = rounds.filter((r) => r?.length);
  const times: { writes: boolean; ms: number }[] = [];
  const t1 = performance.now();
  for (const requests of replayed) {
    const r0 = performance.now();
    // Each failure would mean the copy is not what the promotion saw: the replay would not be the same work.
    await Promise.all(requests.map((r) => client.send(new (ddb as any)[r.command](r.input))));
    // A round that writes Spaces: a transaction of more than a Unit's 4 items (the lease and the record are 1–4).
    times.push({
      writes: requests.some((r) => r.command === 'TransactWriteItemsCommand' && r.input.TransactItems.length > 4),
      ms: performance.now() - r0,
    });
  }
  const replaySeconds = (performance.now() - t1) / 1000;
  const ceilingAfter = await ceiling(endpoint, SPACES * M);
  await dropTable(client, table);
  await dropTable(client, copy);
  client.destroy();
  const ceil = (ceilingBefore + ceilingAfter) / 2;
  const writes = times.filter((t) => t.writes);
  const others = times.filter((t) => !t.writes);
  return {
    stageSeconds,
    getMs,
    explainMs,
    spaces: SPACES,
    units,
    requests: sent.length,
    rounds: replayed.length,
    ceilingUnitsPerSecond: +ceil.toFixed(1),
    promoteSeconds: +promoteSeconds.toFixed(3),
    ratio: +(units / promoteSeconds / ceil).toFixed(2),
    replaySeconds: +replaySeconds.toFixed(3),
    replayRatio: +(units / replaySeconds / ceil).toFixed(2),
    writeRounds: writes.length,
    writeRoundsMs: +writes.reduce((a, t) => a + t.ms, 0).toFixed(1),
    otherRounds: others.length,
    otherRoundsMs: +others.reduce((a, t) => a + t.ms, 0).toFixed(1),
  };
}

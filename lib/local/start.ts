import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { dynamoStore } from '../store/store.ts';
import { dynamoClient, ensureTable } from '../store/table.ts';
import { createOrganization } from './bootstrap.ts';
import { startDynamoLocal, type DynamoLocal } from './dynamo.ts';
import { startServer } from './server.ts';
import { localDeps } from './wiring.ts';
import { drainPending } from '../events/outbox.ts';
import { resume } from '../changes/job-kinds.ts';
import { startSweeps } from './sweeps.ts';

/** Where `npm start` leaves the server URL and first token for `cub`. */
/**
 * Writes the `default` context of cub's context file (the format cub reads: named contexts and the one
 * in use), keeping every other context; a file of the first format, `{server, token}`, becomes `default`.
 */
function saveDefaultContext(file: string, set: { server: string; token?: string }): void {
  let raw: {
    current?: string;
    contexts?: Record<string, { server?: string; token?: string }>;
    server?: string;
    token?: string;
  } = {};
  try {
    raw = JSON.parse(readFileSync(file, 'utf8')) as typeof raw;
  } catch {
    /* no context file yet */
  }
  const contexts =
    raw.contexts ?? (raw.server || raw.token ? { default: { server: raw.server, token: raw.token } } : {});
  contexts.default = { ...contexts.default, ...set };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ current: raw.current ?? 'default', contexts }, null, 2) + '\n', { mode: 0o600 });
}

/** The token of the `default` context (the one `npm start` writes), for the rollout page opened on this machine. */
function defaultToken(file: string): string | undefined {
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as {
      contexts?: Record<string, { token?: string }>;
      token?: string;
    };
    return raw.contexts?.default?.token ?? raw.token;
  } catch {
    return undefined;
  }
}

export function contextPath(): string {
  return process.env.CUB_CONTEXT ?? join(homedir(), '.config', 'baton', 'context.json');
}

/** `npm start`: DynamoDB Local (data under .data/), the table, a first admin on first start, and the API. */
async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const dataDir = resolve(process.env.BATON_DATA_DIR ?? '.data');
  const table = process.env.TABLE_NAME ?? 'baton';
  const port = Number(process.env.PORT ?? 4000);
  let dynamo: DynamoLocal | undefined;
  let endpoint = process.env.AWS_ENDPOINT_URL;
  if (!endpoint) {
    mkdirSync(dataDir, { recursive: true });
    dynamo = await startDynamoLocal({ port: Number(process.env.DYNAMODB_PORT ?? 8000), dbPath: dataDir });
    endpoint = dynamo.endpoint;
    console.log(`DynamoDB Local on ${endpoint} (pid ${dynamo.pid}), data in ${dataDir}`);
  }
  const client = dynamoClient(endpoint);
  // A table this build cannot use (an older build's) is refused, and the DynamoDB Local started for it stopped.
  await ensureTable(client, table).catch(async (e: unknown) => {
    await dynamo?.stop();
    throw e;
  });
  const store = dynamoStore(client, table);
  const { deps, bus, pool } = localDeps(store);
  // Events a previous run wrote but stopped before publishing go out now, oldest first.
  const late = await drainPending(store, bus);
  if (late) console.log(`Published ${late} event(s) a previous run left in the outbox`);
  // Jobs a previous run stopped in the middle of are taken up where the table says they are.
  const unfinished = await store.runningJobs();
  for (const id of unfinished)
    await resume(deps, id).catch((e: unknown) => console.error(`resuming job ${id} failed:`, e));
  if (unfinished.length) console.log(`Resumed ${unfinished.length} job(s) a previous run left unfinished`);
  // What AWS runs on a schedule: the Blocked notifications' sweep.
  const stopSweeps = startSweeps(deps, Number(process.env.BATON_SWEEP_SECONDS ?? 60) * 1000);
  const ctxFile = contextPath();
  const server = await startServer(deps, {
    port,
    host: process.env.HOST ?? '127.0.0.1',
    uiToken: () => defaultToken(ctxFile),
  });
  const existing = await deps.store.firstOrganization();
  if (!existing) {
    const { token } = await createOrganization(deps, 'default');
    saveDefaultContext(ctxFile, { server: server.url, token });
    console.log(
      `Created organization 'default' with user 'admin'. Admin token (shown once; also saved to ${ctxFile}):\n\n  ${token}\n`,
    );
  } else {
    saveDefaultContext(ctxFile, { server: server.url });
    console.log(`Organization '${existing.Slug}' already set up; cub reads its token from ${ctxFile}.`);
  }
  console.log(`Baton API listening on ${server.url} — try: npx cub space list`);
  console.log(`Rollout page: ${server.url}/ui/ (npm run seed fills it with the acme fleet)`);
  const stop = async () => {
    pool.stop();
    stopSweeps();
    await server.close();
    await dynamo?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});

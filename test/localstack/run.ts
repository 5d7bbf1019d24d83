/**
 * `npm run test:localstack`: deploys the stack to LocalStack with cdklocal and runs the smoke test
 * through the deployed API. Where no LocalStack answers, it says so and exits 0: nothing was tested,
 * and it does not claim otherwise. Start one with Docker: docker run --rm -p 4566:4566 localstack/localstack
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { smoke } from './smoke.ts';

const endpoint = process.env.LOCALSTACK_ENDPOINT ?? 'http://localhost:4566';
const stage = 'local';

async function main(): Promise<void> {
  try {
    const health = await fetch(`${endpoint}/_localstack/health`, { signal: AbortSignal.timeout(3000) });
    if (!health.ok) throw new Error(`HTTP ${health.status}`);
  } catch (e) {
    console.log(`No LocalStack answers at ${endpoint} (${(e as Error).message}): the LocalStack test was NOT run.`);
    console.log(
      'Start LocalStack with Docker (docker run --rm -p 4566:4566 localstack/localstack) and run npm run test:localstack again.',
    );
    return;
  }
  const env = {
    ...process.env,
    AWS_ENDPOINT_URL: endpoint,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    AWS_DEFAULT_REGION: process.env.AWS_REGION ?? 'us-east-1',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
  const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { env, stdio: 'inherit' });
  const outputs = '.localstack-outputs.json';
  sh('npx', ['cdklocal', 'bootstrap', '-c', `stage=${stage}`]);
  sh('npx', [
    'cdklocal',
    'deploy',
    `Baton-${stage}`,
    '-c',
    `stage=${stage}`,
    '--require-approval',
    'never',
    '--outputs-file',
    outputs,
  ]);
  const out = (JSON.parse(readFileSync(outputs, 'utf8')) as Record<string, Record<string, string>>)[`Baton-${stage}`]!;
  const created = JSON.parse(
    execFileSync(
      'npx',
      [
        'tsx',
        'lib/local/admin.ts',
        'create-organization',
        `smoke-${Date.now()}`,
        '--table',
        out.TableName!,
        '-o',
        'json',
      ],
      { env, encoding: 'utf8' },
    ),
  ) as { Token: string };
  console.log(`Smoke test through ${out.ApiUrl}`);
  await smoke(out.ApiUrl!, created.Token, (l) => console.log(`  ${l}`));
  console.log('LocalStack smoke test passed.');
}

main().catch((e: unknown) => {
  console.error(`LocalStack smoke test FAILED: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});

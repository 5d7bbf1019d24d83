import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('npx cdk synth, as a user runs it', () => {
  // The real CLI: cdk.json's app (npx tsx infra/app.ts), the environment the CLI hands it, every function bundled by esbuild, cdk-nag on.
  it('synthesizes a stage in a Region with no acknowledged finding left over, bundling every function', async () => {
    const out = mkdtempSync(join(tmpdir(), 'baton-synth-'));
    try {
      const env = {
        ...process.env,
        CDK_DISABLE_CLI_TELEMETRY: 'true',
        AWS_REGION: 'eu-west-1',
        CDK_DEFAULT_REGION: undefined,
        CDK_DEFAULT_ACCOUNT: undefined,
      };
      const r = await run('npx', ['cdk', 'synth', '--quiet', '-c', 'stage=ci', '--output', out], {
        cwd: join(import.meta.dirname, '../..'),
        env,
        maxBuffer: 16 * 1024 * 1024,
      });
      expect(r.stderr).not.toMatch(/ERROR|AwsSolutions-/);
      const template = JSON.parse(readFileSync(join(out, 'Baton-ci.template.json'), 'utf8'));
      const functions = Object.values(
        template.Resources as Record<string, { Type: string; Properties: { FunctionName?: string } }>,
      ).filter((x) => x.Type === 'AWS::Lambda::Function' && x.Properties.FunctionName?.startsWith('baton-ci-'));
      expect(functions.map((f) => f.Properties.FunctionName).sort()).toEqual([
        'baton-ci-Api',
        'baton-ci-Authorizer',
        'baton-ci-BlockedSweep',
        'baton-ci-JobWorker',
        'baton-ci-LiveStatus',
        'baton-ci-Notify',
        'baton-ci-OutboxPublisher',
        'baton-ci-Reevaluate',
      ]);
      const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
      expect(manifest.artifacts['Baton-ci'].environment).toBe('aws://unknown-account/eu-west-1');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 170_000);
});

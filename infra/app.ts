import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { App, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BatonStack } from './stack.ts';

/** A stage is a lowercase name of at most 20 letters, digits and dashes: it names the stack and every resource. */
export function stageName(raw: unknown): string {
  const stage = String(raw ?? 'dev');
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage))
    throw new Error(`-c stage=${stage}: a stage is a lowercase name of at most 20 letters, digits and dashes`);
  return stage;
}

/**
 * The CDK app: `npx cdk synth` (offline; esbuild bundles locally), `npx cdk deploy -c stage=prod`.
 * The stage names the stack and every resource in it, so several stages fit one account. cdk-nag's
 * AwsSolutions checks run on every synth: an unacknowledged finding stops it. The environment is the
 * one the CDK CLI hands the app (CDK_DEFAULT_ACCOUNT/REGION, from the profile or AWS_REGION; the CLI
 * falls back to us-east-1), so the infra test builds the app through this function with the same.
 */
export function batonApp(props: AppProps = {}, env: NodeJS.ProcessEnv = process.env): { app: App; stack: BatonStack } {
  const app = new App(props);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  const stage = stageName(app.node.tryGetContext('stage'));
  const stack = new BatonStack(app, `Baton-${stage}`, {
    stage,
    env: { account: env.CDK_DEFAULT_ACCOUNT, region: env.CDK_DEFAULT_REGION },
  });
  return { app, stack };
}

// Run as the app (`npx tsx infra/app.ts`, as cdk.json says), not when imported by a test.
const entry = process.argv[1] ? realpathSync(process.argv[1]) : '';
if (entry === realpathSync(fileURLToPath(import.meta.url))) batonApp();

import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BatonStack } from './stack.ts';

/**
 * The CDK app: `npx cdk synth` (offline; esbuild bundles locally) or `npx cdk deploy -c stage=prod`.
 * The stage names the stack and every resource in it, so several stages fit one account. cdk-nag's
 * AwsSolutions checks run on every synth: an unacknowledged finding stops it.
 */
const app = new App();
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
const stage = String(app.node.tryGetContext('stage') ?? 'dev');
if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) throw new Error(`-c stage=${stage}: a stage is a lowercase name of at most 20 letters, digits and dashes`);
new BatonStack(app, `Baton-${stage}`, {
  stage,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});

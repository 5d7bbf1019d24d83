import { App } from 'aws-cdk-lib';
import { BatonStack } from './stack.ts';

/** The CDK app: `npx cdk synth` (offline; esbuild bundles locally) or `npx cdk deploy`. */
const app = new App();
new BatonStack(app, 'Baton', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});

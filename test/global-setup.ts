import type { TestProject } from 'vitest/node';
import { startDynamoLocal, type DynamoLocal } from '../lib/local/dynamo.ts';

let dynamo: DynamoLocal | undefined;

/** One DynamoDB Local (in memory) for the whole run; each test file makes its own table in it. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const endpoint = process.env.AWS_ENDPOINT_URL;
  if (endpoint) {
    project.provide('dynamoEndpoint', endpoint);
    return async () => {};
  }
  dynamo = await startDynamoLocal({ shortRun: true });
  project.provide('dynamoEndpoint', dynamo.endpoint);
  return async () => {
    await dynamo?.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

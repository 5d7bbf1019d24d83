import { systemDeps, type Deps } from '../lib/api/deps.ts';
import { DynamoStore } from '../lib/store/dynamo-store.ts';
import { dynamoClient } from '../lib/store/table.ts';

let deps: Deps | undefined;

/** The handlers' side effects, built once per Lambda container from its environment (TABLE_NAME). */
export function lambdaDeps(): Deps {
  if (!deps) {
    const table = process.env.TABLE_NAME;
    if (!table) throw new Error('TABLE_NAME is not set');
    deps = systemDeps(new DynamoStore(dynamoClient(), table));
  }
  return deps;
}

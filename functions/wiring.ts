import { systemDeps, type Deps } from '../lib/ports/deps.ts';
import { EventBridgeBus } from '../lib/events/bus.ts';
import { DynamoStore } from '../lib/store/dynamo-store.ts';
import { dynamoClient } from '../lib/store/table.ts';

let deps: Deps | undefined;

/** The handlers' side effects, built once per Lambda container from its environment (TABLE_NAME, BUS_NAME). */
export function lambdaDeps(): Deps {
  if (!deps) {
    const table = process.env.TABLE_NAME;
    const bus = process.env.BUS_NAME;
    if (!table || !bus) throw new Error('TABLE_NAME and BUS_NAME must be set');
    deps = systemDeps(new DynamoStore(dynamoClient(), table), new EventBridgeBus(bus));
  }
  return deps;
}

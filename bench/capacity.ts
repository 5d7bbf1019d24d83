/**
 * What DynamoDB bills a request: each request of a client is sent with `ReturnConsumedCapacity: TOTAL` and the
 * engine's answer summed, as read and as write request units (by the command). DynamoDB Local reports a
 * transaction's items at the standard rate; DynamoDB bills them twice that (bench/prices.json's rule), so a
 * transaction's units are doubled here. The totals count only while `on`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

const READS = new Set([
  'GetItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'TransactGetItemsCommand',
]);
const WRITES = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);

export interface Meter {
  on: boolean;
  readUnits: number;
  writeUnits: number;
  reset(): void;
}

export function meterCapacity(client: DynamoDBClient): Meter {
  const m: Meter = {
    on: false,
    readUnits: 0,
    writeUnits: 0,
    reset() {
      m.readUnits = 0;
      m.writeUnits = 0;
    },
  };
  client.middlewareStack.add(
    (next, context) => async (args: any) => {
      const command = String(context.commandName);
      const metered = READS.has(command) || WRITES.has(command);
      if (metered) args.input.ReturnConsumedCapacity = 'TOTAL';
      const result: any = await next(args);
      if (metered && m.on) {
        const consumed = result.output?.ConsumedCapacity;
        const units = (Array.isArray(consumed) ? consumed : consumed ? [consumed] : []).reduce(
          (n: number, c: { CapacityUnits?: number }) => n + (c.CapacityUnits ?? 0),
          0,
        );
        const billed = command.startsWith('Transact') ? 2 * units : units;
        if (READS.has(command)) m.readUnits += billed;
        else m.writeUnits += billed;
      }
      return result;
    },
    { step: 'initialize', name: 'meterCapacity' },
  );
  return m;
}

import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
} from '@aws-sdk/client-dynamodb';

/** The table's key schema, shared by local set-up and the CDK stack so the two cannot drift. */
export const TABLE_KEYS = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Overloaded global secondary indexes: each entity declares what it keeps in which (lib/store/entities.ts). */
  indexes: [1, 2, 3].map((n) => ({ name: `gsi${n}`, partitionKey: `gsi${n}pk`, sortKey: `gsi${n}sk` })),
  /** Items that expire (a consumer's record of an event it handled) carry their expiry here, in epoch seconds. */
  timeToLive: 'ExpiresAtEpoch',
};

/** A DynamoDB client that honours AWS_ENDPOINT_URL (DynamoDB Local, LocalStack). */
export function dynamoClient(endpoint = process.env.AWS_ENDPOINT_URL): DynamoDBClient {
  const local = !!endpoint;
  return new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'us-east-1',
    ...(local && !process.env.AWS_ACCESS_KEY_ID
      ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }
      : {}),
  });
}

/** Creates the table if it does not exist (local runtime and tests; on AWS the CDK stack owns it). */
export async function ensureTable(client: DynamoDBClient, table: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: table }));
    return;
  } catch (e) {
    if (!(e instanceof ResourceNotFoundException) && (e as Error).name !== 'ResourceNotFoundException') throw e;
  }
  const attrs = [
    TABLE_KEYS.partitionKey,
    TABLE_KEYS.sortKey,
    ...TABLE_KEYS.indexes.flatMap((i) => [i.partitionKey, i.sortKey]),
  ];
  await client.send(
    new CreateTableCommand({
      TableName: table,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: attrs.map((a) => ({ AttributeName: a, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: TABLE_KEYS.indexes.map((i) => ({
        IndexName: i.name,
        KeySchema: [
          { AttributeName: i.partitionKey, KeyType: 'HASH' },
          { AttributeName: i.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
}

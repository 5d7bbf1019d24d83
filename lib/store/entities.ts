// The entities over Baton's one table, declared a file per aggregate (what they are made of: entity-kit.ts), and the Service over them all.
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Entity, Service } from 'electrodb';
import { primary, reqStr, service } from './entity-kit.ts';
import { ApiToken, Group, IdempotencyRecord, Organization, User } from './people-entities.ts';
import {
  Component,
  Invocation,
  Link,
  Mark,
  Mutation,
  Revision,
  Space,
  Tag,
  ChangeSet,
  Filter,
  Target,
  Unit,
} from './variant-entities.ts';
import { Attestation, AttestationCover, Counter, Release } from './release-entities.ts';
import {
  ChangeOrder,
  ChangeWorkflow,
  Hold,
  DeployWindow,
  Notification,
  NotificationDelivery,
  Job,
  JobPart,
  JobPlan,
  Outbox,
  ProcessedEvent,
  Progress,
} from './change-entities.ts';

export * from './people-entities.ts';
export * from './variant-entities.ts';
export * from './release-entities.ts';
export * from './change-entities.ts';

/** Reserves a slug within its scope (an organization or a Space); written in the create transaction. */
export const SlugClaim = new Entity({
  model: { entity: 'slug', version: '1', service },
  attributes: { Scope: reqStr, Kind: reqStr, Slug: reqStr, ID: reqStr },
  indexes: { primary: primary(['Scope'], ['Kind', 'Slug']) },
});

/** The document client over a DynamoDB client, as the entities use it. */
export function documentClient(raw: unknown): DynamoDBDocumentClient {
  // Optional fields left undefined inside maps and lists are dropped, not refused; an object with a key named
  // like a prototype member (a label called `constructor`) is still written as a map.
  return DynamoDBDocumentClient.from(raw as DynamoDBClient, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true },
  });
}

/** Builds the Service over one table with one client. */
export function makeService(raw: unknown, table: string, client = documentClient(raw)) {
  const all = {
    Organization,
    User,
    Group,
    ApiToken,
    Attestation,
    Invocation,
    SlugClaim,
    Space,
    Component,
    Unit,
    Revision,
    Mutation,
    Tag,
    ChangeSet,
    Filter,
    Target,
    Mark,
    Link,
    Release,
    AttestationCover,
    Counter,
    ChangeWorkflow,
    ChangeOrder,
    Progress,
    Outbox,
    ProcessedEvent,
    IdempotencyRecord,
    Job,
    JobPart,
    JobPlan,
    Hold,
    Window: DeployWindow,
    Notification,
    NotificationDelivery,
  };
  // A Service binds its entities to its table and client: each store gets entities of its own, so two
  // stores on two tables in one process (tests, benchmarks) never write through each other's.
  const own = Object.fromEntries(
    Object.entries(all).map(([name, e]) => [name, new Entity((e as unknown as { schema: never }).schema)]),
  ) as unknown as typeof all;
  return new Service(own, { client: client as never, table });
}
export type BatonService = ReturnType<typeof makeService>;

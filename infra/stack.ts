import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { EventBus, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { RULES } from '../lib/events/contracts.ts';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { ROUTES } from '../lib/api/routes/index.ts';
import { TABLE_KEYS } from '../lib/store/table.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Baton on AWS: one table, the HTTP API whose routes come from lib/api, an authorizer, and the handlers. */
export class BatonStack extends Stack {
  readonly table: Table;
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);

    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const gsi of TABLE_KEYS.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.name,
        partitionKey: { name: gsi.partitionKey, type: AttributeType.STRING },
        sortKey: { name: gsi.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }

    const bus = new EventBus(this, 'Bus', { eventBusName: 'baton' });

    const fn = (name: string, entry: string) =>
      new NodejsFunction(this, name, {
        entry: join(root, entry),
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize: 512,
        timeout: Duration.seconds(29),
        environment: { TABLE_NAME: this.table.tableName, BUS_NAME: bus.eventBusName, NODE_OPTIONS: '--enable-source-maps' },
        bundling: {
          format: OutputFormat.ESM,
          target: 'node22',
          sourceMap: true,
          forceDockerBundling: false,
          mainFields: ['module', 'main'],
          banner: "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);",
        },
      });

    const apiFn = fn('ApiFunction', 'functions/api.ts');
    const authorizerFn = fn('AuthorizerFunction', 'functions/authorizer.ts');
    const liveStatusFn = fn('LiveStatusFunction', 'functions/live-status.ts');

    // Least privilege: the API and the consumer read and write items and run transactions; they never scan.
    for (const f of [apiFn, liveStatusFn]) {
      f.addToRolePolicy(
        new PolicyStatement({
          actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem'],
          resources: [this.table.tableArn, `${this.table.tableArn}/index/*`],
        }),
      );
      f.addToRolePolicy(new PolicyStatement({ actions: ['events:PutEvents'], resources: [bus.eventBusArn] }));
    }

    // Deploy-tool events reach the live-status consumer by the rules lib/events declares; a failing
    // event is retried a bounded number of times, never forever.
    for (const r of RULES) {
      new Rule(this, r.name, {
        eventBus: bus,
        eventPattern: { source: r.source, detailType: r.detailType },
        targets: [new LambdaFunction(liveStatusFn, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
      });
    }
    // The authorizer only reads: the token by its hash, its user, and the organization's groups (one query).
    authorizerFn.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:GetItem', 'dynamodb:Query'], resources: [this.table.tableArn] }));

    const authorizer = new HttpLambdaAuthorizer('BearerToken', authorizerFn, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: ['$request.header.Authorization'],
      // A revoked or expired token, or a deleted user's, is refused by API Gateway within this long (locally at once).
      resultsCacheTtl: Duration.minutes(1),
    });
    this.api = new HttpApi(this, 'Api', { apiName: 'baton', defaultAuthorizer: authorizer });
    const integration = new HttpLambdaIntegration('ApiIntegration', apiFn);
    for (const r of ROUTES) {
      this.api.addRoutes({ path: r.path, methods: [HttpMethod[r.method]], integration });
    }
    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BusName', { value: bus.eventBusName });
  }
}

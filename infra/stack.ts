import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
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

    const fn = (name: string, entry: string) =>
      new NodejsFunction(this, name, {
        entry: join(root, entry),
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize: 512,
        timeout: Duration.seconds(29),
        environment: { TABLE_NAME: this.table.tableName, NODE_OPTIONS: '--enable-source-maps' },
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

    // Least privilege: the API reads and writes items and runs transactions; it never scans.
    apiFn.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:BatchWriteItem', 'dynamodb:ConditionCheckItem'],
        resources: [this.table.tableArn, `${this.table.tableArn}/index/*`],
      }),
    );
    // The authorizer makes one lookup: the token's hash.
    authorizerFn.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [this.table.tableArn] }));

    const authorizer = new HttpLambdaAuthorizer('BearerToken', authorizerFn, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: ['$request.header.Authorization'],
      resultsCacheTtl: Duration.minutes(5),
    });
    this.api = new HttpApi(this, 'Api', { apiName: 'baton', defaultAuthorizer: authorizer });
    const integration = new HttpLambdaIntegration('ApiIntegration', apiFn);
    for (const r of ROUTES) {
      this.api.addRoutes({ path: r.path, methods: [HttpMethod[r.method]], integration });
    }
    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
  }
}

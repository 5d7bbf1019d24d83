import { JOB_ATTEMPTS } from '../../lib/changes/jobs.ts';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_ROUTES, ROUTES } from '../../lib/api/routes/index.ts';
import { LIVE_STATUS_RULE, NOTIFY_RULE, STAGE_RULE } from '../../lib/events/contracts.ts';
import { BatonStack } from '../../infra/stack.ts';
import { batonApp } from '../../infra/app.ts';

let template: Template;
let app: App;
/** The app as `npx cdk synth -c stage=…` builds it (infra/app.ts), with the environment the CLI hands it; no function is bundled (bundles.test.ts checks that). */
const cliApp = (stage: string, env: NodeJS.ProcessEnv, outdir: string) =>
  batonApp({ outdir, context: { stage, 'aws:cdk:bundling-stacks': [] } }, env);
beforeAll(() => {
  process.env.CDK_DISABLE_CLI_TELEMETRY = 'true';
  // The CDK CLI with no Region configured hands the app us-east-1 and no account.
  ({ app } = cliApp('test', { CDK_DEFAULT_REGION: 'us-east-1' }, `/tmp/baton-cdk-test-${process.pid}`));
  template = Template.fromStack(app.node.findChild('Baton-test') as BatonStack);
}, 180_000);

const resources = (type: string) => Object.entries(template.findResources(type)) as [string, any][];
const apiFunction = () => resources('AWS::Lambda::Function').find(([id]) => id.startsWith('ApiFunction'))!;

describe('the synthesized stack', () => {
  it('passes cdk-nag AwsSolutions: every finding is fixed or acknowledged with its reason in code', () => {
    expect(() => app.synth({ force: true })).not.toThrow();
  });

  it.each([
    ['the CLI without a Region (us-east-1, no account)', 'dev', { CDK_DEFAULT_REGION: 'us-east-1' }],
    ['a Region set (AWS_REGION=eu-central-1)', 'prod', { CDK_DEFAULT_REGION: 'eu-central-1' }],
    [
      'an account and a Region from credentials',
      'staging',
      { CDK_DEFAULT_ACCOUNT: '123456789012', CDK_DEFAULT_REGION: 'ap-southeast-2' },
    ],
    ['no environment at all (environment-agnostic)', 'dev', {}],
  ] as [string, string, NodeJS.ProcessEnv][])(
    'synthesizes through infra/app.ts with cdk-nag for %s',
    (_what, stage, env) => {
      const { app: other } = cliApp(
        stage,
        env,
        `/tmp/baton-cdk-test-${stage}-${Object.keys(env).length}-${process.pid}`,
      );
      const assembly = other.synth({ force: true });
      expect(assembly.getStackByName(`Baton-${stage}`).environment.region).toBe(
        env.CDK_DEFAULT_REGION ?? 'unknown-region',
      );
    },
  );

  it('refuses a stage that cannot name resources, naming the rule', () => {
    expect(() => cliApp('Prod_1', {}, `/tmp/baton-cdk-test-bad-${process.pid}`)).toThrow(
      '-c stage=Prod_1: a stage is a lowercase name of at most 20 letters, digits and dashes',
    );
  });

  it('serves the rollout page from a private bucket through CloudFront, with the API it talks to, and lets only its origin call the API', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
    template.resourceCountIs('AWS::CloudFront::Distribution', 1);
    template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultRootObject: 'index.html',
        DefaultCacheBehavior: Match.objectLike({ ViewerProtocolPolicy: 'redirect-to-https' }),
      }),
    });
    const csp = resources('AWS::CloudFront::ResponseHeadersPolicy')[0]![1].Properties.ResponseHeadersPolicyConfig
      .SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy;
    expect(JSON.stringify(csp)).toMatch(/default-src 'self'; connect-src 'self' https:\/\/\*\.execute-api\./);
    const [distId] = resources('AWS::CloudFront::Distribution')[0]!;
    const cors = resources('AWS::ApiGatewayV2::Api')[0]![1].Properties.CorsConfiguration;
    expect(cors.AllowOrigins).toEqual([{ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distId, 'DomainName'] }]] }]);
    expect(cors.AllowHeaders).toEqual(['authorization', 'content-type', 'idempotency-key']);
    expect(cors.AllowMethods).toEqual(['GET', 'POST', 'PATCH', 'DELETE']);
    // The page's files and its config.json, which names the API; the distribution's copy invalidated on each deploy.
    const deploy = resources('Custom::CDKBucketDeployment')[0]![1].Properties;
    expect(deploy.SourceObjectKeys).toHaveLength(2);
    const [apiId] = resources('AWS::ApiGatewayV2::Api')[0]!;
    expect(deploy.SourceMarkers[1]).toEqual({ '<<marker:0xbaba:0>>': { 'Fn::GetAtt': [apiId, 'ApiEndpoint'] } });
    expect(deploy.DistributionPaths).toEqual(['/*']);
    template.hasOutput('PageUrl', {});
  });

  it('has one HTTP API route per entry of the route table, each behind the Lambda authorizer but the open contract', () => {
    const routes = resources('AWS::ApiGatewayV2::Route').map(([, r]) => r.Properties);
    expect(routes.map((r) => r.RouteKey).sort()).toEqual(
      [...ROUTES, ...PUBLIC_ROUTES].map((r) => `${r.method} ${r.path}`).sort(),
    );
    for (const r of routes) expect(r.AuthorizationType).toBe(r.RouteKey === 'GET /openapi.json' ? 'NONE' : 'CUSTOM');
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'REQUEST',
      EnableSimpleResponses: true,
      IdentitySource: ['$request.header.Authorization'],
      AuthorizerResultTtlInSeconds: 60,
    });
  });

  it("grants API Gateway one invoke permission for the whole API: the function's resource policy stays far under Lambda's 20 KB", () => {
    const [apiId] = apiFunction();
    const perms = resources('AWS::Lambda::Permission').filter(([, p]) =>
      JSON.stringify(p.Properties.FunctionName).includes(apiId),
    );
    expect(perms).toHaveLength(1);
    // Each permission becomes one statement of the policy; a resolved statement is a few hundred bytes.
    const size = perms.reduce((n, [, p]) => n + JSON.stringify(p.Properties).length + 300, 0);
    expect(size).toBeLessThan(20 * 1024);
  });

  it('names every resource after the stage, so stages share an account', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', { TableName: 'baton-test' });
    template.hasResourceProperties('AWS::Events::EventBus', { Name: 'baton-test' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { Name: 'baton-test' });
    for (const [, f] of resources('AWS::Lambda::Function').filter(
      ([, f]) => f.Properties.Environment?.Variables?.TABLE_NAME,
    ))
      expect(f.Properties.FunctionName).toMatch(/^baton-test-/);
    const other = Template.fromStack(
      new BatonStack(
        new App({ outdir: `/tmp/baton-cdk-test2-${process.pid}`, context: { 'aws:cdk:bundling-stacks': [] } }),
        'Baton-prod',
        { stage: 'prod' },
      ),
    );
    other.hasResourceProperties('AWS::DynamoDB::Table', { TableName: 'baton-prod' });
  });

  it('has the table with the keys and indexes the store uses, its stream and TTL', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: 'ExpiresAtEpoch', Enabled: true },
      GlobalSecondaryIndexes: ['gsi1', 'gsi2', 'gsi3'].map((name) =>
        Match.objectLike({
          IndexName: name,
          KeySchema: [
            { AttributeName: `${name}pk`, KeyType: 'HASH' },
            { AttributeName: `${name}sk`, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        }),
      ),
    });
  });

  it('runs eight functions on Node.js 22, traced, minified, with log retention', () => {
    const ours = resources('AWS::Lambda::Function').filter(
      ([, f]) => f.Properties.Environment?.Variables?.TABLE_NAME && f.Properties.Environment?.Variables?.BUS_NAME,
    );
    expect(ours.map(([, f]) => f.Properties.FunctionName).sort()).toEqual([
      'baton-test-Api',
      'baton-test-Authorizer',
      'baton-test-BlockedSweep',
      'baton-test-JobWorker',
      'baton-test-LiveStatus',
      'baton-test-Notify',
      'baton-test-OutboxPublisher',
      'baton-test-Reevaluate',
    ]);
    for (const [, f] of ours) {
      expect(f.Properties.Runtime).toBe('nodejs22.x');
      expect(f.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(f.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe('Baton');
    }
    const retention = resources('AWS::Logs::LogGroup').map(([, g]) => g.Properties.RetentionInDays);
    expect(retention.length).toBeGreaterThanOrEqual(8);
    expect(new Set(retention)).toEqual(new Set([30]));
  });

  it('publishes the outbox from the table stream: inserts of outbox items only, bounded retries, bisected batches, a dead-letter queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      MaximumRetryAttempts: 5,
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: Match.anyValue() } },
      FilterCriteria: {
        Filters: [
          {
            Pattern: JSON.stringify({
              eventName: ['INSERT'],
              dynamodb: { NewImage: { __edb_e__: { S: ['outbox'] } } },
            }),
          },
        ],
      },
    });
  });

  it('routes each rule lib/events declares to its one consumer, with bounded retries and a dead-letter queue; the bus keeps an archive', () => {
    for (const [rule, consumer] of [
      [LIVE_STATUS_RULE, 'LiveStatus'],
      [STAGE_RULE, 'Reevaluate'],
      [NOTIFY_RULE, 'Notify'],
    ] as const) {
      const [, r] = resources('AWS::Events::Rule').find(([, x]) => x.Properties.Name === `baton-test-${rule.name}`)!;
      expect(r.Properties.EventPattern).toEqual({ source: rule.source, 'detail-type': rule.detailType });
      expect(r.Properties.Targets).toEqual([
        expect.objectContaining({
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: { Arn: expect.anything() },
        }),
      ]);
      expect(JSON.stringify(r.Properties.Targets[0].Arn)).toContain(consumer);
    }
    template.hasResourceProperties('AWS::Events::Archive', {
      RetentionDays: 30,
      EventPattern: { source: ['baton', 'baton.hooks'] },
    });
    // A deploy-tool event the consumer cannot apply is recorded in the live-status rule's dead-letter queue by the consumer itself (with why), which it may send to.
    const [, live] = resources('AWS::Events::Rule').find(
      ([, x]) => x.Properties.Name === `baton-test-${LIVE_STATUS_RULE.name}`,
    )!;
    const dlqId = live.Properties.Targets[0].DeadLetterConfig.Arn['Fn::GetAtt'][0];
    const [, fn] = resources('AWS::Lambda::Function').find(
      ([, f]) => f.Properties.FunctionName === 'baton-test-LiveStatus',
    )!;
    expect(fn.Properties.Environment.Variables.DROPPED_QUEUE_URL).toEqual({ Ref: dlqId });
    const sends = resources('AWS::IAM::Policy')
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter(
        (st: any) =>
          JSON.stringify(st.Action).includes('sqs:SendMessage') && JSON.stringify(st.Resource).includes(dlqId),
      );
    expect(sends).toHaveLength(1);
  });

  it('alarms on the API 5xx rate, on each dead-letter queue and on each consumer’s errors', () => {
    const names = resources('AWS::CloudWatch::Alarm')
      .map(([, a]) => a.Properties.AlarmName)
      .sort();
    expect(names).toEqual(
      [
        'Api5xxRate',
        'BlockedSweepErrors',
        'JobDlqDepth',
        'JobWorkerErrors',
        'LiveStatusDlqDepth',
        'LiveStatusErrors',
        'NotifyDlqDepth',
        'NotifyErrors',
        'OutboxDlqDepth',
        'OutboxPublisherErrors',
        'ReevaluateDlqDepth',
        'ReevaluateErrors',
      ]
        .map((n) => `baton-test-${n}`)
        .sort(),
    );
    for (const [, a] of resources('AWS::CloudWatch::Alarm')) expect(a.Properties.AlarmActions).toHaveLength(1);
  });

  it('runs the Blocked notifications’ sweep every five minutes, one run at a time, a failed run left to the next tick', () => {
    const [, rule] = resources('AWS::Events::Rule').find(([, x]) => x.Properties.Name === 'baton-test-BlockedSweep')!;
    expect(rule.Properties.ScheduleExpression).toBe('rate(5 minutes)');
    expect(rule.Properties.EventBusName).toBeUndefined();
    expect(rule.Properties.Targets).toEqual([
      expect.objectContaining({ RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 300 } }),
    ]);
    const [id, fn] = resources('AWS::Lambda::Function').find(
      ([, f]) => f.Properties.FunctionName === 'baton-test-BlockedSweep',
    )!;
    expect(JSON.stringify(rule.Properties.Targets[0].Arn)).toContain(id);
    expect(fn.Properties).toMatchObject({ ReservedConcurrentExecutions: 1, Timeout: 240 });
  });

  it('runs jobs on worker Lambdas from a FIFO queue, a part per message group, with a dead-letter queue after the last attempt', () => {
    const [jobQueueId, q] = resources('AWS::SQS::Queue').find(
      ([, x]) => x.Properties.QueueName === 'baton-test-jobs.fifo',
    )!;
    expect(q.Properties).toMatchObject({
      FifoQueue: true,
      VisibilityTimeout: 360,
      RedrivePolicy: { maxReceiveCount: JOB_ATTEMPTS, deadLetterTargetArn: expect.anything() },
    });
    const [dlqId] = resources('AWS::SQS::Queue').find(([, x]) => x.Properties.QueueName === 'baton-test-JobDlq.fifo')!;
    expect(JSON.stringify(q.Properties.RedrivePolicy.deadLetterTargetArn)).toContain(dlqId);
    const [, worker] = resources('AWS::Lambda::Function').find(
      ([, f]) => f.Properties.FunctionName === 'baton-test-JobWorker',
    )!;
    expect(worker.Properties.Timeout).toBe(300);
    const [, mapping] = resources('AWS::Lambda::EventSourceMapping').find(([, m]) =>
      JSON.stringify(m.Properties.EventSourceArn).includes(jobQueueId),
    )!;
    expect(mapping.Properties).toMatchObject({ BatchSize: 1, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    // The API starts jobs and the workers start the next wave: both send to the queue, and know where it is.
    for (const fnName of ['baton-test-Api', 'baton-test-JobWorker']) {
      const [, f] = resources('AWS::Lambda::Function').find(([, x]) => x.Properties.FunctionName === fnName)!;
      expect(JSON.stringify(f.Properties.Environment.Variables.JOB_QUEUE_URL)).toContain(jobQueueId);
    }
    const senders = resources('AWS::IAM::Policy').filter(([, p]) =>
      JSON.stringify(p.Properties.PolicyDocument).includes('sqs:SendMessage'),
    );
    expect(
      senders
        .map(([, p]) => JSON.stringify(p.Properties.Roles))
        .sort()
        .join(),
    ).toMatch(/Api.*JobWorker|JobWorker.*Api/);
  });

  it('logs API access and throttles by default', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      DefaultRouteSettings: { ThrottlingRateLimit: 200, ThrottlingBurstLimit: 400 },
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.anyValue() },
    });
  });

  it('grants least privilege: no scans, no wildcards, and the authorizer only reads', () => {
    const policies = resources('AWS::IAM::Policy').map(([, p]) => p);
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement);
    const actions = statements.flatMap((s: any) => [s.Action].flat());
    expect(actions).not.toContain('dynamodb:Scan');
    expect(actions.some((a: string) => a.endsWith(':*') || a === '*')).toBe(false);
    expect(actions).toContain('events:PutEvents');
    // Head and upstream revisions are read in batches: without this every promotion would be denied.
    expect(actions).toContain('dynamodb:BatchGetItem');
    const authorizerPolicy = policies.find((p) => JSON.stringify(p.Properties.Roles).includes('Authorizer'));
    const own = authorizerPolicy.Properties.PolicyDocument.Statement.filter((s: any) =>
      JSON.stringify(s.Action).includes('dynamodb'),
    );
    expect(own).toEqual([expect.objectContaining({ Action: ['dynamodb:GetItem', 'dynamodb:Query'], Effect: 'Allow' })]);
  });
});

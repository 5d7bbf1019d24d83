import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  type CfnTable,
} from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Architecture, FilterCriteria, FilterRule, Runtime, StartingPosition, Tracing } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { JOB_ATTEMPTS } from '../lib/changes/jobs.ts';
import { SWEEP_MINUTES } from '../lib/model/notifications.ts';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';
import { PUBLIC_ROUTES, ROUTES } from '../lib/api/routes/index.ts';
import {
  HOOK_SOURCE,
  LIVE_STATUS_RULE,
  NOTIFY_RULE,
  SOURCE,
  STAGE_RULE,
  type Rule as EventRule,
} from '../lib/events/contracts.ts';
import { TABLE_KEYS } from '../lib/store/table.ts';
import { RolloutPage } from './web.ts';
import { FUNCTION_MEMORY_MB as MB } from './sizes.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Acknowledges a cdk-nag (AwsSolutions) finding on a construct, with why it does not apply. */
function accept(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::${id}`, reason });
}

export interface BatonStackProps extends StackProps {
  /** Names every resource (`baton-<stage>`), so several stacks fit one account: `cdk deploy -c stage=prod`. */
  stage: string;
}

/**
 * Baton on AWS: one table whose stream publishes the outbox to the bus, the HTTP API whose routes come
 * from lib/api behind one token authorizer, the consumers the rules in lib/events route events to, and
 * what watches them: logs with retention, X-Ray, alarms on 5xx, dead letters and consumer errors.
 */
export class BatonStack extends Stack {
  readonly table: Table;
  readonly api: HttpApi;

  constructor(scope: Construct, id: string, props: BatonStackProps) {
    super(scope, id, props);
    const name = `baton-${props.stage}`;

    this.table = new Table(this, 'Table', {
      tableName: name,
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // The outbox is published from the stream; handled-event records expire by TTL.
      stream: StreamViewType.NEW_IMAGE,
      timeToLiveAttribute: TABLE_KEYS.timeToLive,
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

    const bus = new EventBus(this, 'Bus', { eventBusName: name });
    // Every event Baton and the deploy tools put on the bus is kept a month, to replay after a consumer fix.
    bus.archive('Archive', {
      archiveName: `${name}-events`,
      eventPattern: { source: [SOURCE, HOOK_SOURCE] },
      retention: Duration.days(30),
    });

    const alarms = new Topic(this, 'Alarms', { topicName: `${name}-alarms`, enforceSSL: true });
    const alarm = (id: string, metric: IMetric, threshold: number, description: string) =>
      new Alarm(this, id, {
        alarmName: `${name}-${id}`,
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }).addAlarmAction(new SnsAction(alarms));
    const queue = (id: string) => {
      const q = new Queue(this, id, {
        queueName: `${name}-${id}`,
        retentionPeriod: Duration.days(14),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      accept(
        q,
        'AwsSolutions-SQS3',
        'This queue is itself a dead-letter queue: what lands here stays for 14 days and raises an alarm.',
      );
      alarm(
        `${id}Depth`,
        q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        1,
        `An event landed in ${id}: a consumer failed on it after its retries.`,
      );
      return q;
    };

    const fn = (
      id: keyof typeof MB,
      entry: string,
      extra: { timeout?: Duration; reservedConcurrentExecutions?: number } = {},
    ) => {
      const logGroup = new LogGroup(this, `${id}Logs`, {
        logGroupName: `/aws/lambda/${name}-${id}`,
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const f = new NodejsFunction(this, `${id}Function`, {
        functionName: `${name}-${id}`,
        entry: join(root, entry),
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        memorySize: MB[id],
        timeout: extra.timeout ?? Duration.seconds(29),
        ...(extra.reservedConcurrentExecutions !== undefined
          ? { reservedConcurrentExecutions: extra.reservedConcurrentExecutions }
          : {}),
        tracing: Tracing.ACTIVE,
        logGroup,
        environment: {
          TABLE_NAME: this.table.tableName,
          BUS_NAME: bus.eventBusName,
          BATON_STAGE: props.stage,
          POWERTOOLS_SERVICE_NAME: `baton-${id}`,
          POWERTOOLS_METRICS_NAMESPACE: 'Baton',
          POWERTOOLS_LOG_LEVEL: 'INFO',
          NODE_OPTIONS: '--enable-source-maps',
        },
        bundling: {
          format: OutputFormat.ESM,
          target: 'node22',
          minify: true,
          // Source maps name files and lines in stack traces; without the sources inside, they stay small.
          sourceMap: true,
          sourcesContent: false,
          forceDockerBundling: false,
          mainFields: ['module', 'main'],
          banner: "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);",
        },
      });
      accept(
        f,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'AWSLambdaBasicExecutionRole only lets the function write its own logs; every other grant is an inline least-privilege statement.',
      );
      accept(
        f,
        'AwsSolutions-IAM5[Resource::*]',
        "X-Ray's PutTraceSegments and PutTelemetryRecords take no resource: tracing cannot be granted narrower.",
      );
      accept(
        f,
        `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.table.node.defaultChild as CfnTable)}.Arn>/index/*]`,
        "The table grant covers that table's own GSIs (index/*), never another table.",
      );
      accept(
        f,
        'AwsSolutions-L1',
        'Node.js 22 is the runtime Baton is built and tested for (its code must also run on the Node 20 of developer machines); moving on is a decision of its own.',
      );
      return f;
    };

    const apiFn = fn('Api', 'functions/api.ts');
    const authorizerFn = fn('Authorizer', 'functions/authorizer.ts', { timeout: Duration.seconds(10) });
    const liveStatusFn = fn('LiveStatus', 'functions/live-status.ts');
    const reevaluateFn = fn('Reevaluate', 'functions/reevaluate.ts');
    // Posts to webhooks: three attempts of at most 5 s each, 1 s and 4 s apart, per notification, in parallel.
    const notifyFn = fn('Notify', 'functions/notify.ts', { timeout: Duration.seconds(60) });
    // The Blocked notifications' sweep (lib/changes/blocked.ts): one at a time, done well before the next tick.
    const sweepFn = fn('BlockedSweep', 'functions/blocked-sweep.ts', {
      timeout: Duration.minutes(SWEEP_MINUTES - 1),
      reservedConcurrentExecutions: 1,
    });
    const publisherFn = fn('OutboxPublisher', 'functions/outbox.ts', { timeout: Duration.seconds(60) });
    const workerFn = fn('JobWorker', 'functions/job-worker.ts', { timeout: Duration.minutes(5) });

    // Least privilege: the API and the consumers read and write items and run transactions; they never scan.
    const readWrite = new PolicyStatement({
      actions: [
        'dynamodb:GetItem',
        'dynamodb:BatchGetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:Query',
        'dynamodb:BatchWriteItem',
        'dynamodb:ConditionCheckItem',
      ],
      resources: [this.table.tableArn, `${this.table.tableArn}/index/*`],
    });
    for (const f of [apiFn, liveStatusFn, reevaluateFn, workerFn, notifyFn, sweepFn]) f.addToRolePolicy(readWrite);

    // Jobs (lib/changes/jobs.ts): a promotion, approval or demote too large for one request is split into
    // parts, one message each, run by worker Lambdas. FIFO with a message group per part: a part never runs on
    // two workers at once, and one sent twice within five minutes is dropped. A part's last delivery writes its
    // Spaces as failed if it fails again; only a part that cannot even do that reaches the dead-letter queue.
    const jobDlq = new Queue(this, 'JobDlq', {
      queueName: `${name}-JobDlq.fifo`,
      fifo: true,
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    accept(
      jobDlq,
      'AwsSolutions-SQS3',
      'This queue is itself a dead-letter queue: what lands here stays for 14 days and raises an alarm.',
    );
    alarm(
      'JobDlqDepth',
      jobDlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
      1,
      'A job part landed in the dead-letter queue: its worker could not run it nor record giving up; resume the job.',
    );
    const jobQueue = new Queue(this, 'JobQueue', {
      queueName: `${name}-jobs.fifo`,
      fifo: true,
      // Longer than a worker may run, so a part is never handed to a second worker while the first still holds it.
      visibilityTimeout: Duration.minutes(6),
      retentionPeriod: Duration.days(4),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: jobDlq, maxReceiveCount: JOB_ATTEMPTS },
    });
    workerFn.addEventSource(new SqsEventSource(jobQueue, { batchSize: 1, reportBatchItemFailures: true }));
    for (const f of [apiFn, workerFn]) {
      jobQueue.grantSendMessages(f);
      f.addEnvironment('JOB_QUEUE_URL', jobQueue.queueUrl);
    }
    // The API may put events on the bus (the admin's outbox drain); its own go through the outbox and the stream.
    apiFn.addToRolePolicy(new PolicyStatement({ actions: ['events:PutEvents'], resources: [bus.eventBusArn] }));

    // The outbox: each event item the table's stream shows is published on the bus, then deleted.
    // A batch that keeps failing is split to find the bad record, retried a bounded number of times,
    // and lands in a dead-letter queue, never blocking the stream for good.
    publisherFn.addToRolePolicy(new PolicyStatement({ actions: ['events:PutEvents'], resources: [bus.eventBusArn] }));
    publisherFn.addToRolePolicy(
      new PolicyStatement({ actions: ['dynamodb:DeleteItem'], resources: [this.table.tableArn] }),
    );
    const outboxDlq = queue('OutboxDlq');
    publisherFn.addEventSource(
      new DynamoEventSource(this.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        maxBatchingWindow: Duration.seconds(1),
        retryAttempts: 5,
        bisectBatchOnError: true,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(outboxDlq),
        filters: [
          FilterCriteria.filter({
            eventName: FilterRule.isEqual('INSERT'),
            dynamodb: { NewImage: { __edb_e__: { S: FilterRule.isEqual('outbox') } } },
          }),
        ],
      }),
    );

    // Each rule lib/events declares reaches its one consumer; a failing event is retried a bounded number of times, then kept in the rule's dead-letter queue.
    const route = (r: EventRule, consumer: NodejsFunction, dlq: Queue) =>
      new Rule(this, r.name, {
        ruleName: `${name}-${r.name}`,
        eventBus: bus,
        eventPattern: { source: r.source, detailType: r.detailType },
        targets: [
          new LambdaFunction(consumer, { retryAttempts: 2, maxEventAge: Duration.hours(1), deadLetterQueue: dlq }),
        ],
      });
    const liveStatusDlq = queue('LiveStatusDlq');
    route(LIVE_STATUS_RULE, liveStatusFn, liveStatusDlq);
    // What the deploy-tool consumer cannot apply it records there itself, with why (the rule's target only dead-letters failed invocations).
    liveStatusDlq.grantSendMessages(liveStatusFn);
    liveStatusFn.addEnvironment('DROPPED_QUEUE_URL', liveStatusDlq.queueUrl);
    route(STAGE_RULE, reevaluateFn, queue('ReevaluateDlq'));
    route(NOTIFY_RULE, notifyFn, queue('NotifyDlq'));
    // A schedule (the default bus's: a custom bus takes no schedules) runs the sweep; a failed run is not
    // retried: the next tick looks again, and its errors raise the alarm below.
    new Rule(this, 'BlockedSweepSchedule', {
      ruleName: `${name}-BlockedSweep`,
      schedule: Schedule.rate(Duration.minutes(SWEEP_MINUTES)),
      targets: [new LambdaFunction(sweepFn, { retryAttempts: 0, maxEventAge: Duration.minutes(SWEEP_MINUTES) })],
    });
    for (const [id, f] of [
      ['LiveStatus', liveStatusFn],
      ['Reevaluate', reevaluateFn],
      ['Notify', notifyFn],
      ['BlockedSweep', sweepFn],
      ['OutboxPublisher', publisherFn],
      ['JobWorker', workerFn],
    ] as const) {
      alarm(
        `${id}Errors`,
        f.metricErrors({ period: Duration.minutes(5) }),
        1,
        id === 'BlockedSweep'
          ? 'The BlockedSweep function failed: Blocked notifications wait for its next run.'
          : `The ${id} function failed: its event is retried, then lands in a dead-letter queue.`,
      );
    }

    // The authorizer only reads: the token by its hash, its user, and the organization's groups (one query).
    authorizerFn.addToRolePolicy(
      new PolicyStatement({ actions: ['dynamodb:GetItem', 'dynamodb:Query'], resources: [this.table.tableArn] }),
    );
    const authorizer = new HttpLambdaAuthorizer('BearerToken', authorizerFn, {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: ['$request.header.Authorization'],
      // A revoked or expired token, or a deleted user's, is refused by API Gateway within this long (locally at once).
      resultsCacheTtl: Duration.minutes(1),
    });
    // The rollout page (S3 + CloudFront) calls the API from its own origin: CORS admits that origin alone (API Gateway answers the preflight).
    const page = new RolloutPage(this, 'RolloutPage');
    this.api = new HttpApi(this, 'Api', {
      apiName: name,
      defaultAuthorizer: authorizer,
      createDefaultStage: false,
      corsPreflight: {
        allowOrigins: [page.origin],
        allowHeaders: ['authorization', 'content-type', 'idempotency-key'],
        allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.PATCH, CorsHttpMethod.DELETE],
        exposeHeaders: ['location'],
        maxAge: Duration.days(1),
      },
    });
    page.deploy(this.api.apiEndpoint, root);
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      logGroupName: `/aws/apigateway/${name}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    new HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      // Every client shares this: a runaway script is throttled (429) before it reaches the table.
      throttle: { rateLimit: 200, burstLimit: 400 },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.jsonWithStandardFields(),
      },
    });
    // One permission for the whole API, not one per route: 70-odd per-route statements pass Lambda's 20 KB policy limit.
    const integration = new HttpLambdaIntegration('ApiIntegration', apiFn, { scopePermissionToRoute: false });
    for (const r of ROUTES) this.api.addRoutes({ path: r.path, methods: [HttpMethod[r.method]], integration });
    for (const r of PUBLIC_ROUTES)
      this.api.addRoutes({
        path: r.path,
        methods: [HttpMethod[r.method]],
        integration,
        authorizer: new HttpNoneAuthorizer(),
      });
    accept(
      this.api,
      'AwsSolutions-APIG4',
      `Only ${PUBLIC_ROUTES.map((r) => `${r.method} ${r.path}`).join(', ')} is open: the API's contract, which holds no data; every other route is behind the token authorizer.`,
    );

    const requests = this.api.metricCount({ period: Duration.minutes(5) });
    const serverErrors = this.api.metricServerError({ period: Duration.minutes(5) });
    alarm(
      'Api5xxRate',
      new MathExpression({
        expression: 'IF(requests > 0, 100 * errors / requests, 0)',
        usingMetrics: { requests, errors: serverErrors },
        period: Duration.minutes(5),
        label: '5xx %',
      }),
      1,
      'More than 1% of API requests answered 5xx over five minutes.',
    );

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'BusName', { value: bus.eventBusName });
    new CfnOutput(this, 'AlarmTopic', { value: alarms.topicArn });
    new CfnOutput(this, 'JobQueueUrl', { value: jobQueue.queueUrl });
  }
}

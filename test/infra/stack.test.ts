import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../lib/api/routes/index.ts';
import { BatonStack } from '../../infra/stack.ts';

let template: Template;
beforeAll(() => {
  process.env.CDK_DISABLE_CLI_TELEMETRY = 'true';
  const app = new App({ outdir: `/tmp/baton-cdk-test-${process.pid}` });
  template = Template.fromStack(new BatonStack(app, 'Test'));
}, 120_000);

describe('the synthesized stack', () => {
  it('has one HTTP API route per entry of the route table, each behind the Lambda authorizer', () => {
    const routes = template.findResources('AWS::ApiGatewayV2::Route');
    const keys = Object.values(routes).map((r: any) => r.Properties.RouteKey).sort();
    expect(keys).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    for (const r of Object.values(routes) as any[]) expect(r.Properties.AuthorizationType).toBe('CUSTOM');
    template.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', { AuthorizerType: 'REQUEST', EnableSimpleResponses: true, IdentitySource: ['$request.header.Authorization'] });
  });

  it('has the table with the keys and index the store uses', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'gsi1', KeySchema: [{ AttributeName: 'gsi1pk', KeyType: 'HASH' }, { AttributeName: 'gsi1sk', KeyType: 'RANGE' }] })],
    });
  });

  it('runs the API, authorizer and live-status functions on Node.js 22, bundled, with the table and bus names', () => {
    const fns = Object.values(template.findResources('AWS::Lambda::Function')) as any[];
    const ours = fns.filter((f) => f.Properties.Environment?.Variables?.TABLE_NAME && f.Properties.Environment?.Variables?.BUS_NAME);
    expect(ours).toHaveLength(3);
    for (const f of ours) expect(f.Properties.Runtime).toBe('nodejs22.x');
  });

  it('routes Argo CD and Flux events from the bus to the consumer with bounded retries', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['baton.hooks'], 'detail-type': ['Argo CD Notification', 'Flux Event'] },
      Targets: [Match.objectLike({ RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 } })],
    });
  });

  it('grants least privilege: no scans, no wildcards, and the authorizer only reads', () => {
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as any[];
    const statements = policies.flatMap((p) => p.Properties.PolicyDocument.Statement);
    const actions = statements.flatMap((s: any) => [s.Action].flat());
    expect(actions).not.toContain('dynamodb:Scan');
    expect(actions.some((a: string) => a.endsWith(':*') || a === '*')).toBe(false);
    expect(actions).toContain('events:PutEvents');
    const authorizerPolicy = policies.find((p) => JSON.stringify(p.Properties.Roles).includes('Authorizer'));
    // Revocation reaches API Gateway within the authorizer's cache TTL (README: People and tokens).
    expect(Object.values(template.findResources('AWS::ApiGatewayV2::Authorizer'))).toEqual([expect.objectContaining({ Properties: expect.objectContaining({ AuthorizerResultTtlInSeconds: 60 }) })]);
    expect(authorizerPolicy.Properties.PolicyDocument.Statement).toEqual([expect.objectContaining({ Action: ['dynamodb:GetItem', 'dynamodb:Query'], Effect: 'Allow' })]);
  });
});

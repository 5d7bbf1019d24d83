import { join } from 'node:path';
import {
  Aws,
  CfnOutput,
  DefaultStackSynthesizer,
  Duration,
  RemovalPolicy,
  Stack,
  Token,
  Validations,
} from 'aws-cdk-lib';
import {
  Distribution,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { BlockPublicAccess, Bucket, BucketEncryption, type CfnBucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct, type IConstruct } from 'constructs';

/** Acknowledges a cdk-nag (AwsSolutions) finding on a construct, with why it does not apply. */
function accept(scope: IConstruct, id: string, reason: string): void {
  Validations.of(scope).acknowledge({ id: `AwsSolutions::${id}`, reason });
}

/**
 * The rollout page on AWS: web/'s static files in a private bucket, served by CloudFront (origin access
 * control, HTTPS only, security headers), with a config.json naming the API it talks to. The page holds
 * no data and no secret; the person using it pastes a token, and the API (whose CORS admits this
 * distribution's origin alone) checks it on every call.
 */
export class RolloutPage extends Construct {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  /** The page's origin, for the API's CORS. */
  readonly origin: string;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Assets', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      // Built from the repository at every deploy: nothing in it needs keeping.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
    });
    const headers = new ResponseHeadersPolicy(this, 'Headers', {
      securityHeadersBehavior: {
        // The page loads only its own files and talks only to API Gateway in this Region.
        contentSecurityPolicy: {
          contentSecurityPolicy: `default-src 'self'; connect-src 'self' https://*.execute-api.${Aws.REGION}.amazonaws.com; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: true, override: true },
      },
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Baton rollout page',
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        responseHeadersPolicy: headers,
      },
    });
    this.origin = `https://${this.distribution.distributionDomainName}`;
    const why =
      'The rollout page is public static code (HTML, CSS, one script) with no data or secret in it; every call it makes goes to the API, which logs each request (access logs) and checks its token.';
    accept(this.bucket, 'AwsSolutions-S1', why);
    accept(this.distribution, 'AwsSolutions-CFR1', `${why} People use it from wherever they work.`);
    accept(this.distribution, 'AwsSolutions-CFR2', `${why} The API behind it is throttled.`);
    accept(this.distribution, 'AwsSolutions-CFR3', why);
    accept(
      this.distribution,
      'AwsSolutions-CFR4',
      'The distribution uses its default *.cloudfront.net certificate, whose TLS policy CloudFront sets; a custom domain and certificate is the deployer’s choice.',
    );
    new CfnOutput(Stack.of(this), 'PageUrl', { value: this.origin });
  }

  /** Uploads the built page and its config.json (the API's address), and invalidates the distribution's copy. */
  deploy(apiUrl: string, root: string): void {
    new BucketDeployment(this, 'Deploy', {
      destinationBucket: this.bucket,
      sources: [
        Source.asset(join(root, 'web'), { exclude: ['src', 'src/**', 'build.mjs', 'tsconfig.json', 'dist/*.map'] }),
        Source.jsonData('config.json', { ApiUrl: apiUrl }),
      ],
      distribution: this.distribution,
      distributionPaths: ['/*'],
      memoryLimit: 256,
    });
    // The deployment's and the bucket-emptying helper functions are CDK's own singletons.
    const stack = Stack.of(this);
    const bucketArn = stack.getLogicalId(this.bucket.node.defaultChild as CfnBucket);
    // The helper reads from the CDK asset bucket of this account and Region, named as cdk-nag prints it:
    // a pseudo parameter where the stack's environment leaves it open, the value where the CLI fixed it.
    const qualifier =
      stack.synthesizer instanceof DefaultStackSynthesizer
        ? (stack.synthesizer.bootstrapQualifier ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER)
        : DefaultStackSynthesizer.DEFAULT_QUALIFIER;
    const account = Token.isUnresolved(stack.account) ? '<AWS::AccountId>' : stack.account;
    const region = Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region;
    const helpers = stack.node.children.filter((c) =>
      /^Custom::(CDKBucketDeployment|S3AutoDeleteObjects)/.test(c.node.id),
    );
    const assets = `Resource::arn:<AWS::Partition>:s3:::cdk-${qualifier}-assets-${account}-${region}/*`;
    for (const h of helpers) {
      accept(
        h,
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        'CDK’s own deployment helper: AWSLambdaBasicExecutionRole lets it write its logs only.',
      );
      for (const finding of [
        'Resource::*',
        'Action::s3:GetObject*',
        'Action::s3:GetBucket*',
        'Action::s3:List*',
        'Action::s3:DeleteObject*',
        'Action::s3:Abort*',
        assets,
        `Resource::<${bucketArn}.Arn>/*`,
      ]) {
        accept(
          h,
          `AwsSolutions-IAM5[${finding}]`,
          'CDK’s own deployment helper: it copies the page’s objects from the CDK asset bucket into this one bucket (and empties it when the stack goes), object wildcards within those two; CloudFront invalidation takes no resource.',
        );
      }
      accept(h, 'AwsSolutions-L1', 'CDK’s own deployment helper: its runtime is chosen by the CDK version.');
    }
  }
}

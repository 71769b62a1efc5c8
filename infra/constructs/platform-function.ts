import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CfnElement, type Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  ApplicationLogLevel,
  Architecture,
  type Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueDefinition } from '../../shared/queues';

const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Settings every function of a stack shares. */
export interface FunctionDefaults {
  metricsNamespace: string;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  logLevel: ApplicationLogLevel;
  environment: Record<string, string>;
}

export interface PlatformFunctionProps {
  /** Handler file, relative to the repository root. */
  entry: string;
  /** Powertools service name. */
  serviceName: string;
  description: string;
  timeout: Duration;
  defaults: FunctionDefaults;
}

/**
 * A Node.js 22 arm64 function bundled locally by esbuild as one minified ESM file.
 * The AWS SDK is bundled rather than taken from the runtime: the version is the one
 * the tests ran against, and a single tree-shaken file loads faster on cold start
 * than resolving the runtime's full SDK from disk.
 */
export class PlatformFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: PlatformFunctionProps) {
    super(scope, id);
    const { defaults } = props;
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: defaults.logRetention,
      removalPolicy: defaults.logRemovalPolicy,
    });
    // An own role instead of AWSLambdaBasicExecutionRole, which may write to any log group.
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: join(repositoryRoot, props.entry),
      projectRoot: repositoryRoot,
      depsLockFilePath: join(repositoryRoot, 'package-lock.json'),
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      timeout: props.timeout,
      role,
      tracing: Tracing.ACTIVE,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: defaults.logLevel,
      systemLogLevelV2: SystemLogLevel.WARN,
      environment: {
        ...defaults.environment,
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: defaults.metricsNamespace,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        mainFields: ['module', 'main'],
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        bundleAwsSDK: true,
        // ESM output still meets CommonJS dependencies that call require().
        banner:
          "import { createRequire as topLevelCreateRequire } from 'node:module'; const require = topLevelCreateRequire(import.meta.url);",
        forceDockerBundling: false,
      },
    });

    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions.',
    });
    Validations.of(this.function).acknowledge({
      id: 'AwsSolutions-L1',
      reason: 'The platform pins Node.js 22 (the LTS it is built and tested on); runtime upgrades are deliberate.',
    });
  }
}

export type TableAccess = 'read' | 'readWrite';
export type BucketAccess = 'read' | 'readWrite';
export type QueueAccess = 'send' | 'consume';

export interface PlatformQueue {
  queue: IQueue;
  definition: QueueDefinition;
}

/** Grants table access and tells the function the table name. */
export const bindTable = (fn: LambdaFunction, table: ITable, access: TableAccess): void => {
  if (access === 'read') table.grantReadData(fn);
  else table.grantReadWriteData(fn);
  fn.addEnvironment('TABLE_NAME', table.tableName);
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(table)}.Arn>/index/*]`,
    reason: 'Queries may use any of the single table’s global secondary indexes.',
  });
};

/**
 * `send` grants SendMessage and sets the queue URL variable; `consume` subscribes the
 * function with the queue's batch settings (the event source grants receive/delete).
 */
export const bindQueue = (fn: LambdaFunction, { queue, definition }: PlatformQueue, access: QueueAccess): void => {
  if (access === 'send') {
    queue.grantSendMessages(fn);
    fn.addEnvironment(definition.urlEnv, queue.queueUrl);
    return;
  }
  fn.addEventSource(
    new SqsEventSource(queue, {
      batchSize: definition.batchSize,
      maxConcurrency: definition.maxConcurrency,
      reportBatchItemFailures: true,
    }),
  );
};

/**
 * Object-level actions only (no bucket configuration, ACL or versioning actions), so
 * narrower than `IBucket.grantRead`/`grantReadWrite`.
 */
export const bindBucket = (fn: LambdaFunction, bucket: IBucket, access: BucketAccess): void => {
  const objectActions =
    access === 'read' ? ['s3:GetObject'] : ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'];
  fn.addToRolePolicy(
    new PolicyStatement({ effect: Effect.ALLOW, actions: objectActions, resources: [bucket.arnForObjects('*')] }),
  );
  fn.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  fn.addEnvironment('ARTIFACT_BUCKET', bucket.bucketName);
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(bucket)}.Arn>/*]`,
    reason: 'Object keys are per-tenant and generated at run time; access is limited to this one bucket.',
  });
};

/** Grants read access to a secret and sets the variable that carries its ARN. */
export const bindSecret = (fn: LambdaFunction, secret: ISecret, envName: string): void => {
  secret.grantRead(fn);
  fn.addEnvironment(envName, secret.secretArn);
};

/** Allows SESv2 SendEmail from the sender's address or domain identity in this region only. */
export const bindEmailSender = (fn: LambdaFunction, from: string): void => {
  const stack = Stack.of(fn);
  const domain = from.slice(from.indexOf('@') + 1);
  fn.addToRolePolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['ses:SendEmail'],
      resources: [from, domain].map((identity) =>
        stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }),
      ),
    }),
  );
  fn.addEnvironment('EMAIL_FROM', from);
};

/** Allows invoking this region's Bedrock foundation models; the model is chosen per agent at run time. */
export const bindModelInvocation = (fn: LambdaFunction): void => {
  const stack = Stack.of(fn);
  fn.addToRolePolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
      resources: [stack.formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: '*' })],
    }),
  );
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:${stack.region}::foundation-model/*]`,
    reason:
      'Agents choose their model at run time; access is limited to foundation models in this region (no cross-region inference profiles, for data residency).',
  });
};

const logicalIdOf = (construct: Construct): string => {
  const child = construct.node.defaultChild;
  if (!child) throw new Error(`${construct.node.path} has no CloudFormation resource`);
  return Stack.of(construct).getLogicalId(child as CfnElement);
};

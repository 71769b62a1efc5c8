import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import {
  AssetHashType,
  type CfnElement,
  DockerImage,
  type Duration,
  type RemovalPolicy,
  Size,
  Stack,
  Validations,
} from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, type IGrantable, type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  type ApplicationLogLevel,
  Architecture,
  Code,
  Function as LambdaFunction,
  LoggingFormat,
  Runtime,
  SystemLogLevel,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import type { QueueDefinition } from '#shared/kernel/queues';
import { importsNativePackage, repositoryRoot } from '../bundling';
import { adotCollectorLayer, bindTraceExport, type TracingExport, traceExportEnvironment } from './tracing';

/**
 * The handler bundled by `infra/bundling.ts` (the same build the benchmark measures).
 * CDK's bundling hook is synchronous, so the bundler runs as a child process; no Docker.
 */
const bundledCode = (entry: string): Code =>
  Code.fromAsset(join(repositoryRoot, entry, '..'), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('unused-local-bundling-only'),
      // CDK caches a bundle by source folder and the JSON of these options, which drops `local`: without the entry
      // here, handlers sharing a folder (functions/workers/) would all ship the first one bundled.
      command: ['infra/bundle-lambda.ts', entry],
      local: {
        tryBundle(outputDir: string) {
          execFileSync(
            process.execPath,
            ['--import', 'tsx', join(repositoryRoot, 'infra/bundle-lambda.ts'), entry, outputDir],
            {
              cwd: repositoryRoot,
              stdio: 'inherit',
            },
          );
          return true;
        },
      },
    },
  });

/** Settings every function of a stack shares. */
export interface FunctionDefaults {
  metricsNamespace: string;
  logRetention: RetentionDays;
  logRemovalPolicy: RemovalPolicy;
  logLevel: ApplicationLogLevel;
  environment: Record<string, string>;
  /** Whether the functions trace the requests API Gateway sampled (and those a sampled request queued). */
  traced: boolean;
  /** OpenTelemetry traces exported instead of the Powertools tracer's (`infra/constructs/tracing.ts`), and the share sampled. */
  traceExport?: { mode: TracingExport; sampleRate: number };
}

export interface PlatformFunctionProps {
  /** Handler file, relative to the repository root. */
  entry: string;
  /** Powertools service name. */
  serviceName: string;
  description: string;
  timeout: Duration;
  defaults: FunctionDefaults;
  /** MB; 512 unless the function needs more (CPU grows with it). */
  memorySize?: number;
  /** MB of /tmp; Lambda's 512 unless given. */
  ephemeralStorageSize?: number;
}

/**
 * A Node.js 22 function (arm64, or x86_64 when it carries a native binding) bundled locally by esbuild as minified ESM
 * (`index.mjs` and the chunks it imports lazily). The AWS SDK is bundled rather than taken from the runtime: the
 * version is the one the tests ran against, and tree-shaken chunks load faster on cold start than resolving the
 * runtime's full SDK from disk.
 */
export class PlatformFunction extends Construct {
  readonly function: LambdaFunction;

  constructor(scope: Construct, id: string, props: PlatformFunctionProps) {
    super(scope, id);
    const { defaults } = props;
    const logGroup = new LogGroup(this, 'Logs', {
      retention: defaults.logRetention,
      removalPolicy: defaults.logRemovalPolicy,
    });
    // An own role instead of AWSLambdaBasicExecutionRole, which may write to any log group.
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grantWrite(role);

    // Graviton, unless the bundle carries a native binding built for x86_64 (DuckDB).
    const architecture = importsNativePackage(props.entry) ? Architecture.X86_64 : Architecture.ARM_64;
    const { traceExport } = defaults;
    this.function = new LambdaFunction(this, 'Function', {
      code: bundledCode(props.entry),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture,
      // The ADOT collector, which takes the function's spans on localhost and sends them to X-Ray.
      layers: traceExport?.mode === 'xray' ? [adotCollectorLayer(this, 'AdotCollector', architecture)] : undefined,
      memorySize: props.memorySize ?? 512,
      ...(props.ephemeralStorageSize ? { ephemeralStorageSize: Size.mebibytes(props.ephemeralStorageSize) } : {}),
      timeout: props.timeout,
      role,
      // API Gateway's sampling rule decides which requests are traced; a function follows the decision it is handed.
      tracing: defaults.traced ? Tracing.PASS_THROUGH : Tracing.DISABLED,
      logGroup,
      loggingFormat: LoggingFormat.JSON,
      applicationLogLevelV2: defaults.logLevel,
      systemLogLevelV2: SystemLogLevel.WARN,
      environment: {
        ...defaults.environment,
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_METRICS_NAMESPACE: defaults.metricsNamespace,
        // Matches the Lambda application log level, which Powertools would otherwise warn about.
        POWERTOOLS_LOG_LEVEL: defaults.logLevel,
        // Untraced, the X-Ray tracer is not even loaded (`shared/aws/observability.ts`).
        ...(defaults.traced ? {} : { POWERTOOLS_TRACE_ENABLED: 'false' }),
        ...(traceExport ? traceExportEnvironment(traceExport.mode, Stack.of(this).region, traceExport.sampleRate) : {}),
      },
    });
    if (traceExport) bindTraceExport(this.function);

    if (defaults.traced)
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

/**
 * What the bind helpers grant to: a function, or the voice session container (its task role and
 * its environment, `infra/constructs/voice-sessions.ts`), which runs the same code.
 */
export interface Bindable extends IGrantable, IConstruct {
  addToRolePolicy(statement: PolicyStatement): void;
  addEnvironment(name: string, value: string): unknown;
  readonly role?: IRole;
}

export type TableAccess = 'read' | 'readWrite';
/** `write`: puts, tags and deletes without reading back (a writer of prompt logs only). */
export type BucketAccess = 'read' | 'write' | 'readWrite';
export type QueueAccess = 'send' | 'consume';

export interface PlatformQueue {
  queue: IQueue;
  definition: QueueDefinition;
}

/**
 * Item and query actions on the table and its indexes, and the table name. Narrower than
 * `grantReadData`/`grantReadWriteData`: no Scan (the code never scans) and no stream reads.
 * Transactions need no action of their own: each item in one is authorized by its action.
 */
export const bindTable = (fn: Bindable, table: ITable, access: TableAccess): void => {
  const actions = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'];
  if (access === 'readWrite') {
    actions.push('dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem');
  }
  fn.addToRolePolicy(
    new PolicyStatement({ effect: Effect.ALLOW, actions, resources: [table.tableArn, `${table.tableArn}/index/*`] }),
  );
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
export const bindQueue = (fn: Bindable, { queue, definition }: PlatformQueue, access: QueueAccess): void => {
  if (access === 'send') {
    queue.grantSendMessages(fn);
    fn.addEnvironment(definition.urlEnv, queue.queueUrl);
    return;
  }
  if (!(fn instanceof LambdaFunction)) throw new Error('only a function consumes a queue');
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
 * narrower than `IBucket.grantRead`/`grantReadWrite`; under `prefix` only when one is given.
 * The bucket's name goes in `envName` (the artifact bucket's variable unless another is named).
 */
export const bindBucket = (
  fn: Bindable,
  bucket: IBucket,
  access: BucketAccess,
  prefix = '',
  envName = 'ARTIFACT_BUCKET',
): void => {
  const objectActions = access === 'write' ? [] : ['s3:GetObject'];
  // Tagging: conversation objects carry their retention's tag, which the lifecycle rules select by.
  if (access !== 'read') objectActions.push('s3:PutObject', 's3:PutObjectTagging', 's3:DeleteObject');
  fn.addToRolePolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: objectActions,
      resources: [bucket.arnForObjects(`${prefix}*`)],
    }),
  );
  fn.addToRolePolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      ...(prefix ? { conditions: { StringLike: { 's3:prefix': `${prefix}*` } } } : {}),
    }),
  );
  fn.addEnvironment(envName, bucket.bucketName);
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(bucket)}.Arn>/${prefix}*]`,
    reason: 'Object keys are per-tenant and generated at run time; access is limited to this one bucket.',
  });
};

/** Grants read access to a secret and sets the variable that carries its ARN. */
export const bindSecret = (fn: Bindable, secret: ISecret, envName: string): void => {
  secret.grantRead(fn);
  fn.addEnvironment(envName, secret.secretArn);
};

/** Allows SESv2 SendEmail from the sender's address or domain identity in this region only. */
export const bindEmailSender = (fn: Bindable, from: string): void => {
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
export const bindModelInvocation = (fn: Bindable): void => {
  const stack = Stack.of(fn);
  fn.addToRolePolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
      resources: [
        stack.formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: '*' }),
      ],
    }),
  );
  Validations.of(fn.role ?? fn).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:${stack.region}::foundation-model/*]`,
    reason:
      'Agents choose their model at run time; access is limited to foundation models in this region (no cross-region inference profiles, for data residency).',
  });
};

/**
 * Speaks with Amazon Polly and listens with Amazon Transcribe streaming (SPEECH_PROVIDER=aws):
 * a Lambda cannot run the built-in recognizer, a Debian program.
 */
export const bindSpeech = (fn: Bindable, pollyEngine: string | undefined): void => {
  fn.addToRolePolicy(
    new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['polly:SynthesizeSpeech', 'transcribe:StartStreamTranscription'],
      resources: ['*'],
    }),
  );
  fn.addEnvironment('SPEECH_PROVIDER', 'aws');
  if (pollyEngine) fn.addEnvironment('SPEECH_POLLY_ENGINE', pollyEngine);
  Validations.of(fn.role ?? fn).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'Polly synthesis and Transcribe streaming act on no resource: their IAM actions take only "*".',
  });
};

export const logicalIdOf = (construct: Construct): string => {
  const child = construct.node.defaultChild;
  if (!child) throw new Error(`${construct.node.path} has no CloudFormation resource`);
  return Stack.of(construct).getLogicalId(child as CfnElement);
};

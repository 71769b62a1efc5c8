import { readFileSync } from 'node:fs';
import { App, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalResourcePaths } from '#shared/api/paths';
import { routeTable } from '#shared/api/route-table';
import {
  businessMetric,
  escalationTriggerValues,
  operatorMetric,
  turnLatencyMetrics,
} from '#shared/aws/business-metrics';
import { globalIndexes, projectedIndexes, tableKeys } from '#shared/data/table-definition';
import { endpointGroups, type Operation, selfRoutedGroups } from '#shared/kernel/operation';
import { queueDefinitions } from '#shared/kernel/queues';
import { conversationRetentionDays } from '#shared/organization/schemas';
import { DataStore, indexesAtUpgradeStep, lastIndexUpgradeStep } from '../../infra/constructs/data-store';
import { MessageQueues } from '../../infra/constructs/message-queues';
import { pascalCase } from '../../infra/constructs/naming';
import {
  bindBucket,
  bindEmailSender,
  bindModelInvocation,
  bindQueue,
  bindSecret,
  bindTable,
} from '../../infra/constructs/platform-function';
import { readPlatformSettings } from '../../infra/stacks/platform-settings';
import { PlatformStack } from '../../infra/stacks/platform-stack';
import { addRegionalStacks } from '../../infra/stacks/regional-stacks';

/** The context `cdk synth` uses, so the tests check what would deploy. */
const cdkContext: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
).context;

/**
 * CDK's own switch for skipping asset bundling (what `cdk synth --exclusively` uses for
 * unselected stacks). Entry files must still exist; esbuild just does not run, which
 * keeps each synth well under a second. `npx cdk synth` bundles for real.
 */
const skipBundling = { 'aws:cdk:bundling-stacks': [] };

const synth = (context: Record<string, unknown> = {}): { app: App; stacks: PlatformStack[] } => {
  const app = new App({ context: { ...cdkContext, ...skipBundling, ...context } });
  return { app, stacks: addRegionalStacks(app) };
};

type Resources = Record<string, { Properties: Record<string, unknown> } & Record<string, unknown>>;
type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };

/** The operations API Gateway routes itself, a method each (self-routed groups' functions route their own). */
const apiRouted = routeTable.filter((operation) => !selfRoutedGroups.includes(operation.group));
const groupsInUse = endpointGroups.filter((group) => routeTable.some((operation) => operation.group === group));
const consumedQueues = queueDefinitions.filter((definition) => definition.hasConsumer);

/** The logical id an output refers to, e.g. the table behind `TableName`. */
const outputTarget = (template: Template, output: string): string => {
  const value = template.toJSON().Outputs[output]?.Value as { Ref?: string } | undefined;
  if (!value?.Ref) throw new Error(`output ${output} is not a Ref`);
  return value.Ref;
};

/** A queue's and its dead-letter queue's logical ids, found through the queue's URL output. */
const queueIds = (template: Template, worker: string): { queueId: string; deadLetterId: string } => {
  const queueId = outputTarget(template, `${pascalCase(worker)}QueueUrl`);
  const queue = (template.toJSON().Resources as Resources)[queueId];
  const redrive = queue?.Properties.RedrivePolicy as { deadLetterTargetArn: { 'Fn::GetAtt': [string] } } | undefined;
  if (!redrive) throw new Error(`queue ${worker} has no redrive policy`);
  return { queueId, deadLetterId: redrive.deadLetterTargetArn['Fn::GetAtt'][0] };
};

/** The environments of the functions that speak through Polly and Transcribe. */
const speechEnvironments = (template: Template): Record<string, string>[] =>
  (
    Object.values(template.findResources('AWS::Lambda::Function')) as {
      Properties: { Environment?: { Variables: Record<string, string> } };
    }[]
  )
    .map((fn) => fn.Properties.Environment?.Variables ?? {})
    .filter((variables) => variables.SPEECH_PROVIDER === 'aws');

const functionsByDescription = (template: Template, description: string): Resources =>
  template.findResources('AWS::Lambda::Function', { Properties: { Description: description } }) as Resources;

/** The templates a regional stack deploys: its own, then its nested stacks' (the API's routes stacks). */
const templatesOf = (stack: Stack): Map<string, Template> =>
  new Map(
    [stack, ...stack.node.findAll().filter(NestedStack.isNestedStack)].map((each) => [
      each.node.path,
      Template.fromStack(each),
    ]),
  );

/** The API's methods, in whichever of the regional stack's templates each lives. */
const methodsIn = (templates: Map<string, Template>) =>
  [...templates.values()].flatMap((each) => Object.values(each.findResources('AWS::ApiGateway::Method')));

const onlyOne = <T>(record: Record<string, T>): [string, T] => {
  const entries = Object.entries(record);
  expect(entries).toHaveLength(1);
  return entries[0] as [string, T];
};

describe('platform stack', () => {
  let stack: PlatformStack;
  let template: Template;
  let templates: Map<string, Template>;

  beforeAll(() => {
    const [first] = synth({ regions: ['eu-central-1'] }).stacks;
    if (!first) throw new Error('no stack');
    stack = first;
    template = Template.fromStack(stack);
    templates = templatesOf(stack);
  });

  it('keeps the single table durable: keys, indexes, PITR, TTL, deletion protection, retained', () => {
    const keys = (partition: string, sort: string) => [
      { AttributeName: partition, KeyType: 'HASH' },
      { AttributeName: sort, KeyType: 'RANGE' },
    ];
    template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: {
        KeySchema: keys(tableKeys.partitionKey, tableKeys.sortKey),
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: tableKeys.timeToLiveAttribute, Enabled: true },
        DeletionProtectionEnabled: true,
        SSESpecification: { SSEEnabled: true },
        GlobalSecondaryIndexes: globalIndexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: keys(index.partitionKey, index.sortKey),
          Projection: { ProjectionType: 'KEYS_ONLY' },
        })),
        AttributeDefinitions: Match.arrayWith([{ AttributeName: tableKeys.partitionKey, AttributeType: 'S' }]),
      },
    });
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
  });

  it('upgrades the projected indexes of a deployment made before to keys-only ones, one index created or deleted per step', () => {
    const before = { indexes: projectedIndexes, readsProjected: true };
    const steps = [
      before,
      ...Array.from({ length: lastIndexUpgradeStep }, (_, index) => indexesAtUpgradeStep(index + 1)),
    ];
    const names = (step: { indexes: { indexName: string }[] }) => step.indexes.map((index) => index.indexName);
    for (const [index, step] of steps.entries()) {
      const previous = steps[index - 1];
      if (!previous) continue;
      const added = names(step).filter((name) => !names(previous).includes(name));
      const removed = names(previous).filter((name) => !names(step).includes(name));
      expect(added.length + removed.length).toBeLessThanOrEqual(1);
      // The functions read only indexes the previous deployment had built, and this one keeps.
      const read = step.readsProjected ? names(before) : globalIndexes.map((each) => each.indexName);
      expect(names(previous)).toEqual(expect.arrayContaining(read));
      expect(names(step)).toEqual(expect.arrayContaining(read));
    }
    expect(steps.at(-1)).toEqual(indexesAtUpgradeStep(undefined));

    // Mid-upgrade, the same table (keys unchanged) with both sets, and functions told which to read.
    const [stack] = synth({ regions: ['eu-central-1'], indexUpgradeStep: '3' }).stacks;
    if (!stack) throw new Error('no stack');
    const midway = Template.fromStack(stack);
    const [tableId, table] = onlyOne(midway.findResources('AWS::DynamoDB::Table'));
    expect(tableId).toBe(onlyOne(template.findResources('AWS::DynamoDB::Table'))[0]);
    expect(table.Properties.KeySchema).toEqual(
      onlyOne(template.findResources('AWS::DynamoDB::Table'))[1].Properties.KeySchema,
    );
    expect(table.Properties.GlobalSecondaryIndexes).toHaveLength(9);
    const [, fn] = onlyOne(functionsByDescription(midway, 'Endpoint group conversation'));
    expect(fn.Properties.Environment).toMatchObject({ Variables: { TABLE_INDEXES: 'projected' } });
    expect(() => synth({ regions: ['eu-central-1'], indexUpgradeStep: '14' })).toThrow(/indexUpgradeStep/);
  });

  it('gives every queue an encrypted, TLS-only dead-letter queue after 5 receives or more, and a visibility of 6x its consumer timeout', () => {
    const resources = template.toJSON().Resources as Resources;
    // Every queue of every template is a work queue with a redrive policy, the dead-letter queue of
    // one, or the on-failure destination of a stream's event source mapping (the analytics lake's).
    const queues = [...templates.values()].flatMap((each) => Object.entries(each.findResources('AWS::SQS::Queue')));
    const mappings = Object.values(template.findResources('AWS::Lambda::EventSourceMapping'));
    const failureDestinationIds = mappings.flatMap((mapping) => {
      const destination = mapping.Properties.DestinationConfig?.OnFailure?.Destination as
        | { 'Fn::GetAtt': [string] }
        | undefined;
      return destination ? [destination['Fn::GetAtt'][0]] : [];
    });
    const deadLetterIds = queues.flatMap(([, queue]) => {
      const redrive = queue.Properties.RedrivePolicy as { deadLetterTargetArn: { 'Fn::GetAtt': [string] } } | undefined;
      return redrive ? [redrive.deadLetterTargetArn['Fn::GetAtt'][0]] : [];
    });
    expect(
      queues.filter(
        ([id, queue]) =>
          !queue.Properties.RedrivePolicy && !deadLetterIds.includes(id) && !failureDestinationIds.includes(id),
      ),
    ).toEqual([]);
    expect(queues).toHaveLength(2 * queueDefinitions.length + failureDestinationIds.length);
    /** A queue that keeps what failed: encrypted, kept 14 days, reached over TLS only. */
    const expectFailureQueue = (id: string) => {
      expect(resources[id]?.Properties).toMatchObject({
        MessageRetentionPeriod: 14 * 24 * 3600,
        SqsManagedSseEnabled: true,
      });
      expectTlsOnly(id);
    };
    const expectTlsOnly = (id: string) =>
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    for (const id of failureDestinationIds) expectFailureQueue(id);
    for (const definition of queueDefinitions) {
      const { queueId, deadLetterId } = queueIds(template, definition.worker);
      const queue = resources[queueId]?.Properties as {
        VisibilityTimeout: number;
        RedrivePolicy: { maxReceiveCount: number };
        SqsManagedSseEnabled: boolean;
      };
      expect(queue.SqsManagedSseEnabled).toBe(true);
      expect(queue.RedrivePolicy.maxReceiveCount).toBe(definition.maxReceiveCount);
      expect(queue.RedrivePolicy.maxReceiveCount).toBeGreaterThanOrEqual(5);
      expectFailureQueue(deadLetterId);
      expectTlsOnly(queueId);

      const queueArn = JSON.stringify({ 'Fn::GetAtt': [queueId, 'Arn'] });
      const consumers = mappings.filter((mapping) => JSON.stringify(mapping.Properties.EventSourceArn) === queueArn);
      expect(consumers).toHaveLength(definition.hasConsumer ? 1 : 0);
      const [consumer] = consumers;
      if (!consumer) {
        expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * definition.consumerTimeoutSeconds);
        continue;
      }
      expect(consumer.Properties).toMatchObject({
        BatchSize: definition.batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: definition.maxConcurrency },
      });
      const functionId = (consumer.Properties.FunctionName as { Ref: string }).Ref;
      const timeout = (resources[functionId]?.Properties as { Timeout?: number } | undefined)?.Timeout;
      expect(timeout).toBeGreaterThan(0);
      expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(6 * (timeout as number));
    }
  });

  it("expires a conversation's objects by their retention tag, one lifecycle rule per allowed retention, beside the table's TTL", () => {
    const retentions = conversationRetentionDays.filter((days) => days > 0);
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith(
          retentions.map((days) =>
            Match.objectLike({
              TagFilters: [{ Key: 'retention-days', Value: String(days) }],
              ExpirationInDays: days,
              Status: 'Enabled',
            }),
          ),
        ),
      },
    });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expires_at_epoch', Enabled: true },
    });
  });

  it('locks the artifact bucket down and expires generated objects', () => {
    const bucketId = outputTarget(template, 'BucketName');
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LoggingConfiguration: { DestinationBucketName: Match.anyValue() },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ Prefix: 'prompt-logs/', ExpirationInDays: 30, Status: 'Enabled' }),
            Match.objectLike({ Prefix: 'artifacts/', ExpirationInDays: 90, Status: 'Enabled' }),
          ]),
        },
      },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('creates one Node.js 22 function per endpoint group in the route table, per consumed queue and per schedule, on arm64 unless it carries a native binding', () => {
    // The analytics lake adds three (tests/infra/analytics-lake.test.ts): its stream consumer, compaction and backfill.
    template.resourceCountIs('AWS::Lambda::Function', groupsInUse.length + consumedQueues.length + 1 + 3);
    // The daily schedule, the lake's compaction, and the rule that routes ended tool builds (tests/infra/tool-build.test.ts).
    template.resourceCountIs('AWS::Events::Rule', 3);
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 day)' });
    const expected = {
      Runtime: 'nodejs22.x',
      Architectures: Match.anyValue(),
      MemorySize: Match.anyValue(),
      // API Gateway's sampling rule decides; the functions follow the decision they are handed.
      TracingConfig: { Mode: 'PassThrough' },
      LoggingConfig: Match.objectLike({ LogFormat: 'JSON', LogGroup: Match.anyValue() }),
    };
    for (const group of groupsInUse) {
      const [, fn] = onlyOne(functionsByDescription(template, `Endpoint group ${group}`));
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(Object.keys(variables)).toEqual(
        expect.arrayContaining(['TABLE_NAME', 'SIGNING_KEY_SECRET_ARN', 'JWT_ISSUER', 'MAINTENANCE_MODE']),
      );
      expect(variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: group,
        POWERTOOLS_METRICS_NAMESPACE: 'ClassicApi',
        NODE_OPTIONS: '--enable-source-maps',
      });
    }
    for (const definition of consumedQueues) {
      onlyOne(functionsByDescription(template, `Consumer of the ${definition.worker} queue`));
    }
    template.allResourcesProperties('AWS::Lambda::Function', expected);
    // The admin group, the console's lake pages, the MCP endpoint (its sql_query) and the lake's
    // functions carry DuckDB, whose installed binding is x86_64; every other function (the web app's
    // included) is Graviton. 512 MB each, but DuckDB's SQL query, the lake pages, the MCP endpoint,
    // compaction and backfill.
    for (const group of ['admin', 'app-analytics', 'mcp']) {
      const [, fn] = onlyOne(functionsByDescription(template, `Endpoint group ${group}`));
      expect(fn.Properties.Architectures).toEqual(['x86_64']);
    }
    const [, app] = onlyOne(functionsByDescription(template, 'Endpoint group app'));
    expect(app.Properties.Architectures).toEqual(['arm64']);
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    const architectures = functions.map((fn) => (fn.Properties.Architectures as string[])[0]);
    expect(architectures.filter((architecture) => architecture === 'arm64')).toHaveLength(architectures.length - 6);
    expect(functions.filter((fn) => fn.Properties.MemorySize !== 512).map((fn) => fn.Properties.Description)).toEqual(
      expect.arrayContaining([
        'Endpoint group admin',
        'Endpoint group app-analytics',
        'Endpoint group mcp',
        'Scheduled lake-compaction run',
        'Lake backfill job, invoked by an operator',
      ]),
    );
    expect(functions.filter((fn) => fn.Properties.MemorySize !== 512)).toHaveLength(5);
  });

  it('derives the REST API from the route table, streaming only the streaming operations', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
    const methods = methodsIn(templates).filter((method) => method.Properties.HttpMethod !== 'ANY');
    expect(methods).toHaveLength(apiRouted.length);
    for (const operation of apiRouted) {
      const method = methods.find((candidate) => candidate.Properties.OperationName === operation.operationId);
      expect(method?.Properties).toMatchObject({
        HttpMethod: operation.method,
        AuthorizationType: 'NONE',
        Integration: { Type: 'AWS_PROXY' },
      });
      const integration = method?.Properties.Integration as Record<string, unknown>;
      if (operation.streaming) expect(integration.ResponseTransferMode).toBe('STREAM');
      else expect(integration.ResponseTransferMode).toBeUndefined();
    }
    for (const [operation, resourcePath] of canonicalResourcePaths(apiRouted)) {
      const methods = stack.api.methodsByGroup.get(operation.group) ?? [];
      expect(
        methods.some((method) => method.resource.path === resourcePath && method.httpMethod === operation.method),
      ).toBe(true);
    }
    template.hasResourceProperties('AWS::ApiGateway::Resource', { PathPart: '{organization}' });
  });

  it('routes each self-routed group through its prefix and one greedy resource, without a method per operation', () => {
    for (const group of selfRoutedGroups) {
      const methods = stack.api.methodsByGroup.get(group) ?? [];
      expect(methods.map((method) => [method.resource.path, method.httpMethod])).toEqual([
        ['/app/{organization}', 'ANY'],
        ['/app/{organization}/{proxy+}', 'ANY'],
      ]);
    }
  });

  it('keeps every stack, the regional one and each nested one, well under CloudFormation’s 500 resources', () => {
    const counts = [...templates].map(([path, each]) => ({
      stack: path,
      resources: Object.keys(each.toJSON().Resources).length,
    }));
    console.table(counts);
    // The margin leaves room for a release's new operations before the routes move again.
    expect(counts.filter(({ resources }) => resources > 450)).toEqual([]);
  });

  it('puts each endpoint group’s methods in a nested stack of its own, which the stage’s deployment waits for', () => {
    const nestedStackIds = Object.keys(template.findResources('AWS::CloudFormation::Stack'));
    expect(nestedStackIds).toHaveLength(groupsInUse.length);
    expect(template.findResources('AWS::ApiGateway::Method')).toEqual({});
    for (const group of groupsInUse) {
      const routes = templates.get(`${stack.node.path}/Api/${pascalCase(group)}Routes`);
      const methods = Object.values(routes?.findResources('AWS::ApiGateway::Method') ?? {});
      const expected = stack.api.methodsByGroup.get(group)?.map((method) => method.httpMethod) ?? [];
      expect(
        methods
          .filter((method) => method.Properties.Integration?.Type !== 'MOCK')
          .map((method) => method.Properties.HttpMethod),
        group,
      ).toEqual(expected);
    }
    const [, deployment] = onlyOne(template.findResources('AWS::ApiGateway::Deployment'));
    expect(deployment.DependsOn).toEqual(expect.arrayContaining(nestedStackIds));
  });

  it('answers a routed path with another method 405 naming the allowed methods, without invoking a function', () => {
    const fallbacks = methodsIn(templates).filter(
      (method) => method.Properties.HttpMethod === 'ANY' && method.Properties.Integration?.Type === 'MOCK',
    );
    expect(fallbacks).toHaveLength(new Set(canonicalResourcePaths(apiRouted).values()).size);
    for (const fallback of fallbacks) {
      expect(fallback.Properties.Integration).toMatchObject({
        Type: 'MOCK',
        IntegrationResponses: [
          {
            StatusCode: '405',
            ResponseTemplates: { 'application/json': '{"detail": "Method Not Allowed"}' },
            ResponseParameters: {
              'method.response.header.Allow': expect.stringMatching(/^'(GET|POST|PUT|DELETE)(, [A-Z]+)*'$/),
            },
          },
        ],
      });
    }
  });

  it('answers unknown paths with a JSON 404 and keeps gateway errors in the detail shape', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
      StatusCode: '404',
      ResponseTemplates: { 'application/json': '{"detail": "Not Found"}' },
    });
    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX']) {
      template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        ResponseTemplates: { 'application/json': '{"detail": $context.error.messageString}' },
      });
    }
  });

  it('logs, traces and throttles the stage', () => {
    const stage = onlyOne(template.findResources('AWS::ApiGateway::Stage'))[1].Properties as {
      AccessLogSetting: { Format: string };
      MethodSettings: Record<string, unknown>[];
    };
    expect(stage).toMatchObject({ StageName: 'prod', TracingEnabled: true });
    expect(JSON.parse(stage.AccessLogSetting.Format)).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      resourcePath: '$context.resourcePath',
    });
    expect(stage.MethodSettings).toEqual([
      expect.objectContaining({
        ResourcePath: '/*',
        HttpMethod: '*',
        LoggingLevel: 'ERROR',
        MetricsEnabled: true,
        DataTraceEnabled: false,
        ThrottlingRateLimit: 500,
        ThrottlingBurstLimit: 1000,
      }),
    ]);
    template.resourceCountIs('AWS::ApiGateway::Account', 1);

    const [dev] = synth({ stage: 'dev', regions: ['eu-central-1'] }).stacks;
    if (!dev) throw new Error('no stack');
    Template.fromStack(dev).hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'dev',
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 })],
    });
  });

  it('traces 5% of requests by default: a sampling rule of the stage without reservoir, and no tracing at tracingSampleRate 0', () => {
    const restApi = onlyOne(template.findResources('AWS::ApiGateway::RestApi'))[1].Properties as { Name: string };
    template.hasResourceProperties('AWS::XRay::SamplingRule', {
      SamplingRule: {
        FixedRate: 0.05,
        ReservoirSize: 0,
        ServiceName: `${restApi.Name}/prod`,
        ServiceType: 'AWS::ApiGateway::Stage',
      },
    });

    const [untraced] = synth({ regions: ['eu-central-1'], tracingSampleRate: '0' }).stacks;
    if (!untraced) throw new Error('no stack');
    const quiet = Template.fromStack(untraced);
    quiet.resourceCountIs('AWS::XRay::SamplingRule', 0);
    quiet.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: false });
    for (const [, fn] of Object.entries(quiet.findResources('AWS::Lambda::Function'))) {
      expect(fn.Properties.TracingConfig).toBeUndefined();
      expect(fn.Properties.Environment.Variables).toMatchObject({ POWERTOOLS_TRACE_ENABLED: 'false' });
    }
    expect(() => synth({ regions: ['eu-central-1'], tracingSampleRate: '2' })).toThrow(/tracingSampleRate/);
  });

  it('has a dashboard with a business row and a row per endpoint group and queue, DLQ alarms and a 5xx-rate alarm', () => {
    const [, dashboard] = onlyOne(template.findResources('AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const group of groupsInUse) {
      expect(body).toContain(`${group}: requests`);
      expect(body).toContain(`${group}: errors`);
      expect(body).toContain(`${group}: latency`);
    }
    for (const { worker } of queueDefinitions) expect(body).toContain(`${worker}: dead-letter queue`);
    for (const title of [
      'Conversations started',
      'Interactions',
      'Analyses completed',
      'Tool calls',
      'Error responses by kind',
      '5xx responses',
    ]) {
      expect(body).toContain(title);
    }
    // A search over the functions' namespace per business metric, whichever function emits it.
    for (const metricName of Object.values(businessMetric)) {
      expect(body).toMatch(new RegExp(`SEARCH\\('\\{ClassicApi,[a-z,]*service\\} MetricName=\\W+${metricName}\\W`));
    }

    // Each stage of a turn as p50 and p99 over the services' series (dimension service_id).
    for (const metricName of turnLatencyMetrics) {
      expect(body).toContain(`${metricName} (p50, p99)`);
      for (const statistic of ['p50', 'p99']) {
        expect(body).toMatch(
          new RegExp(
            `MAX\\(SEARCH\\('\\{ClassicApi,service,service_id\\} MetricName=\\W+${metricName}\\W+', '${statistic}', 300\\)\\)`,
          ),
        );
      }
    }
    for (const title of ['Turn tokens', 'Turn cost (USD)']) expect(body).toContain(title);

    // Operators: escalations by trigger and expired, time to take over and time held, as p50 and p99.
    for (const trigger of escalationTriggerValues) {
      expect(body).toMatch(
        new RegExp(
          `SEARCH\\('\\{ClassicApi,service,trigger\\} MetricName=\\W+${operatorMetric.escalations}\\W+ trigger=\\W+${trigger}\\W`,
        ),
      );
    }
    expect(body).toMatch(
      new RegExp(`SEARCH\\('\\{ClassicApi,service\\} MetricName=\\W+${operatorMetric.escalationsExpired}\\W`),
    );
    for (const [title, metricName] of [
      ['Time to take over (ms, p50, p99)', operatorMetric.takeOverWaitMs],
      ['Time under an operator (ms, p50, p99)', operatorMetric.heldMs],
    ]) {
      expect(body).toContain(title);
      for (const statistic of ['p50', 'p99']) {
        expect(body).toMatch(
          new RegExp(
            `MAX\\(SEARCH\\('\\{ClassicApi,service\\} MetricName=\\W+${metricName}\\W+', '${statistic}', 300\\)\\)`,
          ),
        );
      }
    }

    // The analytics lake's stream failures are alarmed too (tests/infra/analytics-lake.test.ts).
    template.resourceCountIs('AWS::CloudWatch::Alarm', queueDefinitions.length + 1 + 1);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 0.01,
      ComparisonOperator: 'GreaterThanThreshold',
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'errors / requests' })]),
    });
    for (const { worker } of queueDefinitions) {
      const { deadLetterId } = queueIds(template, worker);
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        Metrics: [
          Match.objectLike({
            MetricStat: Match.objectLike({
              Metric: {
                Namespace: 'AWS/SQS',
                MetricName: 'ApproximateNumberOfMessagesVisible',
                Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterId, 'QueueName'] } }],
              },
            }),
          }),
        ],
      });
    }
  });

  it('notifies an encrypted, TLS-only topic when any alarm fires or clears', () => {
    const [topicId, topic] = onlyOne(template.findResources('AWS::SNS::Topic'));
    expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }]);
    }
  });

  it('outputs the API URL, table, bucket and queue URLs', () => {
    const outputs = Object.keys(template.toJSON().Outputs);
    expect(outputs).toEqual(
      expect.arrayContaining([
        'ApiUrl',
        'TableName',
        'BucketName',
        ...queueDefinitions.map(({ worker }) => `${pascalCase(worker)}QueueUrl`),
      ]),
    );
  });

  it("points the e-mailed links of the functions that send e-mail at the API's own URL, built from its id", () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as {
      Properties: { Environment?: { Variables: Record<string, unknown> } };
    }[];
    const linking = functions.filter((fn) => fn.Properties.Environment?.Variables.PUBLIC_BASE_URL !== undefined);
    expect(linking.map((fn) => fn.Properties.Environment?.Variables.POWERTOOLS_SERVICE_NAME).sort()).toEqual([
      'app',
      'user',
    ]);
    for (const fn of linking) {
      expect(JSON.stringify(fn.Properties.Environment?.Variables.PUBLIC_BASE_URL)).toMatch(
        /^\{"Fn::Join":\["",\["https:\/\/",\{"Ref":"Api\w+"\},".execute-api.eu-central-1.",\{"Ref":"AWS::URLSuffix"\},"\/\w+"\]\]\}$/,
      );
    }
  });

  it('reports no errors or warnings while synthesizing', () => {
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
  });

  it("leaves Polly's engine to the adapter's default (neural) without pollyEngine", () => {
    const speaking = speechEnvironments(template);
    expect(speaking.length).toBeGreaterThan(0);
    for (const variables of speaking) expect(variables.SPEECH_POLLY_ENGINE).toBeUndefined();
  });

  it('removes the RestApi default output in favour of ApiUrl', () => {
    expect(Object.keys(template.toJSON().Outputs).filter((id) => id.startsWith('ApiEndpoint'))).toEqual([]);
  });

  /** The statements of every policy attached to a function's role. */
  const statementsOf = (description: string): Statement[] => {
    const [, fn] = onlyOne(functionsByDescription(template, description));
    const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    return Object.values(template.toJSON().Resources as Resources)
      .filter(
        (resource) =>
          resource.Type === 'AWS::IAM::Policy' &&
          (resource.Properties.Roles as { Ref?: string }[]).some((role) => role.Ref === roleId),
      )
      .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };
  const actionsOf = (statement: Statement): string[] =>
    Array.isArray(statement.Action) ? statement.Action : [statement.Action];

  it('lets every function that calls tools mid-turn run tool functions in AWS, and only invoke them', () => {
    const toolRuntimeOf = (description: string) => {
      const [, fn] = onlyOne(functionsByDescription(template, description));
      const toolActions = statementsOf(description)
        .filter((statement) => JSON.stringify(statement.Resource).includes('classic-tool-'))
        .flatMap(actionsOf);
      return {
        runtime: (fn.Properties.Environment as { Variables: Record<string, string> }).Variables.TOOL_RUNTIME,
        toolActions,
      };
    };
    for (const description of [
      'Endpoint group conversation-stream',
      'Endpoint group app',
      'Consumer of the simulation queue',
    ]) {
      expect(toolRuntimeOf(description), description).toEqual({
        runtime: 'lambda',
        toolActions: ['lambda:InvokeFunction'],
      });
    }
  });

  it('streams test-tool and invoke-tool-version from a function of their own for up to 15 minutes, with only what they need', () => {
    // Prepare
    const [, fn] = onlyOne(functionsByDescription(template, 'Endpoint group tool-stream'));
    const methods = methodsIn(templates).filter((candidate) =>
      ['test-tool', 'invoke-tool-version'].includes(candidate.Properties.OperationName),
    );
    const [projectId] = onlyOne(template.findResources('AWS::CodeBuild::Project'));

    // Act
    const statements = statementsOf('Endpoint group tool-stream');
    const allowed = statements.flatMap(actionsOf);

    // Assess
    expect(fn.Properties.Timeout).toBe(900);
    expect(methods).toHaveLength(2);
    for (const method of methods)
      expect(method.Properties.Integration).toMatchObject({ ResponseTransferMode: 'STREAM', TimeoutInMillis: 900_000 });
    expect(
      statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('codebuild:'))),
    ).toEqual([
      expect.objectContaining({
        Action: ['codebuild:StartBuild', 'codebuild:BatchGetBuilds', 'codebuild:StopBuild'],
        Resource: { 'Fn::GetAtt': [projectId, 'Arn'] },
      }),
    ]);
    expect(allowed).toContain('logs:GetLogEvents');
    const objects = statements.filter((statement) => actionsOf(statement).includes('s3:PutObject'));
    expect(objects.map((statement) => JSON.stringify(statement.Resource))).toEqual([
      expect.stringContaining('/tools/*'),
    ]);
    expect(statements.find((statement) => actionsOf(statement).includes('s3:ListBucket'))?.Condition).toEqual({
      StringLike: { 's3:prefix': 'tools/*' },
    });
    // It deletes only the versions of test functions, and sends to no queue.
    expect(statements.filter((statement) => actionsOf(statement).includes('lambda:DeleteFunction'))).toEqual([
      expect.objectContaining({ Condition: { StringEquals: { 'aws:ResourceTag/classic-api:tool': 'test' } } }),
    ]);
    expect(allowed.filter((action) => action.startsWith('sqs:'))).toEqual([]);
  });
});

describe('response streaming', () => {
  // Whatever the route table streams today, a whole group made streaming shows the wiring.
  const streamingAdmin: Operation[] = routeTable.map((operation) =>
    operation.group === 'admin' ? { ...operation, streaming: true } : operation,
  );

  const stackServing = (operations: readonly Operation[]): PlatformStack => {
    const app = new App({ context: { ...cdkContext, ...skipBundling } });
    const { regions: _regions, ...settings } = readPlatformSettings(app.node);
    return new PlatformStack(app, 'Streaming', { env: { region: 'eu-central-1' }, settings, operations });
  };

  it('streams through InvokeWithResponseStream with the function timeout as integration timeout', () => {
    const stack = stackServing(streamingAdmin);
    const template = Template.fromStack(stack);
    const [, fn] = onlyOne(functionsByDescription(template, 'Endpoint group admin'));
    const timeoutSeconds = fn.Properties.Timeout as number;
    expect(timeoutSeconds).toBeGreaterThan(29);
    const adminOperationIds = new Set(
      routeTable.filter((operation) => operation.group === 'admin').map((operation) => operation.operationId),
    );
    const methods = methodsIn(templatesOf(stack)).filter((method) =>
      adminOperationIds.has(method.Properties.OperationName),
    );
    expect(methods).toHaveLength(adminOperationIds.size);
    for (const method of methods) {
      const integration = method.Properties.Integration as {
        ResponseTransferMode: string;
        TimeoutInMillis: number;
        Uri: unknown;
      };
      expect(integration.ResponseTransferMode).toBe('STREAM');
      expect(integration.TimeoutInMillis).toBe(timeoutSeconds * 1000);
      expect(JSON.stringify(integration.Uri)).toContain('/response-streaming-invocations');
    }
  });

  it('refuses a group that mixes streaming and buffered operations', () => {
    const [first, ...rest] = routeTable;
    if (!first) throw new Error('empty route table');
    const mixed: Operation[] = [
      { ...first, streaming: true },
      { ...first, operationId: 'buffered', path: `${first.path}-buffered` },
      ...rest,
    ];
    expect(() => stackServing(mixed)).toThrow(/mixes streaming and buffered/);
  });

  it('redeploys the stage when a method in a routes stack changes', () => {
    const deploymentId = (operations: readonly Operation[]) =>
      onlyOne(Template.fromStack(stackServing(operations)).findResources('AWS::ApiGateway::Deployment'))[0];
    expect(deploymentId(streamingAdmin)).not.toBe(deploymentId(routeTable));
    expect(deploymentId(routeTable)).toBe(deploymentId(routeTable));
  });
});

describe('regions', () => {
  it('creates one independent stack per region', () => {
    const { stacks } = synth({ regions: ['us-east-1', 'eu-central-1'] });
    expect(stacks.map((stack) => [stack.stackName, stack.region])).toEqual([
      ['ClassicApi-us-east-1', 'us-east-1'],
      ['ClassicApi-eu-central-1', 'eu-central-1'],
    ]);
    for (const stack of stacks) {
      const body = JSON.stringify(Template.fromStack(stack).toJSON());
      const others = stacks.filter((other) => other !== stack);
      for (const other of others) expect(body).not.toContain(other.region);
      expect(stack.dependencies).toEqual([]);
      Template.fromStack(stack).resourceCountIs('AWS::DynamoDB::Table', 1);
    }
  });

  it('passes the sign-in redirect origins to the functions that send e-mail only', () => {
    const { stacks } = synth({ regions: ['eu-west-1'], signInRedirectOrigins: 'https://app.example.com' });
    const functions = Object.values(
      Template.fromStack(stacks[0] as PlatformStack).findResources('AWS::Lambda::Function'),
    ) as { Properties: { Environment?: { Variables: Record<string, string> } } }[];
    const withOrigins = functions.filter((fn) => fn.Properties.Environment?.Variables.SIGN_IN_REDIRECT_ORIGINS);
    expect(withOrigins.length).toBeGreaterThan(0);
    for (const fn of withOrigins) {
      expect(fn.Properties.Environment?.Variables).toMatchObject({
        SIGN_IN_REDIRECT_ORIGINS: 'https://app.example.com',
        EMAIL_FROM: expect.any(String),
      });
    }
  });

  it('passes pollyEngine to the speech functions as SPEECH_POLLY_ENGINE', () => {
    const { stacks } = synth({ regions: ['eu-west-1'], pollyEngine: 'standard' });
    const speaking = speechEnvironments(Template.fromStack(stacks[0] as PlatformStack));
    expect(speaking.length).toBeGreaterThan(0);
    for (const variables of speaking) expect(variables.SPEECH_POLLY_ENGINE).toBe('standard');
  });

  it('accepts a comma-separated region list from the command line', () => {
    const { stacks } = synth({ regions: 'eu-west-1,ap-southeast-2' });
    expect(stacks.map((stack) => stack.region)).toEqual(['eu-west-1', 'ap-southeast-2']);
  });

  it.each([
    [{ regions: [] }, /"regions"/],
    [{ regions: ['eu-central-1', 'eu-central-1'] }, /distinct/],
    [{ regions: ['Frankfurt'] }, /"regions"/],
    [{ stage: 'Prod!' }, /"stage"/],
    [{ superAdminEmail: 'nobody' }, /"superAdminEmail"/],
    [{ maintenanceMode: 'maybe' }, /"maintenanceMode"/],
    [{ pollyEngine: 'generative' }, /"pollyEngine"/],
  ])('rejects bad context %j', (context, message) => {
    expect(() => synth(context)).toThrow(message);
  });
});

describe('tracing', () => {
  type Fn = {
    Properties: {
      Role: { 'Fn::GetAtt': [string] };
      Architectures?: string[];
      Layers?: unknown[];
      Environment: { Variables: Record<string, unknown> };
    };
  };
  const traced = (tracing: string) => {
    const [stack] = synth({ regions: ['eu-central-1'], tracing }).stacks;
    if (!stack) throw new Error('no stack');
    const template = Template.fromStack(stack);
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as Fn[];
    /** The actions a role may take, from every policy attached to it. */
    const actionsOf = (roleId: string): string[] =>
      (Object.values(template.findResources('AWS::IAM::Policy')) as Resources[string][])
        .filter((policy) => (policy.Properties.Roles as { Ref?: string }[]).some((role) => role.Ref === roleId))
        .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
        .flatMap((statement) => [statement.Action].flat());
    const [, task] = onlyOne(template.findResources('AWS::ECS::TaskDefinition'));
    const containers = task.Properties.ContainerDefinitions as {
      Name: string;
      Image: unknown;
      Environment?: { Name: string; Value: unknown }[];
    }[];
    const sessionEnvironment = Object.fromEntries(
      (containers.find((container) => container.Name === 'Session')?.Environment ?? []).map(({ Name, Value }) => [
        Name,
        Value,
      ]),
    );
    const taskRole = (task.Properties.TaskRoleArn as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
    return { template, functions, actionsOf, containers, sessionEnvironment, taskRole };
  };

  it('exports OpenTelemetry traces to CloudWatch’s OTLP endpoint with tracing=otlp, Transaction Search on, in place of the Powertools tracer', () => {
    const { template, functions, actionsOf, sessionEnvironment, taskRole } = traced('otlp');
    const exporting = {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://xray.eu-central-1.amazonaws.com/v1/traces',
      OTEL_PROPAGATORS: 'xray-lambda,tracecontext',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.05',
      POWERTOOLS_TRACE_ENABLED: 'false',
    };
    expect(functions.length).toBeGreaterThan(20);
    for (const fn of functions) {
      expect(fn.Properties.Environment.Variables).toMatchObject(exporting);
      expect(fn.Properties.Layers).toBeUndefined();
      expect(actionsOf(fn.Properties.Role['Fn::GetAtt'][0])).toContain('xray:PutTraceSegments');
    }
    expect(sessionEnvironment).toMatchObject(exporting);
    expect(actionsOf(taskRole)).toContain('xray:PutTraceSegments');
    template.hasResourceProperties('AWS::XRay::TransactionSearchConfig', { IndexingPercentage: 1 });
    const [policyId] = onlyOne(template.findResources('AWS::Logs::ResourcePolicy'));
    template.hasResource('AWS::XRay::TransactionSearchConfig', { DependsOn: [policyId] });
  });

  it('exports them through the ADOT collector with tracing=xray: its layer on each function, a sidecar beside the sessions, X-Ray trace ids', () => {
    const { template, functions, actionsOf, containers, sessionEnvironment, taskRole } = traced('xray');
    for (const fn of functions) {
      const architecture = fn.Properties.Architectures?.[0] === 'x86_64' ? 'amd64' : 'arm64';
      expect(fn.Properties.Environment.Variables).toMatchObject({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
        TRACE_ID_FORMAT: 'xray',
        POWERTOOLS_TRACE_ENABLED: 'false',
      });
      expect(JSON.stringify(fn.Properties.Layers)).toContain(
        `:901920570463:layer:aws-otel-collector-${architecture}-ver-`,
      );
      expect(actionsOf(fn.Properties.Role['Fn::GetAtt'][0])).toEqual(
        expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']),
      );
    }
    expect(sessionEnvironment).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' });
    expect(containers.find((container) => container.Name === 'AdotCollector')?.Image).toMatch(/aws-otel-collector:v/);
    expect(actionsOf(taskRole)).toContain('xray:PutTraceSegments');
    template.resourceCountIs('AWS::XRay::TransactionSearchConfig', 0);
  });

  it('exports no OpenTelemetry traces without the option, and refuses an unknown one', () => {
    const [plain] = synth({ regions: ['eu-central-1'] }).stacks;
    if (!plain) throw new Error('no stack');
    const template = Template.fromStack(plain);
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function')) as Fn[]) {
      expect(Object.keys(fn.Properties.Environment.Variables).filter((name) => name.startsWith('OTEL_'))).toEqual([]);
      expect(fn.Properties.Layers).toBeUndefined();
    }
    template.resourceCountIs('AWS::XRay::TransactionSearchConfig', 0);
    expect(() => synth({ regions: ['eu-central-1'], tracing: 'jaeger' })).toThrow(
      /"tracing": expected one of xray, otlp/,
    );
  });

  it('finds nothing unacknowledged by cdk-nag with either option', () => {
    for (const tracing of ['xray', 'otlp']) {
      const { app, stacks } = synth({ regions: ['eu-central-1'], tracing });
      const pack = new AwsSolutionsChecks(app, { verbose: true });
      for (const stack of stacks)
        expect(pack.validateScope(stack).violations.map((violation) => violation.ruleName)).toEqual([]);
    }
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in any regional stack', () => {
    const { app, stacks } = synth();
    const pack = new AwsSolutionsChecks(app, { verbose: true });
    for (const stack of stacks) {
      const findings = pack
        .validateScope(stack)
        .violations.map((violation) => `${violation.severity} ${violation.ruleName}: ${violation.description}`);
      expect(findings, Stack.of(stack).stackName).toEqual([]);
    }
  });

  it('acknowledges exactly the wildcards the bind helpers create, whatever binds them', () => {
    // Groups without a handler yet cannot be synthesized, so exercise every helper on a stand-in.
    const app = new App({ context: cdkContext });
    const helpers = new Stack(app, 'Helpers', { env: { region: 'eu-west-1' } });
    const data = new DataStore(helpers, 'Data');
    const queues = new MessageQueues(helpers, 'Queues');
    const fn = new LambdaFunction(helpers, 'Fn', {
      runtime: Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: Code.fromInline('export const handler = async () => {};'),
    });
    bindTable(fn, data.table, 'read');
    bindBucket(fn, data.bucket, 'readWrite');
    bindQueue(fn, queues.get('analysis'), 'send');
    bindQueue(fn, queues.get('webhook'), 'consume');
    bindSecret(fn, data.signingKey, 'SIGNING_KEY_SECRET_ARN');
    bindEmailSender(fn, 'no-reply@mail.example.com');
    bindModelInvocation(fn);

    const findings = new AwsSolutionsChecks(app)
      .validateScope(helpers)
      .violations.map((violation) => violation.ruleName)
      .filter((rule) => rule.startsWith('AwsSolutions-IAM5'));
    expect(findings).toEqual([]);

    const template = Template.fromStack(helpers);
    const [, standIn] = onlyOne(template.findResources('AWS::Lambda::Function'));
    const variables = Object.keys((standIn.Properties.Environment as { Variables: object }).Variables);
    expect(variables.sort()).toEqual(
      ['ANALYSIS_QUEUE_URL', 'ARTIFACT_BUCKET', 'EMAIL_FROM', 'SIGNING_KEY_SECRET_ARN', 'TABLE_NAME'].sort(),
    );
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'ses:SendEmail',
            Resource: ['identity/no-reply@mail.example.com', 'identity/mail.example.com'].map((suffix) => ({
              'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp(`:${suffix}$`)])],
            })),
          }),
        ]),
      },
    });
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
  });

  it('lets synthesis pass with the pack registered as `cdk synth` does', () => {
    const { app } = synth();
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });
});

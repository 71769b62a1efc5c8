import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalQueue } from '../../../infra/local/aws-stack';
import { type Deployment, readDeployment } from '../../../infra/local/deployment';

/**
 * A small cloud assembly written by hand: the API's method lives in a nested stack that gets the
 * API's root resource and the function's ARN as parameters, a variable is imported from another
 * stack's export, and a queue, a secret, a schedule, the table's stream and the lake's bucket are
 * wired as the platform stack wires them.
 */
const analysisQueue: LocalQueue = {
  url: 'http://127.0.0.1:9324/000000000000/analysis',
  arn: 'arn:aws:sqs:us-east-1:000000000000:analysis',
  dlqUrl: 'http://127.0.0.1:9324/000000000000/analysis-dlq',
  dlqArn: 'arn:aws:sqs:us-east-1:000000000000:analysis-dlq',
};

const functionResource = (service: string, asset: string, variables: Record<string, unknown>) => ({
  Type: 'AWS::Lambda::Function',
  Properties: {
    Handler: 'index.handler',
    Timeout: 28,
    Environment: { Variables: { POWERTOOLS_SERVICE_NAME: service, ...variables } },
  },
  Metadata: { 'aws:asset:path': asset },
});

const platformTemplate = {
  Resources: {
    Table: { Type: 'AWS::DynamoDB::Table' },
    Lake: { Type: 'AWS::S3::Bucket', Metadata: { 'aws:cdk:path': 'Platform/AnalyticsLake/Lake/Resource' } },
    Artifacts: { Type: 'AWS::S3::Bucket', Metadata: { 'aws:cdk:path': 'Platform/Data/Artifacts/Resource' } },
    Secret: { Type: 'AWS::SecretsManager::Secret' },
    AnalysisQueue: { Type: 'AWS::SQS::Queue', Metadata: { 'aws:cdk:path': 'Platform/Queues/Analysis/Resource' } },
    AnalysisDeadLetters: {
      Type: 'AWS::SQS::Queue',
      Metadata: { 'aws:cdk:path': 'Platform/Queues/AnalysisDeadLetters/Resource' },
    },
    AdminFunction: functionResource('admin', 'asset.admin', {
      TABLE_NAME: { Ref: 'Table' },
      TABLE_ARN: { 'Fn::GetAtt': ['Table', 'Arn'] },
      ANALYSIS_QUEUE_URL: { Ref: 'AnalysisQueue' },
      ANALYSIS_DLQ_ARN: { 'Fn::GetAtt': ['AnalysisDeadLetters', 'Arn'] },
      SIGNING_KEY_SECRET_ARN: { Ref: 'Secret' },
      TOOL_RUNTIME: 'lambda',
      SHARED_NAME: { 'Fn::ImportValue': 'shared-name' },
      WORKER_ARN: { 'Fn::GetAtt': ['WorkerFunction', 'Arn'] },
      ISSUER: { 'Fn::Join': [':', ['urn', { Ref: 'AWS::Region' }, { Ref: 'Table' }]] },
    }),
    WorkerFunction: functionResource('analysis-worker', 'asset.worker', {}),
    StreamFunction: functionResource('analytics-lake-stream', 'asset.stream', {
      LAKE_BUCKET: { Ref: 'Lake' },
      ARTIFACT_BUCKET: { Ref: 'Artifacts' },
    }),
    StreamMapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: {
        BatchSize: 1000,
        MaximumBatchingWindowInSeconds: 5,
        MaximumRetryAttempts: 3,
        BisectBatchOnFunctionError: true,
        FilterCriteria: { Filters: [{ Pattern: '{"dynamodb":{"NewImage":{"entity":{"S":["message"]}}}}' }] },
        EventSourceArn: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
        FunctionName: { Ref: 'StreamFunction' },
      },
    },
    Mapping: {
      Type: 'AWS::Lambda::EventSourceMapping',
      Properties: {
        BatchSize: 5,
        EventSourceArn: { 'Fn::GetAtt': ['AnalysisQueue', 'Arn'] },
        FunctionName: { Ref: 'WorkerFunction' },
      },
    },
    Daily: {
      Type: 'AWS::Events::Rule',
      Properties: {
        ScheduleExpression: 'rate(1 day)',
        Targets: [{ Arn: { 'Fn::GetAtt': ['WorkerFunction', 'Arn'] } }],
      },
    },
    Api: { Type: 'AWS::ApiGateway::RestApi' },
    V1: {
      Type: 'AWS::ApiGateway::Resource',
      Properties: { ParentId: { 'Fn::GetAtt': ['Api', 'RootResourceId'] }, PathPart: 'v1' },
    },
    Methods: {
      Type: 'AWS::CloudFormation::Stack',
      Properties: {
        Parameters: {
          ParentResource: { Ref: 'V1' },
          AdminArn: { 'Fn::GetAtt': ['AdminFunction', 'Arn'] },
        },
      },
      Metadata: { 'aws:asset:path': 'PlatformMethods.nested.template.json' },
    },
  },
};

const nestedTemplate = {
  Parameters: { ParentResource: { Type: 'String' }, AdminArn: { Type: 'String' } },
  Resources: {
    Ping: { Type: 'AWS::ApiGateway::Resource', Properties: { ParentId: { Ref: 'ParentResource' }, PathPart: 'ping' } },
    PingGet: {
      Type: 'AWS::ApiGateway::Method',
      Properties: {
        HttpMethod: 'GET',
        ResourceId: { Ref: 'Ping' },
        Integration: {
          Type: 'AWS_PROXY',
          Uri: { 'Fn::Join': ['', ['arn:aws:apigateway:lambda:path/functions/', { Ref: 'AdminArn' }, '/invocations']] },
        },
      },
    },
    PingAny: {
      Type: 'AWS::ApiGateway::Method',
      Properties: { HttpMethod: 'ANY', ResourceId: { Ref: 'Ping' }, Integration: { Type: 'MOCK' } },
    },
  },
};

const sharedTemplate = { Outputs: { Name: { Value: 'from-the-shared-stack', Export: { Name: 'shared-name' } } } };

let assemblyDir: string;
let deployment: Deployment;

beforeAll(async () => {
  assemblyDir = await mkdtemp(join(tmpdir(), 'assembly-'));
  const stack = (file: string) => ({
    type: 'aws:cloudformation:stack',
    environment: 'aws://unknown-account/us-east-1',
    properties: { templateFile: file },
  });
  await writeFile(
    join(assemblyDir, 'manifest.json'),
    JSON.stringify({ artifacts: { Shared: stack('Shared.template.json'), Platform: stack('Platform.template.json') } }),
  );
  await writeFile(join(assemblyDir, 'Platform.template.json'), JSON.stringify(platformTemplate));
  await writeFile(join(assemblyDir, 'PlatformMethods.nested.template.json'), JSON.stringify(nestedTemplate));
  await writeFile(join(assemblyDir, 'Shared.template.json'), JSON.stringify(sharedTemplate));
  deployment = readDeployment(assemblyDir, {
    region: 'us-east-1',
    tableName: 'local-table',
    tableStreamArn: 'arn:aws:dynamodb:ddblocal:000000000000:table/local-table/stream/2026-01-01T00:00:00.000',
    bucket: 'local-bucket',
    lakeBucket: 'local-lake',
    queues: { analysis: analysisQueue },
  });
});
afterAll(() => rm(assemblyDir, { recursive: true, force: true }));

const functionNamed = (name: string) => deployment.functions.find((fn) => fn.name === name);

describe('readDeployment', () => {
  it('resolves a function’s variables to the local engines, leaving out what has no local engine', () => {
    const admin = functionNamed('classic-api-admin');

    expect(admin?.assetDir).toBe(join(assemblyDir, 'asset.admin'));
    expect(admin?.timeoutMs).toBe(28_000);
    expect(admin?.environment).toEqual({
      POWERTOOLS_SERVICE_NAME: 'admin',
      TABLE_NAME: 'local-table',
      TABLE_ARN: 'arn:aws:dynamodb:us-east-1:000000000000:table/local-table',
      ANALYSIS_QUEUE_URL: analysisQueue.url,
      ANALYSIS_DLQ_ARN: analysisQueue.dlqArn,
      SHARED_NAME: 'from-the-shared-stack',
      WORKER_ARN: 'arn:aws:lambda:us-east-1:000000000000:function:classic-api-analysis-worker',
      ISSUER: 'urn:us-east-1:local-table',
    });
    expect(admin?.unresolved).toEqual(['SIGNING_KEY_SECRET_ARN']);
  });

  it('routes a method of a nested stack to the function its integration names, skipping mock integrations', () => {
    expect(deployment.methods.map((method) => [method.httpMethod, method.resourcePath, method.function.name])).toEqual([
      ['GET', '/v1/ping', 'classic-api-admin'],
    ]);
  });

  it('wires the queue consumer and the schedule to the functions the template names', () => {
    expect(
      deployment.consumers.map((consumer) => [consumer.worker, consumer.function.name, consumer.batchSize]),
    ).toEqual([['analysis', 'classic-api-analysis-worker', 5]]);
    expect(deployment.schedules.map((schedule) => [schedule.periodSeconds, schedule.function.name])).toEqual([
      [86_400, 'classic-api-analysis-worker'],
    ]);
  });

  it('feeds the table stream’s consumer with its mapping’s settings and filters, and tells the lake’s bucket from the artifacts’', () => {
    expect(
      deployment.streamConsumers.map((consumer) => [consumer.name, consumer.function.name, consumer.settings]),
    ).toEqual([
      [
        'analytics-lake',
        'classic-api-analytics-lake-stream',
        {
          batchSize: 1000,
          batchingWindowSeconds: 5,
          retryAttempts: 3,
          filters: [{ dynamodb: { NewImage: { entity: { S: ['message'] } } } }],
        },
      ],
    ]);
    expect(functionNamed('classic-api-analytics-lake-stream')?.environment).toMatchObject({
      LAKE_BUCKET: 'local-lake',
      ARTIFACT_BUCKET: 'local-bucket',
    });
  });
});

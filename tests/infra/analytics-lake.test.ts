import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { analyticsTableSchemas, lakeEntities } from '#shared/analytics/analytics-schema';
import { analyticsLakeStream, lakeCompactionMinutes } from '#shared/analytics/lake-feed';
import type { AnalyticsLake } from '../../infra/constructs/analytics-lake';
import { logicalIdOf } from '../../infra/constructs/platform-function';
import type { PlatformStack } from '../../infra/stacks/platform-stack';
import { addRegionalStacks } from '../../infra/stacks/regional-stacks';

/**
 * The analytics lake as `cdk deploy` would create it (`infra/constructs/analytics-lake.ts`): the
 * table's stream feeding its consumer with batching, bisect on error and a failure queue; the
 * lake bucket; Glue tables with org_id projected and an Athena workgroup with a scan cutoff; and
 * the SQL query's access, which reaches one organization's folders only.
 */
const cdkContext: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8'),
).context;

type Resource = { Properties: Record<string, unknown> } & Record<string, unknown>;
type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown; Principal?: unknown };

let template: Template;
let resources: Record<string, Resource>;
/** Logical ids of the lake's bucket, failure queue and reader role. */
let lakeId: string;
let queueId: string;
let readerId: string;

const onlyOne = (type: string, props: Record<string, unknown> = {}): [string, Resource] => {
  const found = Object.entries(template.findResources(type, props)) as [string, Resource][];
  expect(found, type).toHaveLength(1);
  return found[0] as [string, Resource];
};

const functionId = (description: string): string =>
  onlyOne('AWS::Lambda::Function', { Properties: { Description: description } })[0];

const propertiesOf = (id: string): Record<string, unknown> => {
  const resource = resources[id];
  if (!resource) throw new Error(`no resource ${id}`);
  return resource.Properties;
};

const roleOf = (fnId: string): string => (propertiesOf(fnId).Role as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];

/** Every allowed statement of a role's inline policies. */
const statementsOf = (roleId: string): Statement[] =>
  Object.values(resources)
    .filter(
      (resource) =>
        resource.Type === 'AWS::IAM::Policy' &&
        (resource.Properties.Roles as { Ref?: string }[]).some((role) => role.Ref === roleId),
    )
    .flatMap((policy) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);

const actionsOf = (statements: Statement[]): string[] =>
  statements.flatMap((statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]));

const refersTo = (value: unknown, logicalId: string): boolean => JSON.stringify(value).includes(`"${logicalId}"`);

// Synthesizing takes seconds of CPU, which a machine busy with other work stretches.
beforeAll(() => {
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], regions: ['eu-central-1'] } });
  const [stack] = addRegionalStacks(app) as PlatformStack[];
  if (!stack) throw new Error('no stack');
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
  const lake = stack.node.findChild('AnalyticsLake') as AnalyticsLake;
  lakeId = logicalIdOf(lake.bucket);
  queueId = logicalIdOf(lake.failureQueue);
  readerId = logicalIdOf(lake.readerRole);
}, 300_000);

describe('analytics lake', () => {
  it('feeds the stream consumer from the table’s stream with batching, bisect on error and a failure queue', () => {
    const [tableId, table] = onlyOne('AWS::DynamoDB::Table');
    const [, mapping] = onlyOne('AWS::Lambda::EventSourceMapping', {
      Properties: { EventSourceArn: { 'Fn::GetAtt': [tableId, 'StreamArn'] } },
    });

    expect(table.Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
    expect(mapping.Properties).toMatchObject({
      FunctionName: { Ref: functionId('Consumer of the table stream: the analytics lake') },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: analyticsLakeStream.batchSize,
      MaximumBatchingWindowInSeconds: analyticsLakeStream.batchingWindowSeconds,
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: analyticsLakeStream.retryAttempts,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
    });
    // Only changes of the entities the lake keeps invoke it; a rate-limit bucket or a lease never does.
    const patterns = (mapping.Properties.FilterCriteria as { Filters: { Pattern: string }[] }).Filters.map((filter) =>
      JSON.parse(filter.Pattern),
    );
    expect(patterns).toEqual(analyticsLakeStream.filters);
    expect(patterns[0].dynamodb.NewImage.entity.S).toEqual(lakeEntities);
    expect(lakeEntities).toEqual(expect.arrayContaining(['conversation', 'message', 'user']));
    expect(lakeEntities).not.toContain('rate-limit-bucket');
    expect(patterns[1]).toEqual({ eventName: ['REMOVE'], dynamodb: { OldImage: { entity: { S: lakeEntities } } } });
    // Alarmed like the queues' dead-letter queues.
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 0,
      Metrics: [
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({
              MetricName: 'ApproximateNumberOfMessagesVisible',
              Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
            }),
          }),
        }),
      ],
    });
  });

  it('keeps the lake in a bucket of its own: encrypted, private, TLS only, logged', () => {
    expect(resources[lakeId]).toMatchObject({
      Type: 'AWS::S3::Bucket',
      DeletionPolicy: 'Retain',
      Properties: expect.objectContaining({
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        LoggingConfiguration: expect.objectContaining({ LogFilePrefix: 'lake-bucket/' }),
      }),
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: lakeId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('compacts on a schedule and backfills when invoked, and no function may scan the table', () => {
    const compaction = functionId('Scheduled lake-compaction run');
    const backfill = functionId('Lake backfill job, invoked by an operator');
    const [, rule] = onlyOne('AWS::Events::Rule', {
      Properties: { ScheduleExpression: `rate(${lakeCompactionMinutes} minutes)` },
    });

    expect(refersTo(rule.Properties.Targets, compaction)).toBe(true);
    const scanning = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
      .filter(([id]) => actionsOf(statementsOf(roleOf(id))).includes('dynamodb:Scan'))
      .map(([id]) => id);
    expect(backfill).toBeDefined();
    expect(scanning).toEqual([]);
  });

  it('describes every SQL table in Glue, partitioned by a projected org_id, and queries it in a workgroup with a scan cutoff', () => {
    const [, database] = onlyOne('AWS::Glue::Database');
    const tables = Object.values(template.findResources('AWS::Glue::Table')) as Resource[];
    const [, workgroup] = onlyOne('AWS::Athena::WorkGroup');

    const databaseName = (database.Properties.DatabaseInput as { Name: string }).Name;
    expect(tables.map((table) => (table.Properties.TableInput as { Name: string }).Name).sort()).toEqual(
      analyticsTableSchemas.map((schema) => schema.name).sort(),
    );
    for (const table of tables) {
      expect(table.Properties.DatabaseName).toBe(databaseName);
      const input = table.Properties.TableInput as {
        Name: string;
        Parameters: Record<string, unknown>;
        PartitionKeys: unknown;
        StorageDescriptor: { Columns: { Name: string }[]; SerdeInfo: unknown };
      };
      expect(input.PartitionKeys).toEqual([{ Name: 'org_id', Type: 'string' }]);
      expect(input.Parameters).toMatchObject({ 'projection.enabled': 'true', 'projection.org_id.type': 'injected' });
      expect(JSON.stringify(input.Parameters['storage.location.template'])).toContain(
        `/${input.Name}/org_id=\${org_id}/`,
      );
      const schema = analyticsTableSchemas.find((candidate) => candidate.name === input.Name);
      expect(input.StorageDescriptor.Columns.map((column) => column.Name)).toEqual(Object.keys(schema?.columns ?? {}));
    }
    expect(workgroup.Properties.WorkGroupConfiguration).toMatchObject({
      BytesScannedCutoffPerQuery: 10 * 1024 ** 3,
      EnforceWorkGroupConfiguration: true,
      ResultConfiguration: { EncryptionConfiguration: { EncryptionOption: 'SSE_S3' } },
    });
  });

  it('lets the SQL query, the console and the MCP endpoint read one organization’s folders only: a reader role they assume with the organization as session tag', () => {
    const reader = resources[readerId] as Resource;
    const queryFunctions = ['Endpoint group admin', 'Endpoint group app-analytics', 'Endpoint group mcp'].map(
      functionId,
    );

    // Trusted by the query functions' roles alone, and only for a session tagged with one org_id.
    const trust = (reader.Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
    expect(trust).toHaveLength(queryFunctions.length);
    for (const [index, fn] of queryFunctions.entries()) {
      expect(trust[index]?.Action).toEqual(['sts:AssumeRole', 'sts:TagSession']);
      expect(refersTo(trust[index]?.Principal, roleOf(fn))).toBe(true);
      expect(trust[index]?.Condition).toEqual({
        StringLike: { 'aws:RequestTag/org_id': '?*' },
        'ForAllValues:StringEquals': { 'aws:TagKeys': ['org_id'] },
      });
    }
    // It reads the folders of its session's org_id only.
    const readerStatements = statementsOf(readerId);
    expect(actionsOf(readerStatements).sort()).toEqual(['s3:GetObject', 's3:ListBucket']);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the IAM policy variable, as the template holds it.
    const folders = '*/org_id=${aws:PrincipalTag/org_id}/*';
    expect(JSON.stringify(readerStatements)).toContain(`/${folders}`);
    expect(readerStatements.find((statement) => statement.Action === 's3:ListBucket')?.Condition).toEqual({
      StringLike: { 's3:prefix': folders },
    });
    for (const fn of queryFunctions) {
      // The query function itself has no grant on the lake: it reads through the reader role.
      const statements = statementsOf(roleOf(fn));
      expect(statements.filter((statement) => refersTo(statement.Resource, lakeId))).toEqual([]);
      const assume = statements.find((statement) => actionsOf([statement]).includes('sts:AssumeRole'));
      expect(assume?.Action).toEqual(['sts:AssumeRole', 'sts:TagSession']);
      expect(assume?.Resource).toEqual({ 'Fn::GetAtt': [readerId, 'Arn'] });
      const variables = (propertiesOf(fn).Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.LAKE_READER_ROLE_ARN).toEqual({ 'Fn::GetAtt': [readerId, 'Arn'] });
      expect(variables.LAKE_BUCKET).toEqual({ Ref: lakeId });
    }
  });

  it('lets deleting an organization delete its folders, and nothing more of the lake', () => {
    const organization = functionId('Endpoint group organization');

    const onLake = statementsOf(roleOf(organization)).filter((statement) => refersTo(statement.Resource, lakeId));
    expect(actionsOf(onLake).sort()).toEqual(['s3:DeleteObject', 's3:ListBucket']);
  });
});

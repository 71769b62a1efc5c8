import { CfnOutput, Duration, RemovalPolicy, Stack, Token, Validations } from 'aws-cdk-lib';
import { CfnWorkGroup } from 'aws-cdk-lib/aws-athena';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaFunctionTarget } from 'aws-cdk-lib/aws-events-targets';
import { CfnDatabase, CfnTable } from 'aws-cdk-lib/aws-glue';
import { ArnPrincipal, Effect, ManagedPolicy, PolicyStatement, Role, SessionTagsPrincipal } from 'aws-cdk-lib/aws-iam';
import {
  type CfnFunction,
  FilterCriteria,
  type Function as LambdaFunction,
  StartingPosition,
} from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { analyticsTableSchemas } from '#shared/analytics/analytics-schema';
import { analyticsLakeStream, lakeCompactionMinutes } from '#shared/analytics/lake-feed';
import { athenaResultsRoot } from '#shared/analytics/lake-layout';
import type { ColumnType } from '#shared/kernel/lake-projection';
import { bindBucket, bindTable, type FunctionDefaults, logicalIdOf, PlatformFunction } from './platform-function';

export interface AnalyticsLakeProps {
  /** The single table; its stream (new and old images) feeds the lake. */
  table: ITable;
  /** Where the lake bucket's access logs go. */
  accessLogs: IBucket;
  stage: string;
  defaults: FunctionDefaults;
  /**
   * The functions that run the SQL query's engine (the admin group's submit-sql-query, the
   * console's lake pages, the MCP endpoint's sql_query): each assumes the reader role with the organization as session tag (and
   * a session policy naming its folders), so it reads that organization's folders and no other;
   * each gets more memory (and CPU) for the engine, and /tmp for its copies.
   */
  queryFunctions: readonly LambdaFunction[];
  /** The function that deletes organizations: it deletes their folders of the lake. */
  eraseFunction: LambdaFunction;
}

/** The SQL query's function: memory for DuckDB (half of it) and the CPU that comes with it, /tmp for its copies. */
const queryMemoryMb = 2048;
const queryStorageMb = 4096;

/** Athena's types for the SQL query's column types (timestamps are UTC instants in the Parquet files). */
const glueTypes: Record<ColumnType, string> = {
  VARCHAR: 'string',
  BOOLEAN: 'boolean',
  BIGINT: 'bigint',
  DOUBLE: 'double',
  TIMESTAMPTZ: 'timestamp',
  JSON: 'string',
};

/** Athena stops a query that would scan more than this (10 GiB, about 50 cents). */
const bytesScannedCutoff = 10 * 1024 ** 3;
const athenaResultDays = 7;

/**
 * The analytics lake (`shared/analytics/`): each organization's SQL tables as Parquet in a
 * bucket of their own, `{table}/org_id={org}/…`. The table's stream feeds a consumer through an
 * event source mapping (batching, bisect on error, a failure queue); a rule compacts the changed
 * organizations every few minutes; a job backfills the lake from the table when invoked. The SQL
 * query reads an organization's folders with a role whose session is tagged with it and reaches
 * nothing else. Glue tables partitioned by `org_id` (projected, not crawled) and an Athena
 * workgroup with a scan cutoff open the lake to the deployment's administrators: `analystPolicy` says what they may do.
 */
export class AnalyticsLake extends Construct {
  readonly bucket: Bucket;
  /**
   * Batches the stream consumer failed on after every retry (their shard and sequence numbers),
   * alarmed by the stack's Observability; the backfill of their organizations repairs the lake.
   */
  readonly failureQueue: Queue;
  readonly streamConsumer: LambdaFunction;
  readonly compaction: LambdaFunction;
  readonly backfill: LambdaFunction;
  /** Assumed by the SQL query with the organization as session tag: reads that organization's folders only. */
  readonly readerRole: Role;
  readonly database: CfnDatabase;
  readonly workgroup: CfnWorkGroup;
  /** For the deployment administrators' roles: query the lake with Athena through the workgroup. */
  readonly analystPolicy: ManagedPolicy;

  constructor(scope: Construct, id: string, props: AnalyticsLakeProps) {
    super(scope, id);
    const { table, defaults } = props;

    // Unversioned: compaction replaces files and an organization's deletion must really delete.
    this.bucket = new Bucket(this, 'Lake', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 'lake-bucket/',
      lifecycleRules: [
        { id: 'expire-athena-results', prefix: athenaResultsRoot, expiration: Duration.days(athenaResultDays) },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.failureQueue = new Queue(this, 'StreamFailures', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    Validations.of(this.failureQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        'It is the on-failure destination of the stream mapping: it holds records of failed batches, which the backfill repairs.',
    });

    this.streamConsumer = new PlatformFunction(this, 'StreamConsumer', {
      entry: `functions/streams/${analyticsLakeStream.name}.ts`,
      serviceName: `${analyticsLakeStream.name}-stream`,
      description: 'Consumer of the table stream: the analytics lake',
      timeout: Duration.seconds(analyticsLakeStream.consumerTimeoutSeconds),
      defaults,
    }).function;
    // Reads whether an organization is live; writes delta files, and erases a deleted organization's folders.
    // PutObjectTagging beside PutObject, as every object writer has it: a put may carry tags (retention), and
    // tests/infra/function-permissions.test.ts cannot tell an untagged put from a tagged one.
    bindTable(this.streamConsumer, table, 'read');
    this.grantLakeChanges(this.streamConsumer, ['s3:PutObject', 's3:PutObjectTagging', 's3:DeleteObject']);
    this.streamConsumer.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: analyticsLakeStream.batchSize,
        maxBatchingWindow: Duration.seconds(analyticsLakeStream.batchingWindowSeconds),
        bisectBatchOnError: true,
        retryAttempts: analyticsLakeStream.retryAttempts,
        onFailure: new SqsDlq(this.failureQueue),
        // Only the records the lake keeps invoke the consumer (the local stream poller applies the same).
        filters: analyticsLakeStream.filters.map((pattern) => FilterCriteria.filter(pattern)),
      }),
    );

    this.compaction = new PlatformFunction(this, 'Compaction', {
      entry: 'functions/schedules/lake-compaction.ts',
      serviceName: 'lake-compaction-schedule',
      description: 'Scheduled lake-compaction run',
      timeout: Duration.minutes(15),
      memorySize: 2048,
      ephemeralStorageSize: 4096,
      defaults,
    }).function;
    // The organization's compaction lease is a record of the table.
    bindTable(this.compaction, table, 'readWrite');
    this.bindLake(this.compaction);
    new Rule(this, 'CompactionRule', {
      schedule: Schedule.rate(Duration.minutes(lakeCompactionMinutes)),
      // The next run comes soon enough: a failed one is not retried.
      targets: [new LambdaFunctionTarget(this.compaction, { retryAttempts: 0 })],
    });

    this.backfill = new PlatformFunction(this, 'Backfill', {
      entry: 'functions/jobs/lake-backfill.ts',
      serviceName: 'lake-backfill-job',
      description: 'Lake backfill job, invoked by an operator',
      timeout: Duration.minutes(15),
      memorySize: 2048,
      ephemeralStorageSize: 4096,
      defaults,
    }).function;
    // It visits every organization through the organization directory (Queries): no function scans the table.
    bindTable(this.backfill, table, 'readWrite');
    this.bindLake(this.backfill);

    const queryRoles = props.queryFunctions.map((fn) => {
      if (!fn.role) throw new Error(`${fn.node.path} has no role`);
      return fn.role;
    });
    // Assumed only by the query functions, and only with a session tagged with one organization.
    const oneOrganization = {
      StringLike: { 'aws:RequestTag/org_id': '?*' },
      'ForAllValues:StringEquals': { 'aws:TagKeys': ['org_id'] },
    };
    const [firstQueryRole, ...otherQueryRoles] = queryRoles;
    if (!firstQueryRole) throw new Error('the analytics lake needs a query function');
    this.readerRole = new Role(this, 'Reader', {
      assumedBy: new SessionTagsPrincipal(new ArnPrincipal(firstQueryRole.roleArn)).withConditions(oneOrganization),
      description: 'Reads one organization of the analytics lake: the folders of the org_id its session is tagged with',
      maxSessionDuration: Duration.hours(1),
    });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: an IAM policy variable, resolved per session.
    const organizationFolders = '*/org_id=${aws:PrincipalTag/org_id}/*';
    this.readerRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:GetObject'],
        resources: [this.bucket.arnForObjects(organizationFolders)],
      }),
    );
    this.readerRole.addToPolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': organizationFolders } },
      }),
    );
    Validations.of(this.readerRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.bucket)}.Arn>/*/org_id=<aws:PrincipalTag/org_id>/*]`,
      reason: "The session's org_id tag names the one organization whose folders (one per table) it may read.",
    });
    for (const role of otherQueryRoles)
      this.readerRole.assumeRolePolicy?.addStatements(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['sts:AssumeRole', 'sts:TagSession'],
          principals: [new ArnPrincipal(role.roleArn)],
          conditions: oneOrganization,
        }),
      );
    for (const fn of props.queryFunctions) this.bindQueryFunction(fn);
    this.grantLakeChanges(props.eraseFunction, ['s3:DeleteObject']);

    const databaseName = `classic_agent_lake_${props.stage.toLowerCase().replace(/[^a-z0-9]/g, '_')}`;
    this.database = new CfnDatabase(this, 'Database', {
      catalogId: Stack.of(this).account,
      databaseInput: {
        name: databaseName,
        description: "The analytics lake: each organization's SQL tables, partitioned by org_id",
      },
    });
    for (const schema of analyticsTableSchemas) {
      const location = `s3://${this.bucket.bucketName}/${schema.name}/`;
      const glueTable = new CfnTable(
        this,
        `Table${schema.name.replace(/(^|_)(\w)/g, (_, __, letter) => letter.toUpperCase())}`,
        {
          catalogId: Stack.of(this).account,
          databaseName,
          tableInput: {
            name: schema.name,
            tableType: 'EXTERNAL_TABLE',
            parameters: {
              EXTERNAL: 'TRUE',
              classification: 'parquet',
              // Partitions are not crawled or registered: each query names its organizations (org_id = '…').
              'projection.enabled': 'true',
              'projection.org_id.type': 'injected',
              'storage.location.template': `${location}org_id=\${org_id}/`,
            },
            partitionKeys: [{ name: 'org_id', type: 'string' }],
            storageDescriptor: {
              location,
              inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
              outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
              serdeInfo: { serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' },
              columns: Object.entries(schema.columns).map(([name, type]) => ({ name, type: glueTypes[type] })),
            },
          },
        },
      );
      glueTable.addResourceDependency(this.database);
    }

    this.workgroup = new CfnWorkGroup(this, 'Workgroup', {
      name: `classic-agent-lake-${props.stage}`,
      description: 'The deployment administrators’ SQL over the analytics lake',
      state: 'ENABLED',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        bytesScannedCutoffPerQuery: bytesScannedCutoff,
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        engineVersion: { selectedEngineVersion: 'AUTO' },
        resultConfiguration: {
          outputLocation: `s3://${this.bucket.bucketName}/${athenaResultsRoot}`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });

    const stack = Stack.of(this);
    this.analystPolicy = new ManagedPolicy(this, 'AnalystPolicy', {
      description:
        'Query the analytics lake with Athena, in its workgroup (attach to the deployment administrators’ roles)',
      statements: [
        new PolicyStatement({
          actions: [
            'athena:StartQueryExecution',
            'athena:GetQueryExecution',
            'athena:GetQueryResults',
            'athena:StopQueryExecution',
            'athena:GetWorkGroup',
          ],
          resources: [stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: this.workgroup.name })],
        }),
        new PolicyStatement({
          actions: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetTables', 'glue:GetPartitions'],
          resources: [
            stack.formatArn({ service: 'glue', resource: 'catalog' }),
            stack.formatArn({ service: 'glue', resource: 'database', resourceName: databaseName }),
            stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${databaseName}/*` }),
          ],
        }),
        new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects('*')] }),
        new PolicyStatement({
          actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
          resources: [this.bucket.arnForObjects(`${athenaResultsRoot}*`)],
        }),
        new PolicyStatement({ actions: ['s3:ListBucket', 's3:GetBucketLocation'], resources: [this.bucket.bucketArn] }),
      ],
    });
    Validations.of(this.analystPolicy).acknowledge(
      ...[
        `Resource::<${logicalIdOf(this.bucket)}.Arn>/*`,
        `Resource::<${logicalIdOf(this.bucket)}.Arn>/${athenaResultsRoot}*`,
        `Resource::arn:<AWS::Partition>:glue:${Token.isUnresolved(stack.region) ? '<AWS::Region>' : stack.region}:<AWS::AccountId>:table/${databaseName}/*`,
      ].map((finding) => ({
        id: `AwsSolutions-IAM5[${finding}]`,
        reason:
          'The deployment’s administrators query any organization’s folders of any lake table; Athena writes its results under its own prefix.',
      })),
    );
    const output = (name: string, value: string) => new CfnOutput(stack, `AnalyticsLake${name}`, { value });
    output('BucketName', this.bucket.bucketName);
    output('AthenaWorkgroup', this.workgroup.name);
    output('GlueDatabase', databaseName);
    output('AnalystPolicyArn', this.analystPolicy.managedPolicyArn);
    output('BackfillFunctionName', this.backfill.functionName);
    output('StreamFailuresQueueUrl', this.failureQueue.queueUrl);
  }

  /** Object reads and writes in the lake (its folders and markers), and its name as LAKE_BUCKET. */
  private bindLake(fn: LambdaFunction): void {
    bindBucket(fn, this.bucket, 'readWrite', '', 'LAKE_BUCKET');
  }

  private bindQueryFunction(fn: LambdaFunction): void {
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['sts:AssumeRole', 'sts:TagSession'],
        resources: [this.readerRole.roleArn],
      }),
    );
    fn.addEnvironment('LAKE_BUCKET', this.bucket.bucketName);
    fn.addEnvironment('LAKE_READER_ROLE_ARN', this.readerRole.roleArn);
    const cfn = fn.node.defaultChild as CfnFunction;
    cfn.memorySize = queryMemoryMb;
    cfn.ephemeralStorage = { size: queryStorageMb };
  }

  /**
   * Object writes without reads (`actions` on any key; listing to find an organization's keys),
   * and the bucket's name as LAKE_BUCKET: the stream consumer writes deltas and markers and erases
   * a deleted organization's folders; deleting an organization deletes its folders.
   */
  private grantLakeChanges(fn: LambdaFunction, actions: string[]): void {
    fn.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions, resources: [this.bucket.arnForObjects('*')] }),
    );
    fn.addToRolePolicy(
      new PolicyStatement({ effect: Effect.ALLOW, actions: ['s3:ListBucket'], resources: [this.bucket.bucketArn] }),
    );
    fn.addEnvironment('LAKE_BUCKET', this.bucket.bucketName);
    Validations.of(fn.role ?? fn).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.bucket)}.Arn>/*]`,
      reason: 'An organization’s folders lie under every table prefix of the lake, and its marker under _dirty/.',
    });
  }
}

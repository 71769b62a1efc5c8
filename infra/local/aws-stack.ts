import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  type GlobalSecondaryIndex,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { tableStreamConsumers } from '#shared/composition/table-stream-consumers';
import { globalIndexes, projectedIndexes, tableKeys } from '#shared/data/table-definition';
import type { WorkerName } from '#shared/kernel/operation';
import { type QueueDefinition, queueDefinitions } from '#shared/kernel/queues';
import { failureQueueName } from '#shared/kernel/table-stream';
import { assertJava17 } from './java';
import { assertPortFree, freePort } from './ports';

export interface LocalAwsOptions {
  /** Where DynamoDB and S3 keep their data across restarts; undefined runs everything in memory. */
  dataDir?: string;
  /** Fixed ports; each defaults to a free one. */
  ports?: { dynamodb?: number; sqs?: number; s3?: number };
  /** Overrides every work queue's visibility timeout (e.g. 1 s in tests); default: the queue definition's. */
  queueVisibilityTimeoutSeconds?: number;
  region?: string;
  log?: (line: string) => void;
}

export interface LocalQueue {
  url: string;
  arn: string;
  dlqUrl: string;
  dlqArn: string;
}

export interface LocalAws {
  /** Everything the product reads from its environment to reach these servers. */
  env: Record<string, string>;
  /** The part of `env` that reaches the servers (region, endpoints, credentials), without the resources' names. */
  connectionEnv: Record<string, string>;
  tableName: string;
  /** The table's stream (new and old images), which DynamoDB Local serves like DynamoDB Streams. */
  tableStream: {
    arn: string /** The stream was enabled on a table that had data already (a data dir from before). */;
    enabledOnExistingTable: boolean;
  };
  bucket: string;
  /** The analytics lake's bucket. */
  lakeBucket: string;
  queues: Record<WorkerName, LocalQueue>;
  /** Per table stream consumer, the queue receiving the batches that failed every retry. */
  streamFailureQueues: Record<string, { url: string; arn: string }>;
  stop(): Promise<void>;
}

interface Service {
  endpoint: string;
  stop(): Promise<void>;
}

const tableName = 'agent-platform';
const bucket = 'agent-platform-artifacts';
const lakeBucket = 'agent-platform-lake';
// A JVM start on a busy 2-core machine (a CI run, tests beside a benchmark) can take tens of seconds.
const dynamoReadyTimeoutMs = 60_000;

/** s3rver only accepts its built-in access key; DynamoDB Local (-sharedDb) and local-aws-sqs ignore credentials. */
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

const require = createRequire(import.meta.url);

/** The slice of s3rver's API used here: the package ships no type declarations. */
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  vhostBuckets: boolean;
}) => { run(): Promise<AddressInfo>; close(): Promise<void> };

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const boundPort = (address: string | AddressInfo | null): number => {
  if (address === null || typeof address === 'string') throw new Error('local server is not listening on a TCP port');
  return address.port;
};

/**
 * Runs the set-up of a server that just started with a client of it: a failed set-up stops the
 * server before the error goes on, and the client is destroyed either way.
 */
const prepare = async <C extends { destroy(): void }, T>(
  client: C,
  stop: () => Promise<void>,
  work: (client: C) => Promise<T>,
): Promise<T> => {
  try {
    return await work(client);
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
};

const startDynamoDb = async (
  port: number | undefined,
  directory: string,
  inMemory: boolean,
  region: string,
  log: (line: string) => void,
): Promise<Service & { stream: LocalAws['tableStream'] }> => {
  await assertJava17();
  if (port !== undefined) await assertPortFree(port, 'DynamoDB');
  const listenPort = port ?? (await freePort());
  const emulatorDir = join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
  await mkdir(directory, { recursive: true });

  const child = spawn(
    'java',
    [
      `-Djava.library.path=${join(emulatorDir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(emulatorDir, 'DynamoDBLocal.jar'),
      '-port',
      String(listenPort),
      ...(inMemory ? ['-inMemory'] : ['-dbPath', directory]),
      // One database for every credential/region pair, so clients need not match the start-up ones.
      '-sharedDb',
      // Since 1.24 DynamoDB Local phones home unless told not to.
      '-disableTelemetry',
    ],
    // DynamoDB Local writes dynamodb-local-metadata.json into its working directory.
    { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // A parent that exits without calling stop() must not leave a JVM behind.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.on('exit', killOnExit);

  const recentOutput: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      recentOutput.push(line);
      if (recentOutput.length > 20) recentOutput.shift();
      log(`[dynamodb] ${line}`);
    });
  }
  let exitDescription: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitDescription = `exit ${signal ?? code}`;
      process.off('exit', killOnExit);
      resolve();
    });
    child.once('error', (error) => {
      exitDescription = errorText(error);
      process.off('exit', killOnExit);
      resolve();
    });
  });

  const stop = async (): Promise<void> => {
    if (exitDescription !== undefined) return;
    child.kill('SIGTERM');
    const forceKill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(forceKill);
  };

  const endpoint = `http://127.0.0.1:${listenPort}`;
  // Single attempts: the SDK's retry back-off would only slow the readiness poll down.
  const stream = await prepare(
    new DynamoDBClient({ endpoint, region, credentials, maxAttempts: 1 }),
    stop,
    async (client) => {
      await waitForDynamoDb(
        client,
        () => exitDescription,
        () => recentOutput.join('\n'),
      );
      return ensureTable(client, log);
    },
  );
  return { endpoint, stop, stream };
};

const waitForDynamoDb = async (
  client: DynamoDBClient,
  exitDescription: () => string | undefined,
  output: () => string,
): Promise<void> => {
  const deadline = Date.now() + dynamoReadyTimeoutMs;
  for (;;) {
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      return;
    } catch (error) {
      const exit = exitDescription();
      if (exit !== undefined) throw new Error(`DynamoDB Local stopped during start-up (${exit}):\n${output()}`);
      if (Date.now() > deadline) {
        throw new Error(
          `DynamoDB Local did not answer within ${dynamoReadyTimeoutMs / 1000} s (${errorText(error)}):\n${output()}`,
        );
      }
      await sleep(100);
    }
  }
};

/** DynamoDB Local sometimes answers InternalFailure while it builds an index on a busy machine. */
const isTransientFailure = (error: unknown): boolean =>
  error instanceof Error && ['InternalFailure', 'InternalServerError', 'ServiceUnavailable'].includes(error.name);

/** Waits until the index is ACTIVE, or gone (`status` undefined) when it is being deleted. */
const waitForIndex = async (client: DynamoDBClient, indexName: string, until = 'ACTIVE'): Promise<void> => {
  const deadline = Date.now() + dynamoReadyTimeoutMs;
  for (;;) {
    let status: string | undefined;
    try {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      status = Table?.GlobalSecondaryIndexes?.find((index) => index.IndexName === indexName)?.IndexStatus;
    } catch (error) {
      if (!isTransientFailure(error) || Date.now() > deadline) throw error;
    }
    if (status === until || (until === 'gone' && status === undefined)) return;
    if (Date.now() > deadline)
      throw new Error(
        `index ${indexName} on ${tableName} is still ${status ?? 'missing'} after ${dynamoReadyTimeoutMs / 1000} s`,
      );
    await sleep(100);
  }
};

const stringKeys = (names: string[]): AttributeDefinition[] =>
  names.map((name) => ({ AttributeName: name, AttributeType: 'S' }));

const indexSpec = (index: (typeof globalIndexes)[number]): GlobalSecondaryIndex => ({
  IndexName: index.indexName,
  KeySchema: [
    { AttributeName: index.partitionKey, KeyType: 'HASH' },
    { AttributeName: index.sortKey, KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: index.projection },
});

/** New and old images: the analytics lake's consumer records removals from the old one. */
const streamSpecification = { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } as const;

/**
 * Creates the table from the shared definition unless a previous run (with a data dir) already
 * did, with its stream. DynamoDB Local makes a new table ACTIVE at once, so only added indexes
 * need waiting for.
 */
const ensureTable = async (client: DynamoDBClient, log: (line: string) => void): Promise<LocalAws['tableStream']> => {
  const existing = await client.send(new DescribeTableCommand({ TableName: tableName })).then(
    ({ Table }) => Table,
    (error: unknown) => {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    },
  );
  if (existing === undefined) {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: stringKeys([
          tableKeys.partitionKey,
          tableKeys.sortKey,
          ...globalIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
        ]),
        KeySchema: [
          { AttributeName: tableKeys.partitionKey, KeyType: 'HASH' },
          { AttributeName: tableKeys.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: globalIndexes.map(indexSpec),
        StreamSpecification: streamSpecification,
      }),
    );
  } else {
    // A table kept in a data dir predates the indexes added to the definition since.
    const present = new Set(existing.GlobalSecondaryIndexes?.map((index) => index.IndexName));
    for (const index of globalIndexes.filter((candidate) => !present.has(candidate.indexName))) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: stringKeys([index.partitionKey, index.sortKey]),
          GlobalSecondaryIndexUpdates: [{ Create: indexSpec(index) }],
        }),
      );
      // DynamoDB Local, like DynamoDB, builds one new index at a time.
      await waitForIndex(client, index.indexName);
      log(`[dynamodb] added index ${index.indexName} to ${tableName}`);
    }
    // The first schema's indexes, every attribute projected, are replaced by the keys-only ones:
    // nothing reads them any more, and each would still be written.
    for (const index of projectedIndexes.filter((candidate) => present.has(candidate.indexName))) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: index.indexName } }],
        }),
      );
      await waitForIndex(client, index.indexName, 'gone');
      log(`[dynamodb] deleted index ${index.indexName} (every attribute projected) from ${tableName}`);
    }
  }
  // A table kept in a data dir from before the analytics lake has no stream yet.
  const enabledOnExistingTable = existing !== undefined && existing.StreamSpecification?.StreamEnabled !== true;
  if (enabledOnExistingTable) {
    await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: streamSpecification }));
    log(`[dynamodb] enabled the stream of ${tableName}`);
  }
  try {
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    if (ttl.TimeToLiveDescription?.TimeToLiveStatus !== 'ENABLED') {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: tableKeys.timeToLiveAttribute, Enabled: true },
        }),
      );
    }
  } catch (error) {
    // Expiry is a storage-cost concern, never a correctness one, so a local run can live without it.
    log(`[dynamodb] TTL not enabled on ${tableName}: ${errorText(error)}`);
  }
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (!Table?.LatestStreamArn) throw new Error(`DynamoDB Local reports no stream for ${tableName}`);
  return { arn: Table.LatestStreamArn, enabledOnExistingTable };
};

/**
 * local-aws-sqs keeps queues and messages in memory only: a restart recreates the queues empty,
 * so messages in flight are lost locally (unlike SQS, where they wait for the consumer).
 */
const startSqs = async (
  port: number | undefined,
  region: string,
  visibilityTimeoutSeconds: number | undefined,
): Promise<
  Service & { queues: Record<WorkerName, LocalQueue>; streamFailureQueues: LocalAws['streamFailureQueues'] }
> => {
  if (port !== undefined) await assertPortFree(port, 'SQS');
  const server = await createSqsServer({
    port: port ?? 0,
    hostname: '127.0.0.1',
    region,
    // Lets a restarted stack recreate queues at once instead of waiting AWS's 60 s.
    emulateQueueCreationLifecycle: false,
  });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      // Long polls still open would otherwise hold close() for their whole wait time.
      server.closeAllConnections();
    });

  const endpoint = `http://127.0.0.1:${boundPort(server.address())}`;
  const [created, failures] = await prepare(new SQSClient({ endpoint, region, credentials }), stop, (client) =>
    Promise.all([
      Promise.all(
        queueDefinitions.map(
          async (definition) =>
            [definition.worker, await createQueuePair(client, definition, visibilityTimeoutSeconds)] as const,
        ),
      ),
      Promise.all(
        tableStreamConsumers.map(
          async (consumer) => [consumer.name, await createQueue(client, failureQueueName(consumer), {})] as const,
        ),
      ),
    ]),
  );
  // queueDefinitions holds exactly one definition per worker.
  return {
    endpoint,
    stop,
    queues: Object.fromEntries(created) as Record<WorkerName, LocalQueue>,
    streamFailureQueues: Object.fromEntries(failures),
  };
};

const createQueue = async (
  client: SQSClient,
  name: string,
  attributes: Record<string, string>,
): Promise<{ url: string; arn: string }> => {
  const { QueueUrl: url } = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!url) throw new Error(`local SQS returned no URL for queue ${name}`);
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
  );
  if (!Attributes?.QueueArn) throw new Error(`local SQS returned no ARN for queue ${name}`);
  return { url, arn: Attributes.QueueArn };
};

const createQueuePair = async (
  client: SQSClient,
  definition: QueueDefinition,
  visibilityTimeoutSeconds: number | undefined,
): Promise<LocalQueue> => {
  const dlq = await createQueue(client, `${definition.worker}-dlq`, {});
  const queue = await createQueue(client, definition.worker, {
    VisibilityTimeout: String(visibilityTimeoutSeconds ?? definition.visibilityTimeoutSeconds),
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: definition.maxReceiveCount }),
  });
  return { url: queue.url, arn: queue.arn, dlqUrl: dlq.url, dlqArn: dlq.arn };
};

const startS3 = async (port: number | undefined, directory: string, region: string): Promise<Service> => {
  if (port !== undefined) await assertPortFree(port, 'S3');
  await mkdir(directory, { recursive: true });
  const S3rver = require('s3rver') as S3rverConstructor;
  // Path-style only (the product sets forcePathStyle): with vhost guessing on, s3rver reads any host
  // name but an IP or localhost (e.g. host.docker.internal) as a bucket name.
  const server = new S3rver({ address: '127.0.0.1', port: port ?? 0, silent: true, directory, vhostBuckets: false });
  const address = await server.run();
  const stop = (): Promise<void> => server.close();

  const endpoint = `http://127.0.0.1:${address.port}`;
  await prepare(new S3Client({ endpoint, region, credentials, forcePathStyle: true }), stop, (client) =>
    Promise.all(
      [bucket, lakeBucket].map((name) =>
        client.send(new CreateBucketCommand({ Bucket: name })).catch((error: unknown) => {
          // s3rver answers BucketAlreadyExists for a bucket it kept in the data dir.
          const alreadyThere =
            error instanceof S3ServiceException &&
            ['BucketAlreadyExists', 'BucketAlreadyOwnedByYou'].includes(error.name);
          if (!alreadyThere) throw error;
        }),
      ),
    ),
  );
  return { endpoint, stop };
};

/**
 * Starts DynamoDB Local, local-aws-sqs and s3rver in parallel, creates the table (with its
 * stream), queues and buckets the product expects, and returns the environment that points the AWS SDK at them.
 */
export const startLocalAws = async (options: LocalAwsOptions = {}): Promise<LocalAws> => {
  const region = options.region ?? 'us-east-1';
  const log = options.log ?? ((): void => undefined);
  const startedAt = Date.now();

  // In-memory runs still need a scratch directory: s3rver stores objects on disk.
  const inMemory = options.dataDir === undefined;
  const root = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'local-aws-')));
  const removeScratchOnExit = (): void => rmSync(root, { recursive: true, force: true });
  if (inMemory) process.on('exit', removeScratchOnExit);
  const removeScratch = async (): Promise<void> => {
    if (!inMemory) return;
    process.off('exit', removeScratchOnExit);
    await rm(root, { recursive: true, force: true });
  };

  const [dynamodb, sqs, s3] = await Promise.allSettled([
    startDynamoDb(options.ports?.dynamodb, join(root, 'dynamodb'), inMemory, region, log),
    startSqs(options.ports?.sqs, region, options.queueVisibilityTimeoutSeconds),
    startS3(options.ports?.s3, join(root, 's3'), region),
  ]);
  if (dynamodb.status === 'rejected' || sqs.status === 'rejected' || s3.status === 'rejected') {
    const started = [dynamodb, sqs, s3].flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    await Promise.allSettled(started.map((service) => service.stop()));
    await removeScratch();
    const failures = [dynamodb, sqs, s3].flatMap((result) =>
      result.status === 'rejected' ? [result.reason as unknown] : [],
    );
    throw failures[0];
  }
  log(
    `local AWS ready in ${Date.now() - startedAt} ms: dynamodb ${dynamodb.value.endpoint}, sqs ${sqs.value.endpoint}, s3 ${s3.value.endpoint}`,
  );

  const queues = sqs.value.queues;
  const connectionEnv: Record<string, string> = {
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: dynamodb.value.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.value.endpoint,
    AWS_ENDPOINT_URL_S3: s3.value.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    // s3rver cannot decode the aws-chunked bodies (with checksum trailers) the SDK sends for streamed
    // uploads by default, and would store the framing as object content.
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  };
  const env: Record<string, string> = {
    ...connectionEnv,
    TABLE_NAME: tableName,
    ARTIFACT_BUCKET: bucket,
    LAKE_BUCKET: lakeBucket,
    ...Object.fromEntries(
      queueDefinitions.flatMap((definition) => [
        [definition.urlEnv, queues[definition.worker].url],
        [`${definition.worker.toUpperCase()}_DLQ_URL`, queues[definition.worker].dlqUrl],
      ]),
    ),
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= Promise.all([dynamodb.value.stop(), sqs.value.stop(), s3.value.stop()]).then(removeScratch);
    return stopping;
  };
  return {
    env,
    connectionEnv,
    tableName,
    tableStream: dynamodb.value.stream,
    bucket,
    lakeBucket,
    queues,
    streamFailureQueues: sqs.value.streamFailureQueues,
    stop,
  };
};

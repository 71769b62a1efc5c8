import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamo, s3 } from '#shared/aws/clients';
import { globalIndexes } from '#shared/data/table-definition';
import { queueDefinitions } from '#shared/kernel/queues';
import { type LocalAws, startLocalAws } from '../../../infra/local/aws-stack';
import { useLocalAws } from './use-local-aws';

const byIndexName = (left: { IndexName?: string }, right: { IndexName?: string }): number =>
  (left.IndexName ?? '').localeCompare(right.IndexName ?? '', 'en', { numeric: true });

/** Clients configured the way the product configures them: from the stack's environment only. */
const clientsFor = (env: Record<string, string>) => {
  const config = {
    region: env.AWS_REGION,
    credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '' },
  };
  return {
    dynamodb: DynamoDBDocumentClient.from(new DynamoDBClient({ ...config, endpoint: env.AWS_ENDPOINT_URL_DYNAMODB })),
    s3: new S3Client({ ...config, endpoint: env.AWS_ENDPOINT_URL_S3, forcePathStyle: true }),
  };
};

/** Starts the stack on `dataDir`, hands `use` clients for it, and stops both whatever `use` does. */
const withStack = async (
  dataDir: string,
  use: (aws: LocalAws, clients: ReturnType<typeof clientsFor>) => Promise<void>,
): Promise<void> => {
  const aws = await startLocalAws({ dataDir });
  const clients = clientsFor(aws.env);
  try {
    await use(aws, clients);
  } finally {
    clients.dynamodb.destroy();
    clients.s3.destroy();
    await aws.stop();
  }
};

describe('startLocalAws (in memory)', () => {
  const aws = useLocalAws();

  it('exposes every setting the product reads, pointing at loopback servers', () => {
    // Assess
    expect(aws().env).toMatchObject({
      TABLE_NAME: aws().tableName,
      ARTIFACT_BUCKET: aws().bucket,
      S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_DYNAMODB: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      AWS_ENDPOINT_URL_SQS: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      AWS_ENDPOINT_URL_S3: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    for (const definition of queueDefinitions) {
      expect(aws().env[definition.urlEnv]).toBe(aws().queues[definition.worker].url);
      expect(aws().env[`${definition.worker.toUpperCase()}_DLQ_URL`]).toBe(aws().queues[definition.worker].dlqUrl);
    }
  });

  it('creates the table with its GSIs and TTL from the shared definition', async () => {
    // Prepare
    const client = new DynamoDBClient({});

    // Act
    const { Table } = await client.send(new DescribeTableCommand({ TableName: aws().tableName }));
    const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: aws().tableName }));

    // Assess
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(
      Table?.GlobalSecondaryIndexes?.map(({ IndexName, KeySchema, Projection }) => ({
        IndexName,
        KeySchema,
        Projection,
      })).sort(byIndexName),
    ).toEqual(
      globalIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      })),
    );
    expect(TimeToLiveDescription).toMatchObject({ AttributeName: 'expires_at_epoch', TimeToLiveStatus: 'ENABLED' });
    client.destroy();
  });

  it('stores and reads items through the product document client, GSIs included', async () => {
    // Prepare
    const item = { pk: 'ORG#1', sk: 'AGENT#1', gsi1pk: 'AGENTS', gsi1sk: 'agent one', name: 'agent one' };

    // Act
    await dynamo().send(new PutCommand({ TableName: aws().tableName, Item: item }));
    const { Item } = await dynamo().send(
      new GetCommand({ TableName: aws().tableName, Key: { pk: 'ORG#1', sk: 'AGENT#1' } }),
    );
    const { Items } = await dynamo().send(
      new QueryCommand({
        TableName: aws().tableName,
        IndexName: 'gsi1-keys',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': 'AGENTS' },
      }),
    );

    // Assess
    expect(Item).toEqual(item);
    // The indexes hold keys only.
    expect(Items).toEqual([{ pk: 'ORG#1', sk: 'AGENT#1', gsi1pk: 'AGENTS', gsi1sk: 'agent one' }]);
  });

  it('serves an uploaded object through a presigned GET URL to plain fetch', async () => {
    // Prepare
    await (await s3()).send(
      new PutObjectCommand({
        Bucket: aws().bucket,
        Key: 'reports/run 1.json',
        Body: '{"ok":true}',
        ContentType: 'application/json',
      }),
    );
    const url = await getSignedUrl(
      await s3(),
      new GetObjectCommand({ Bucket: aws().bucket, Key: 'reports/run 1.json' }),
      {
        expiresIn: 300,
      },
    );

    // Act
    const response = await fetch(url);

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('{"ok":true}');
  });

  it('stores a streamed upload byte for byte', async () => {
    // Prepare
    const body = Readable.from([Buffer.from('first part, '), Buffer.from('second part')]);

    // Act
    await (await s3()).send(
      new PutObjectCommand({ Bucket: aws().bucket, Key: 'streamed.txt', Body: body, ContentLength: 23 }),
    );
    const { Body } = await (await s3()).send(new GetObjectCommand({ Bucket: aws().bucket, Key: 'streamed.txt' }));

    // Assess
    expect(await Body?.transformToString()).toBe('first part, second part');
  });
});

describe('startLocalAws (with a data directory)', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'local-aws-test-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps table items and objects across a restart', async () => {
    // Prepare
    await withStack(dataDir, async (first, before) => {
      await before.dynamodb.send(
        new PutCommand({ TableName: first.tableName, Item: { pk: 'ORG#kept', sk: 'META', name: 'kept' } }),
      );
      await before.s3.send(new PutObjectCommand({ Bucket: first.bucket, Key: 'kept.txt', Body: 'still here' }));
    });

    // Act
    await withStack(dataDir, async (second, after) => {
      const { Item } = await after.dynamodb.send(
        new GetCommand({ TableName: second.tableName, Key: { pk: 'ORG#kept', sk: 'META' } }),
      );
      const { Body } = await after.s3.send(new GetObjectCommand({ Bucket: second.bucket, Key: 'kept.txt' }));

      // Assess
      expect(Item).toEqual({ pk: 'ORG#kept', sk: 'META', name: 'kept' });
      expect(await Body?.transformToString()).toBe('still here');
    });
  }, 60_000);

  it("adds indexes the definition gained since the kept table was created, and drops the first schema's projected ones", async () => {
    // Prepare
    await withStack(dataDir, async (first, before) => {
      await before.dynamodb.send(new DeleteTableCommand({ TableName: first.tableName }));
      await before.dynamodb.send(
        new CreateTableCommand({
          TableName: first.tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: 'pk', AttributeType: 'S' },
            { AttributeName: 'sk', AttributeType: 'S' },
            { AttributeName: 'gsi1pk', AttributeType: 'S' },
            { AttributeName: 'gsi1sk', AttributeType: 'S' },
          ],
          KeySchema: [
            { AttributeName: 'pk', KeyType: 'HASH' },
            { AttributeName: 'sk', KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: [
            {
              IndexName: 'gsi1',
              KeySchema: [
                { AttributeName: 'gsi1pk', KeyType: 'HASH' },
                { AttributeName: 'gsi1sk', KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: 'ALL' },
            },
          ],
        }),
      );
    });

    // Act
    await withStack(dataDir, async (second, after) => {
      const { Table } = await after.dynamodb.send(new DescribeTableCommand({ TableName: second.tableName }));

      // Assess
      expect(Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName).sort()).toEqual(
        globalIndexes.map((index) => index.indexName).sort(),
      );
    });
  }, 60_000);
});

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StreamEventPattern } from '#shared/kernel/table-stream';
import type { LocalAws } from '../../../infra/local/aws-stack';
import { type StreamBatchHandler, type StreamPoller, startStreamPoller } from '../../../infra/local/stream-poller';
import { useLocalAws } from './use-local-aws';
import { waitFor } from './wait-for';

describe('startStreamPoller', () => {
  const localAws = useLocalAws();
  let aws: LocalAws;
  let dynamo: DynamoDBClient;
  let streams: DynamoDBStreamsClient;
  let sqs: SQSClient;
  const pollers: StreamPoller[] = [];

  /** Polls the table's stream as the analytics lake's mapping would, with quick retries. */
  const poll = (
    handler: StreamBatchHandler,
    checkpointFile?: string,
    filters: readonly StreamEventPattern[] = [],
  ): StreamPoller => {
    const poller = startStreamPoller({
      streamArn: aws.tableStream.arn,
      streamsClient: streams,
      consumer: { batchSize: 100, batchingWindowSeconds: 1, retryAttempts: 1, filters },
      handler,
      functionName: 'stream-test',
      timeoutMs: 10_000,
      failureQueue: { url: aws.streamFailureQueues['analytics-lake']?.url as string, sqsClient: sqs },
      checkpointFile,
    });
    pollers.push(poller);
    return poller;
  };

  /** Each test writes under a prefix of its own: every poller reads the whole stream. */
  const prefix = () => `STREAM#${randomBytes(4).toString('hex')}#`;
  const put = (pk: string, attributes: Record<string, unknown> = {}) =>
    dynamo.send(
      new PutItemCommand({
        TableName: aws.tableName,
        Item: { pk: { S: pk }, sk: { S: 'item' }, ...(attributes as Record<string, never>) },
      }),
    );
  const keyOf = (record: DynamoDBRecord): string => record.dynamodb?.Keys?.pk?.S ?? '';

  beforeAll(() => {
    aws = localAws();
    const connection = {
      region: aws.env.AWS_REGION,
      endpoint: aws.env.AWS_ENDPOINT_URL_DYNAMODB,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    };
    dynamo = new DynamoDBClient(connection);
    streams = new DynamoDBStreamsClient(connection);
    sqs = new SQSClient({ ...connection, endpoint: aws.env.AWS_ENDPOINT_URL_SQS });
  });

  afterEach(async () => {
    await Promise.all(pollers.splice(0).map((poller) => poller.stop()));
  });

  afterAll(() => {
    for (const client of [dynamo, streams, sqs]) client?.destroy();
  });

  it('delivers the table’s changes in order as a Lambda DynamoDBStreamEvent, with both images', async () => {
    // Prepare
    const mine = prefix();
    const received: DynamoDBRecord[] = [];
    poll(async (event) => {
      received.push(...event.Records.filter((record) => keyOf(record).startsWith(mine)));
    });

    // Act
    await put(`${mine}a`, { version: { N: '1' }, bytes: { B: Buffer.from('raw') } });
    await put(`${mine}a`, { version: { N: '2' } });
    await dynamo.send(
      new DeleteItemCommand({ TableName: aws.tableName, Key: { pk: { S: `${mine}a` }, sk: { S: 'item' } } }),
    );

    // Assess
    await waitFor('three changes', async () => (received.length === 3 ? true : undefined));
    expect(received.map((record) => record.eventName)).toEqual(['INSERT', 'MODIFY', 'REMOVE']);
    const [inserted, modified, removed] = received as [DynamoDBRecord, DynamoDBRecord, DynamoDBRecord];
    expect(inserted).toMatchObject({
      eventSource: 'aws:dynamodb',
      eventSourceARN: aws.tableStream.arn,
      dynamodb: {
        Keys: { pk: { S: `${mine}a` }, sk: { S: 'item' } },
        NewImage: { version: { N: '1' }, bytes: { B: Buffer.from('raw').toString('base64') } },
        StreamViewType: 'NEW_AND_OLD_IMAGES',
        ApproximateCreationDateTime: expect.any(Number),
      },
    });
    expect(modified.dynamodb).toMatchObject({ NewImage: { version: { N: '2' } }, OldImage: { version: { N: '1' } } });
    expect(removed.dynamodb?.OldImage).toMatchObject({ version: { N: '2' } });
    const sequence = received.map((record) => BigInt(record.dynamodb?.SequenceNumber ?? '0'));
    expect([...sequence].sort((a, b) => (a < b ? -1 : 1))).toEqual(sequence);
  });

  it('never invokes the handler with the records its filters drop, as a filtered mapping does', async () => {
    // Prepare
    const mine = prefix();
    const received: DynamoDBRecord[] = [];
    poll(
      async (event) => {
        received.push(...event.Records.filter((record) => keyOf(record).startsWith(mine)));
      },
      undefined,
      [{ dynamodb: { NewImage: { entity: { S: ['kept'] } } } }],
    );

    // Act
    await put(`${mine}bucket`, { entity: { S: 'rate-limit-bucket' } });
    await put(`${mine}kept`, { entity: { S: 'kept' } });
    await put(`${mine}untagged`);
    await put(`${mine}last`, { entity: { S: 'kept' } });

    // Assess
    await waitFor('the kept records', async () => (received.length >= 2 ? true : undefined));
    expect(received.map(keyOf)).toEqual([`${mine}kept`, `${mine}last`]);
  });

  it('splits a failing batch, retries the record that keeps failing, then records it in the failure queue and moves on', async () => {
    // Prepare
    const mine = prefix();
    const handled: string[] = [];
    poll(async (event) => {
      const keys = event.Records.map(keyOf);
      if (keys.includes(`${mine}3`)) throw new Error('cannot record this one');
      handled.push(...keys.filter((key) => key.startsWith(mine)));
    });

    // Act: written within one batching window.
    for (const index of [1, 2, 3, 4, 5]) await put(`${mine}${index}`);

    // Assess
    const failure = await waitFor('the failed batch in the failure queue', async () => {
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: aws.streamFailureQueues['analytics-lake']?.url, WaitTimeSeconds: 0 }),
      );
      return Messages?.[0];
    });
    await waitFor('the records after it', async () => (handled.length === 4 ? true : undefined));
    expect(handled.sort()).toEqual([1, 2, 4, 5].map((index) => `${mine}${index}`));
    const record = JSON.parse(failure.Body as string);
    expect(record).toMatchObject({
      requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 2 },
      DDBStreamBatchInfo: { batchSize: 1, streamArn: aws.tableStream.arn },
    });
    expect(record.DDBStreamBatchInfo.startSequenceNumber).toBe(record.DDBStreamBatchInfo.endSequenceNumber);
  });

  it('resumes after the last record it handled, as kept in its position file', async () => {
    // Prepare
    const mine = prefix();
    const dir = await mkdtemp(join(tmpdir(), 'stream-position-'));
    const position = join(dir, 'position.json');
    const first: string[] = [];
    const before = poll(async (event) => {
      first.push(...event.Records.map(keyOf).filter((key) => key.startsWith(mine)));
    }, position);
    await put(`${mine}before`);
    await waitFor('the first record', async () => (first.length === 1 ? true : undefined));
    await before.stop();

    // Act
    await put(`${mine}after`);
    const second: string[] = [];
    poll(async (event) => {
      second.push(...event.Records.map(keyOf).filter((key) => key.startsWith(mine)));
    }, position);

    // Assess
    await waitFor('the record written while it was stopped', async () => (second.length > 0 ? true : undefined));
    expect(second).toEqual([`${mine}after`]);
    await rm(dir, { recursive: true, force: true });
  });
});

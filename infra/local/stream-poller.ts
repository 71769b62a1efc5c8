import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AttributeValue,
  DescribeStreamCommand,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent, AttributeValue as EventAttributeValue } from 'aws-lambda';
import { metersUsage, recordInvocation } from '#shared/aws/usage-meter';
import type { TableStreamConsumer } from '#shared/kernel/table-stream';
import { passesFilters } from './event-filter';
import { lambdaContext } from './lambda-runtime';

export type StreamBatchHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<unknown>;

export interface StreamPollerOptions {
  streamArn: string;
  streamsClient: DynamoDBStreamsClient;
  /** Batch size, batching window, retries and filters, as the CDK stack gives the event source mapping. */
  consumer: Pick<TableStreamConsumer, 'batchSize' | 'batchingWindowSeconds' | 'retryAttempts' | 'filters'>;
  handler: StreamBatchHandler;
  functionName: string;
  timeoutMs: number;
  /** Where a batch that failed every retry is recorded (the mapping's on-failure destination). */
  failureQueue: { url: string; sqsClient: SQSClient };
  /**
   * Where the last sequence number handled of each shard is kept across restarts (a data dir), as
   * the event source mapping keeps its position; without one, polling starts at the oldest record.
   */
  checkpointFile?: string;
  /** How long an empty read waits before the next (Lambda reads each shard about 4 times a second). */
  pollIntervalMs?: number;
  /**
   * `flush`: records wait until {@link StreamPoller.flush} (or a full batch), so what a batch holds
   * does not depend on timing (the cost bench counts invocations); `window` by default.
   */
  delivery?: 'window' | 'flush';
  log?: (line: string) => void;
}

export interface StreamPoller {
  /** Reads the stream to its current end and delivers what is buffered now, as one batch per shard. */
  flush(): Promise<void>;
  /** Stops polling and waits for the batch being handled, if any. */
  stop(): Promise<void>;
}

/** Lambda's event carries binary attributes base64-encoded, where the SDK gives bytes. */
const eventValue = (value: AttributeValue): EventAttributeValue => {
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((bytes) => Buffer.from(bytes).toString('base64')) };
  if (value.M !== undefined) return { M: eventImage(value.M) };
  if (value.L !== undefined) return { L: value.L.map(eventValue) };
  return value as EventAttributeValue;
};

const eventImage = (image: Record<string, AttributeValue>): Record<string, EventAttributeValue> => {
  const converted: Record<string, EventAttributeValue> = {};
  for (const [name, value] of Object.entries(image)) converted[name] = eventValue(value);
  return converted;
};

/** Shapes a stream record the way the Lambda DynamoDB event source does. */
const toEventRecord = (record: StreamRecord, streamArn: string): DynamoDBRecord => {
  const stream = record.dynamodb ?? {};
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource,
    awsRegion: record.awsRegion,
    eventSourceARN: streamArn,
    ...(record.userIdentity ? { userIdentity: record.userIdentity } : {}),
    dynamodb: {
      ApproximateCreationDateTime: Math.floor((stream.ApproximateCreationDateTime?.getTime() ?? Date.now()) / 1000),
      Keys: stream.Keys && eventImage(stream.Keys),
      NewImage: stream.NewImage && eventImage(stream.NewImage),
      OldImage: stream.OldImage && eventImage(stream.OldImage),
      SequenceNumber: stream.SequenceNumber,
      SizeBytes: stream.SizeBytes,
      StreamViewType: stream.StreamViewType,
    },
  };
};

interface ShardState {
  shard: Shard;
  iterator?: string;
  /** No more records will come (GetRecords answered no next iterator). */
  closed: boolean;
  buffered: DynamoDBRecord[];
  firstBufferedAt: number;
}

/**
 * The local stand-in for a Lambda DynamoDB Streams event source mapping, polling DynamoDB Local's
 * stream: each shard is read in order (a child shard after its parent is done), records the
 * mapping's filters drop are passed over (`event-filter.ts`), the others gather
 * until the batch size or the batching window, and the handler gets a real DynamoDBStreamEvent.
 * A batch whose handler throws is split in two and each half handled again (bisect on error),
 * down to one record, which is retried `retryAttempts` times; one still failing is sent to the
 * failure queue as Lambda's on-failure record of the batch (shard and sequence numbers, no data)
 * and the shard moves on. One shard's batch at a time (Lambda runs one per shard).
 */
export const startStreamPoller = (options: StreamPollerOptions): StreamPoller => {
  const { streamArn, streamsClient, consumer, handler } = options;
  const log = options.log ?? ((): void => undefined);
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const aborter = new AbortController();
  const shards = new Map<string, ShardState>();
  let checkpoints: Record<string, string> = {};
  let checkpointWrite = Promise.resolve();

  const saveCheckpoint = (shardId: string, sequenceNumber: string): void => {
    checkpoints = { ...checkpoints, [shardId]: sequenceNumber };
    const file = options.checkpointFile;
    if (!file) return;
    const snapshot = JSON.stringify(checkpoints);
    checkpointWrite = checkpointWrite.then(() => writeFile(file, snapshot).catch(() => undefined));
  };

  const sendFailure = async (records: DynamoDBRecord[], shardId: string, error: unknown): Promise<void> => {
    const first = records[0]?.dynamodb;
    const last = records.at(-1)?.dynamodb;
    const failure = {
      requestContext: {
        functionArn: `arn:aws:lambda:local:000000000000:function:${options.functionName}`,
        condition: 'RetryAttemptsExhausted',
        approximateInvokeCount: consumer.retryAttempts + 1,
      },
      responseContext: { functionError: error instanceof Error ? error.message : String(error) },
      version: '1.0',
      timestamp: new Date().toISOString(),
      DDBStreamBatchInfo: {
        shardId,
        startSequenceNumber: first?.SequenceNumber,
        endSequenceNumber: last?.SequenceNumber,
        approximateArrivalOfFirstRecord: new Date((first?.ApproximateCreationDateTime ?? 0) * 1000).toISOString(),
        approximateArrivalOfLastRecord: new Date((last?.ApproximateCreationDateTime ?? 0) * 1000).toISOString(),
        batchSize: records.length,
        streamArn,
      },
    };
    await options.failureQueue.sqsClient.send(
      new SendMessageCommand({ QueueUrl: options.failureQueue.url, MessageBody: JSON.stringify(failure) }),
    );
    log(
      `[${options.functionName}] ${records.length} stream record(s) of ${shardId} failed every retry; recorded in the failure queue`,
    );
  };

  const metering = metersUsage();
  const invoke = async (records: DynamoDBRecord[]) => {
    const invokedAt = performance.now();
    try {
      return await handler({ Records: records }, lambdaContext(options.functionName, options.timeoutMs));
    } finally {
      if (metering) recordInvocation(options.functionName, performance.now() - invokedAt);
    }
  };
  /** Flushes asked for: resolved once a pass reads nothing and every buffer is delivered. */
  let flushes: (() => void)[] = [];

  /** Hands a batch to the handler, bisecting on failure, then retrying single records. */
  const deliver = async (records: DynamoDBRecord[], shardId: string): Promise<void> => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await invoke(records);
        return;
      } catch (error) {
        if (aborter.signal.aborted) throw error;
        if (records.length > 1) {
          const half = Math.ceil(records.length / 2);
          log(`[${options.functionName}] a batch of ${records.length} failed; bisecting: ${(error as Error).message}`);
          await deliver(records.slice(0, half), shardId);
          await deliver(records.slice(half), shardId);
          return;
        }
        if (attempt >= consumer.retryAttempts) {
          await sendFailure(records, shardId, error);
          return;
        }
        await sleep(500 * 2 ** attempt, undefined, { signal: aborter.signal });
      }
    }
  };

  const refreshShards = async (): Promise<void> => {
    const listed: Shard[] = [];
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await streamsClient.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
        { abortSignal: aborter.signal },
      );
      listed.push(...(StreamDescription?.Shards ?? []));
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId);
    for (const shard of listed)
      if (shard.ShardId && !shards.has(shard.ShardId))
        shards.set(shard.ShardId, { shard, closed: false, buffered: [], firstBufferedAt: 0 });
  };

  /** A shard is read once its parent (if the stream still lists it) is read to its end. */
  const readable = (state: ShardState): boolean => {
    const parent = state.shard.ParentShardId ? shards.get(state.shard.ParentShardId) : undefined;
    return !state.closed && (parent === undefined || (parent.closed && parent.buffered.length === 0));
  };

  const openIterator = async (state: ShardState): Promise<string | undefined> => {
    const shardId = state.shard.ShardId as string;
    const after = checkpoints[shardId];
    const { ShardIterator } = await streamsClient.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ...(after
          ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }
          : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
      { abortSignal: aborter.signal },
    );
    return ShardIterator;
  };

  /** Reads what the shard has; delivers a batch when full, when the window has passed, or at the shard's end. */
  const pollShard = async (state: ShardState, flushing: boolean): Promise<boolean> => {
    const shardId = state.shard.ShardId as string;
    state.iterator ??= await openIterator(state);
    let read = 0;
    if (state.iterator) {
      const { Records, NextShardIterator } = await streamsClient.send(
        new GetRecordsCommand({ ShardIterator: state.iterator, Limit: consumer.batchSize - state.buffered.length }),
        { abortSignal: aborter.signal },
      );
      read = Records?.length ?? 0;
      // Records the mapping's filters drop never reach the handler (nor count towards a batch).
      const kept = (Records ?? [])
        .map((record) => toEventRecord(record, streamArn))
        .filter((record) => passesFilters(record, consumer.filters));
      if (kept.length > 0 && state.buffered.length === 0) state.firstBufferedAt = Date.now();
      const lastRead = Records?.at(-1)?.dynamodb?.SequenceNumber;
      if (state.buffered.length === 0 && kept.length === 0 && lastRead) saveCheckpoint(shardId, lastRead);
      state.buffered.push(...kept);
      state.iterator = NextShardIterator;
      if (!NextShardIterator) state.closed = true;
    } else state.closed = true;
    const due =
      state.buffered.length >= consumer.batchSize ||
      state.closed ||
      (flushing && read === 0) ||
      (options.delivery !== 'flush' && Date.now() - state.firstBufferedAt >= consumer.batchingWindowSeconds * 1000);
    if (state.buffered.length > 0 && due) {
      const batch = state.buffered;
      state.buffered = [];
      await deliver(batch, shardId);
      const last = batch.at(-1)?.dynamodb?.SequenceNumber;
      if (last) saveCheckpoint(shardId, last);
    }
    return read > 0;
  };

  const loop = async (): Promise<void> => {
    if (options.checkpointFile)
      checkpoints = JSON.parse(await readFile(options.checkpointFile, 'utf8').catch(() => '{}')) as Record<
        string,
        string
      >;
    let lastRefresh = 0;
    while (!aborter.signal.aborted) {
      try {
        if (Date.now() - lastRefresh > 10_000) {
          await refreshShards();
          lastRefresh = Date.now();
        }
        const waiting = flushes;
        flushes = [];
        let busy = false;
        for (const state of shards.values())
          if (readable(state)) busy = (await pollShard(state, waiting.length > 0)) || busy;
        const drained = [...shards.values()].every((state) => state.buffered.length === 0);
        if (waiting.length > 0 && !busy && drained) for (const done of waiting) done();
        else flushes.unshift(...waiting);
        if (!busy) await sleep(pollIntervalMs, undefined, { signal: aborter.signal });
      } catch (error) {
        if (aborter.signal.aborted) return;
        log(`[${options.functionName}] polling ${streamArn} failed, retrying: ${(error as Error).message}`);
        await sleep(1_000, undefined, { signal: aborter.signal }).catch(() => undefined);
      }
    }
  };

  const running = loop();
  return {
    flush: () => new Promise<void>((resolve) => flushes.push(resolve)),
    stop: async () => {
      aborter.abort();
      await running;
      await checkpointWrite;
    },
  };
};

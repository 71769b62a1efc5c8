import { setTimeout as sleep } from 'node:timers/promises';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSMessageAttributes,
  SQSRecord,
  SQSRecordAttributes,
} from 'aws-lambda';
import { metersUsage, recordInvocation, recordSqsRequest } from '#shared/aws/usage-meter';
import { lambdaContext } from './lambda-runtime';

export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | undefined>;

export interface QueuePollerOptions {
  queueUrl: string;
  /** The event's eventSourceARN; read from the queue when omitted. */
  queueArn?: string;
  handler: SqsBatchHandler;
  /** Messages per invocation; ReceiveMessage caps it at 10. */
  batchSize: number;
  /** Long-poll wait (default 1 s, so stop() returns quickly); kept below half the visibility timeout. */
  waitTimeSeconds?: number;
  sqsClient: SQSClient;
  /** Reported in the Lambda context; defaults to the queue name. */
  functionName?: string;
  /** The consumer's Lambda timeout, for getRemainingTimeInMillis(). */
  timeoutMs?: number;
  log?: (line: string) => void;
}

export interface QueuePoller {
  /** Stops polling and waits for the batch being handled, if any. */
  stop(): Promise<void>;
}

const retryDelayMs = 1_000;

const toMessageAttributes = (attributes: Record<string, MessageAttributeValue> | undefined): SQSMessageAttributes =>
  Object.fromEntries(
    Object.entries(attributes ?? {}).map(([name, value]) => [
      name,
      {
        dataType: value.DataType ?? 'String',
        stringValue: value.StringValue,
        // Lambda delivers binary attributes base64-encoded.
        binaryValue: value.BinaryValue ? Buffer.from(value.BinaryValue).toString('base64') : undefined,
        stringListValues: value.StringListValues ?? [],
        binaryListValues: (value.BinaryListValues ?? []).map((item) => Buffer.from(item).toString('base64')),
      },
    ]),
  );

/** Shapes a received message the way the Lambda SQS event source does. */
const toRecord = (message: Message, eventSourceARN: string, awsRegion: string): SQSRecord => {
  const { ApproximateReceiveCount, SentTimestamp, SenderId, ApproximateFirstReceiveTimestamp, ...optional } =
    message.Attributes ?? {};
  const attributes: SQSRecordAttributes = {
    ...optional,
    ApproximateReceiveCount: ApproximateReceiveCount ?? '1',
    SentTimestamp: SentTimestamp ?? String(Date.now()),
    SenderId: SenderId ?? 'local',
    ApproximateFirstReceiveTimestamp: ApproximateFirstReceiveTimestamp ?? String(Date.now()),
  };
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes,
    messageAttributes: toMessageAttributes(message.MessageAttributes),
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion,
  };
};

/**
 * Which records to delete, following Lambda's ReportBatchItemFailures rules: no failures means
 * all succeeded; a failure naming no record of the batch fails the whole batch.
 */
const succeededRecords = (records: SQSRecord[], response: SQSBatchResponse | undefined): SQSRecord[] => {
  const failures = response?.batchItemFailures ?? [];
  const ids = new Set(records.map((record) => record.messageId));
  if (failures.some((failure) => !failure.itemIdentifier || !ids.has(failure.itemIdentifier))) return [];
  const failed = new Set(failures.map((failure) => failure.itemIdentifier));
  return records.filter((record) => !failed.has(record.messageId));
};

/**
 * The local stand-in for a Lambda SQS event-source mapping: long-polls the queue, invokes the
 * handler with a real SQSEvent and deletes what it reports as processed. Failed messages become
 * visible again after the visibility timeout, and the queue's redrive policy moves them to the
 * DLQ after maxReceiveCount receives. One batch at a time (Lambda would run several in parallel).
 */
export const startQueuePoller = (options: QueuePollerOptions): QueuePoller => {
  const { queueUrl, handler, sqsClient } = options;
  const log = options.log ?? ((): void => undefined);
  const queueName = queueUrl.split('/').pop() ?? queueUrl;
  const functionName = options.functionName ?? queueName;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const aborter = new AbortController();
  const metering = metersUsage();

  /**
   * local-aws-sqs starts a message's visibility clock when a long poll picks it, yet answers only
   * when the wait ends (or the batch is full), so the wait must stay below the visibility timeout.
   */
  const describeQueue = async (): Promise<{ arn: string; waitTimeSeconds: number; region: string }> => {
    const { Attributes } = await sqsClient.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn', 'VisibilityTimeout'] }),
      { abortSignal: aborter.signal },
    );
    const arn = options.queueArn ?? Attributes?.QueueArn;
    if (!arn) throw new Error(`queue ${queueUrl} reported no QueueArn`);
    const visibilityTimeoutSeconds = Number(Attributes?.VisibilityTimeout ?? 30);
    const waitTimeSeconds = Math.max(
      0,
      Math.min(options.waitTimeSeconds ?? 1, Math.floor(visibilityTimeoutSeconds / 2)),
    );
    return { arn, waitTimeSeconds, region: await sqsClient.config.region() };
  };

  const receive = async (waitTimeSeconds: number): Promise<Message[]> => {
    const { Messages } = await sqsClient.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(options.batchSize, 10),
        WaitTimeSeconds: waitTimeSeconds,
        // local-aws-sqs reads only the older AttributeNames; AWS accepts both.
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: aborter.signal },
    );
    return Messages ?? [];
  };

  const handle = async (records: SQSRecord[]): Promise<void> => {
    let response: SQSBatchResponse | undefined;
    const invokedAt = performance.now();
    try {
      response = await handler({ Records: records }, lambdaContext(functionName, timeoutMs));
    } catch (error) {
      log(
        `[${functionName}] handler failed; ${records.length} message(s) will be retried: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      return;
    } finally {
      if (metering) recordInvocation(functionName, performance.now() - invokedAt);
    }
    const succeeded = succeededRecords(records, response);
    if (succeeded.length < records.length)
      log(`[${functionName}] ${records.length - succeeded.length} of ${records.length} message(s) will be retried`);
    if (succeeded.length === 0) return;
    if (metering) recordSqsRequest('DeleteMessageBatch');
    const { Failed } = await sqsClient.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: succeeded.map((record, index) => ({ Id: String(index), ReceiptHandle: record.receiptHandle })),
      }),
    );
    for (const failure of Failed ?? [])
      log(`[${functionName}] could not delete message ${failure.Id}: ${failure.Message ?? failure.Code}`);
  };

  const loop = async (): Promise<void> => {
    let queue: Awaited<ReturnType<typeof describeQueue>> | undefined;
    while (!aborter.signal.aborted) {
      try {
        queue ??= await describeQueue();
        const { arn, region } = queue;
        const messages = await receive(queue.waitTimeSeconds);
        // Only the receives that found messages: the event source mapping's empty polls are the queue's idle cost.
        if (messages.length > 0 && metering) recordSqsRequest('ReceiveMessage');
        if (messages.length > 0) await handle(messages.map((message) => toRecord(message, arn, region)));
      } catch (error) {
        if (aborter.signal.aborted) return;
        log(
          `[${functionName}] polling ${queueUrl} failed, retrying: ${error instanceof Error ? error.message : String(error)}`,
        );
        await sleep(retryDelayMs, undefined, { signal: aborter.signal }).catch(() => undefined);
      }
    }
  };

  const running = loop();
  return {
    stop: async () => {
      aborter.abort();
      await running;
    },
  };
};

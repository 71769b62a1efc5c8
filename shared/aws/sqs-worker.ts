import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { z } from 'zod';
import { requireFunctionSettings } from '../kernel/config';
import type { WorkerName } from '../kernel/operation';
import { inSpan, type TraceCarrier, tracedInvocations, tracingOn } from '../telemetry/tracing';
import { addLogKeys, logger, withObservability } from './observability';

/** Every queue message names the organization it belongs to (see `events/queue-messages.ts`). */
type QueueMessageSchema = z.ZodType<{ org_id: string }>;

/** Does the work of one message; throwing returns the message to the queue. */
export type ConsumeMessage<S extends QueueMessageSchema> = (message: z.output<S>, record: SQSRecord) => Promise<void>;

export interface WorkerOptions<S extends QueueMessageSchema> {
  /**
   * Messages whose work is a trace of its own, linked to its sender's rather than in it (the first
   * step of a simulated conversation: one trace per conversation, not one per run).
   */
  startsTrace?: (message: z.output<S>) => boolean;
}

/** The trace a message carries: the W3C context its sender put in its attributes, and X-Ray's header. */
const traceOf = (record: SQSRecord): TraceCarrier => {
  const carrier: TraceCarrier = {};
  for (const [name, attribute] of Object.entries(record.messageAttributes ?? {}))
    if (attribute.stringValue !== undefined) carrier[name] = attribute.stringValue;
  if (record.attributes.AWSTraceHeader) carrier['x-amzn-trace-id'] ??= record.attributes.AWSTraceHeader;
  return carrier;
};

/** `consume` with each message a span (messaging conventions) continuing its sender's trace; off, `consume` itself. */
const tracedConsumer = <S extends QueueMessageSchema>(
  worker: WorkerName,
  consume: ConsumeMessage<S>,
  { startsTrace }: WorkerOptions<S>,
): ConsumeMessage<S> =>
  tracingOn
    ? (message, record) =>
        inSpan(
          `process ${worker}`,
          {
            kind: 'consumer',
            parent: traceOf(record),
            newTrace: startsTrace?.(message),
            attributes: {
              'messaging.system': 'aws_sqs',
              'messaging.operation.type': 'process',
              'messaging.operation.name': 'process',
              'messaging.destination.name': record.eventSourceARN.split(':').at(-1),
              'messaging.message.id': record.messageId,
              'classic_api.organization.id': message.org_id,
            },
          },
          () => consume(message, record),
        )
    : consume;

/**
 * The Lambda handler of a queue worker (`functions/workers/<worker>.ts`): each record's body
 * is parsed with the queue's message schema and handed to `consume`.
 *
 * A record that fails, including one whose message does not parse, is logged and re-thrown,
 * so only it is reported in the partial batch response: it returns to the queue, is retried,
 * and after the queue's maxReceiveCount lands in its dead-letter queue, whose alarm fires.
 * Consumers must therefore be idempotent. A batch whose every record fails fails the
 * invocation (Powertools' default), which counts in the function's error metric.
 *
 * Records are processed one after the other: the organization id is appended to the one
 * process-wide logger, so records in flight together would mislabel each other's log lines.
 * Concurrency comes from concurrent invocations (the queue's `maxConcurrency`).
 */
export const sqsWorker = <S extends QueueMessageSchema>(
  worker: WorkerName,
  schema: S,
  consume: ConsumeMessage<S>,
  options: WorkerOptions<S> = {},
) => {
  // A misconfigured worker fails its cold start rather than its first message.
  requireFunctionSettings();
  const processor = new BatchProcessor(EventType.SQS);
  const consumeTraced = tracedConsumer(worker, consume, options);

  const processRecord = async (record: SQSRecord): Promise<void> => {
    addLogKeys({ org_id: undefined, message_id: record.messageId });
    try {
      const message = schema.parse(JSON.parse(record.body));
      addLogKeys({ org_id: message.org_id });
      await consumeTraced(message, record);
    } catch (error) {
      logger.error('queue message failed; it returns to the queue', {
        error: error as Error,
        receive_count: record.attributes.ApproximateReceiveCount,
      });
      throw error;
    }
  };

  const handler = withObservability(
    middy(async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> => {
      addLogKeys({ worker });
      return processPartialResponse(event, processRecord, processor, { context, processInParallel: false });
    }),
  );
  return tracedInvocations(handler);
};

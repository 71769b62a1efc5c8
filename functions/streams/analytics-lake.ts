import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import middy from '@middy/core';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { recordTableChanges, type TableChange } from '#shared/analytics/lake-changes';
import { streamVersion } from '#shared/analytics/lake-layout';
import { addLogKeys, logger, withObservability } from '#shared/aws/observability';
import { requireFunctionSettings } from '#shared/kernel/config';
import { tracedInvocations } from '#shared/telemetry/tracing';

requireFunctionSettings();

type StreamImage = Record<string, AttributeValue>;

/** A stream record as the lake's change: the new image of a put, the old image of a removal. */
const changeOf = (record: DynamoDBRecord): TableChange[] => {
  const stream = record.dynamodb;
  const removed = record.eventName === 'REMOVE';
  const image = removed ? stream?.OldImage : stream?.NewImage;
  if (!stream?.Keys || !stream.SequenceNumber || !image) return [];
  return [
    {
      kind: removed ? 'remove' : 'put',
      keys: unmarshall(stream.Keys as StreamImage),
      image: unmarshall(image as StreamImage),
      version: streamVersion(stream.ApproximateCreationDateTime ?? 0, stream.SequenceNumber),
    },
  ];
};

/**
 * The consumer of the table's stream (`shared/analytics/lake-feed.ts`): each batch of changes
 * becomes delta files of the analytics lake. A failure throws, so the event source splits the
 * batch and retries each half, then sends what still fails to the failure queue.
 */
const consumer = withObservability(
  middy(async (event: DynamoDBStreamEvent): Promise<void> => {
    addLogKeys({ stream_consumer: 'analytics-lake', records: event.Records.length });
    try {
      const recorded = await recordTableChanges(event.Records.flatMap(changeOf));
      logger.debug('stream batch recorded in the lake', { ...recorded });
    } catch (error) {
      logger.error('stream batch failed; it is split and retried', {
        error: error as Error,
        first_sequence_number: event.Records[0]?.dynamodb?.SequenceNumber,
        last_sequence_number: event.Records.at(-1)?.dynamodb?.SequenceNumber,
      });
      throw error;
    }
  }),
);

export const handler = tracedInvocations(consumer);

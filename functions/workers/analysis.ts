import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { analysisQueueMessage } from '../../events/queue-messages';
import { analyzeConversation } from '#shared/conversation/analysis';
import { logger } from '#shared/aws/observability';

/**
 * Post-conversation analysis. A failed record is re-thrown so that only it returns to the
 * queue (partial batch response) and is retried; the analysis is idempotent, so a retried or
 * duplicated message repeats nothing already done.
 */
const processor = new BatchProcessor(EventType.SQS);

const analyze = async (record: SQSRecord): Promise<void> => {
  const message = analysisQueueMessage.parse(JSON.parse(record.body));
  logger.appendKeys({ org_id: message.org_id });
  await analyzeConversation(message);
};

export const handler = middy(
  async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, analyze, processor, { context }),
).use(injectLambdaContext(logger, { resetKeys: true }));

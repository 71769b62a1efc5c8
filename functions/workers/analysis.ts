import { sqsWorker } from '#shared/aws/sqs-worker';
import { analyzeFinishedConversation } from '#shared/composition/conversation-analysis';
import { analysisQueueMessage } from '../../events/queue-messages';

/**
 * Post-conversation analysis. The analysis is idempotent, so a retried or duplicated message
 * repeats nothing already done.
 */
export const handler = sqsWorker('analysis', analysisQueueMessage, analyzeFinishedConversation);

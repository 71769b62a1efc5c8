import { sqsWorker } from '#shared/aws/sqs-worker';
import { advancePromotion } from '#shared/simulation/promotions';
import { simulateConversationStep } from '#shared/simulation/run-worker';
import { simulationQueueMessage } from '../../events/queue-messages';

/**
 * Simulated conversations of simulation runs, one step per message, and version set promotions
 * waiting on their gate runs. A step is idempotent: a retried or duplicated message takes no
 * turn twice and counts no outcome twice, and a promotion ends once.
 */
export const handler = sqsWorker('simulation', simulationQueueMessage, (message) =>
  message.type === 'advance-version-set-promotion' ? advancePromotion(message) : simulateConversationStep(message),
);

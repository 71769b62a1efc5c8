import { sqsWorker } from '#shared/aws/sqs-worker';
import { simulateConversationStep } from '#shared/simulation/run-worker';
import { simulationQueueMessage } from '../../events/queue-messages';

/**
 * Simulated conversations of simulation runs, one step per message. A step is idempotent: a
 * retried or duplicated message takes no turn twice and counts no outcome twice.
 */
export const handler = sqsWorker('simulation', simulationQueueMessage, simulateConversationStep);

import { sqsWorker } from '#shared/aws/sqs-worker';
import { replayBacktestConversation } from '#shared/simulation/backtest-worker';
import { advancePromotion } from '#shared/simulation/promotions';
import { simulateConversationStep } from '#shared/simulation/run-worker';
import { simulationQueueMessage } from '../../events/queue-messages';

/**
 * Simulated conversations of simulation runs, one step per message, version set promotions
 * waiting on their gate runs, and backtests' replays of real conversations. A step is idempotent:
 * a retried or duplicated message takes no turn twice and counts no outcome twice, and a
 * promotion ends once.
 */
export const handler = sqsWorker(
  'simulation',
  simulationQueueMessage,
  (message) => {
    switch (message.type) {
      case 'advance-version-set-promotion':
        return advancePromotion(message);
      case 'replay-backtest-conversation':
        return replayBacktestConversation(message);
      default:
        return simulateConversationStep(message);
    }
  },
  // One trace per simulated conversation, linked to the run's request: its later steps continue it.
  { startsTrace: (message) => message.type === 'simulate-conversation' && message.checkpoint === null },
);

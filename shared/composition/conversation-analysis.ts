import type { ConversationFinishedMessage } from '../../events/queue-messages';
import { analyzeConversation } from '../conversation/analysis';
import { computeMetrics } from '../metric/evaluation';

/** Post-conversation analysis with its metric step: conversation and metric meet here, above both. */
export const analyzeFinishedConversation = (message: ConversationFinishedMessage): Promise<void> =>
  analyzeConversation(message, computeMetrics);

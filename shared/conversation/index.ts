/** What other capabilities may use of conversation's records; everything else stays behind its domain functions. */
export { conversations, getConversation, getUserServiceState } from './conversation-repository';
export { getInteraction, listInteractions } from './interaction-repository';
export { messages, recentMessages } from './message-repository';
export { recordPostProcessing } from './post-processing-repository';

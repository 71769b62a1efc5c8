/** What other capabilities may use of conversation's records; everything else stays behind its domain functions. */
export { alreadyFinished, getConversation, getUserServiceState } from './conversation-repository';
export { parseEventId } from './event-repository';
export { getInteraction, listInteractions } from './interaction-repository';
export { conversationLakeSources } from './lake-sources';
export { recentMessages } from './message-repository';
export { recordPostProcessing } from './post-processing-repository';
export { getConversations, serviceConversationsSince } from './service-conversations';

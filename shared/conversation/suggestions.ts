import { getAgentVersion } from '../agent/index';
import type { Caller } from '../kernel/caller';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { conversationAttributes, requirePermission } from '../kernel/permissions';
import { buildSystemPrompt, type PromptAgent } from '../llm/prompt';
import { LlmError, type LlmMessage } from '../llm/provider';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import { resolveVersionSet } from '../service/version-sets';
import { requireAuthorizedConversation } from './conversation-lookup';
import { recentMessages } from './message-repository';
import { modelFailure } from './model-failure';
import { createPromptLogger, interactionLogScope, starterLogScope } from './prompt-log';
import type { ConversationRecord } from './schemas';
import { historyEntryOf, loadPinnedVersions } from './session';

/** Recommended replies and conversation starters: short texts the model writes for the user's side. */

const maxRecommendations = 3;
const historyLength = 50;

/** The whole text of a streamed answer; a failed call becomes the 502/503 clients see. */
const collect = async (stream: AsyncIterable<string>): Promise<string> => {
  let text = '';
  try {
    for await (const fragment of stream) text += fragment;
  } catch (error) {
    throw error instanceof LlmError ? modelFailure(error) : error;
  }
  return text;
};

/** One suggestion per line; list markers and quotes a model may add are dropped. */
const suggestionLines = (text: string): string[] =>
  text
    .split(/\r?\n/)
    .map((line) =>
      line
        .replace(/^\s*(?:[-*•]|\d+[.)])\s*/, '')
        .replace(/^"(.*)"$/, '$1')
        .trim(),
    )
    .filter((line) => line !== '');

const promptAgentOf = (agent: {
  identity: { name: string; role: string; developed_by: string };
  background: string;
}): PromptAgent => ({
  name: agent.identity.name,
  role: agent.identity.role,
  developedBy: agent.identity.developed_by,
  background: agent.background,
  behaviors: [],
  communicationPatterns: [],
});

/**
 * Replies the user could send next. Only for the latest completed interaction of an
 * unfinished conversation (400 otherwise). The model plays the user: the conversation is
 * handed over with the roles swapped.
 */
export const recommendResponses = async (
  orgId: string,
  caller: Caller,
  conversationId: string,
  interactionId: string,
  context: string,
): Promise<{ recommended_responses: string[] }> => {
  const conversation = await requireAuthorizedConversation(
    orgId,
    conversationId,
    (found) => requirePermission(caller, 'Conversation:GetRecommendedResponses', conversationAttributes(found)),
    true,
  );
  if (conversation.is_finished) throw new BadRequestError(`Conversation ${conversationId} is finished.`);
  if (conversation.last_interaction_id !== interactionId) {
    throw new BadRequestError(
      `Interaction ${interactionId} is not the latest completed interaction of conversation ${conversationId}.`,
    );
  }
  const [{ agent }, messages] = await Promise.all([
    loadPinnedVersions(conversation),
    recentMessages(orgId, conversationId, historyLength),
  ]);
  const history: LlmMessage[] = messages.flatMap((message) => {
    const entry = historyEntryOf(message);
    if (!entry) return [];
    return [{ role: entry.role === 'agent' ? 'user' : 'assistant', content: entry.text }];
  });
  const system = buildSystemPrompt({
    agent: {
      name: conversation.user_display_name,
      role: 'the user talking to the agent',
      developedBy: '',
      background: '',
      behaviors: [],
      communicationPatterns: [],
    },
    state: {
      name: 'recommend responses',
      objective: `Suggest what the user could say next to ${agent.identity.name}, the ${agent.identity.role}.`,
      actions: [
        `Write up to ${maxRecommendations} different replies the user could send next, one per line, without numbering.`,
      ],
      intraStateNavigationGuidelines: [],
      actionGuidelines: ['Each reply is written as the user, in the first person.'],
      boundaryConstraints: [],
    },
    userContext: [context],
  });
  const { provider, ...settings } = resolveModel(preferencesOf(conversation), 'recommend_responses');
  const promptLogger = createPromptLogger(interactionLogScope(conversation, interactionId, 'recommend-'));
  try {
    const text = await collect(promptLogger.wrap(provider).streamText({ ...settings, system, messages: history }));
    return { recommended_responses: suggestionLines(text).slice(0, maxRecommendations) };
  } finally {
    await promptLogger.flush();
  }
};

const preferencesOf = (conversation: ConversationRecord) =>
  conversation.version_set_info.llm_model_preferences as LlmModelPreferences;

export interface StarterRequest {
  serviceId: string;
  versionSetName: string;
  facets: string[];
  minCount: number;
  maxCount: number;
  instructions: string;
}

/** `minCount` opening messages, each about one of the facets in turn (404 for an unknown service or version set). */
export const getConversationStarters = async (
  orgId: string,
  caller: Caller,
  request: StarterRequest,
): Promise<{ prompts: { prompt: string; facets: string[] }[] }> => {
  // The permission a conversation started with these settings would need.
  requirePermission(caller, 'Conversation:CreateConversation', {
    user_id: caller.userId,
    service_id: request.serviceId,
  });
  const resolved = await resolveVersionSet(orgId, request.serviceId, request.versionSetName);
  const agent = await getAgentVersion(orgId, resolved.agentId, resolved.agentVersion);
  if (!agent) throw new NotFoundError(`Version ${resolved.agentVersion} of agent ${resolved.agentId} does not exist.`);
  const { provider: model, ...settings } = resolveModel(
    resolved.llmModelPreferences as LlmModelPreferences,
    'conversation_starter',
  );
  const promptLogger = createPromptLogger(starterLogScope(orgId, request.serviceId, newId()));
  const provider = promptLogger.wrap(model);
  const facets = Array.from(
    { length: request.minCount },
    (_, index) => request.facets[index % request.facets.length] as string,
  );
  const prompts = await Promise.all(
    facets.map(async (facet) => {
      const system = buildSystemPrompt({
        agent: promptAgentOf(agent),
        state: {
          name: 'conversation starter',
          objective: request.instructions,
          actions: [`Write one message a user could open a conversation with you with, about ${facet}.`],
          intraStateNavigationGuidelines: [],
          actionGuidelines: ['Write as the user, in the first person, in one or two sentences.'],
          boundaryConstraints: [],
        },
      });
      const text = await collect(provider.streamText({ ...settings, system, messages: [] }));
      return { prompt: suggestionLines(text).join(' '), facets: [facet] };
    }),
  ).finally(() => promptLogger.flush());
  return { prompts: prompts.filter((prompt) => prompt.prompt !== '').slice(0, request.maxCount) };
};

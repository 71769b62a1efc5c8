import { z } from 'zod';
import {
  type ConversationFinishedMessage,
  type PostProcessingType,
  postProcessingEventId,
} from '../../events/queue-messages';
import { countAnalysisCompleted } from '../aws/business-metrics';
import { logger } from '../aws/observability';
import { queueWebhookEvents } from '../aws/queues';
import type { ResultPut } from '../data/table';
import { newId, nowIso } from '../kernel/ids';
import type { LlmTool } from '../llm/provider';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import { getOrganization } from '../organization/index';
import type { UserDimension } from '../organization/schemas';
import { conversationMemories, getUserModels, memoryPut, userModelsPut } from '../user/index';
import type { MemoryRecord, UserModel } from '../user/schemas';
import { getConversation } from './conversation-repository';
import { recentMessages } from './message-repository';
import { recordConversationAnalyzed, recordPostProcessings } from './post-processing-repository';
import { analysisLogScope, createPromptLogger } from './prompt-log';
import type { ConversationRecord, MessageRecord } from './schemas';

/**
 * Post-conversation analysis, run by the analysis worker for each finished conversation:
 *
 * 1. `extract-memories`: memories about the user, each referring to the messages it was drawn
 *    from. The model proposes them through a `record_memory` tool; a model that proposes none
 *    (the deterministic offline model) leaves the user's own substantive messages as memories.
 * 2. `generate-user-models`: the user's models, one per user dimension of the organization
 *    (the model tags each new memory with the dimension it is about), each listing what is
 *    known with the ids of the memories behind it.
 * 3. `compute-metrics`: every metric applied to the conversation's service, judged by the model
 *    (`shared/metric/evaluation.ts`), stored as `post-session` results.
 *
 * Each step is recorded in `completed_post_processings` in the same transaction as its
 * results, so a redelivered message repeats nothing; the first two steps in one transaction
 * (the user models are drawn from the memories just extracted). Each completed step then gets one
 * `conversation-post-processing-complete` event on the webhook queue (all three in one request),
 * and one write notes them queued and the conversation analysed.
 */

/** The conversation has not been marked finished yet (its finish is still committing): retry later. */
export class ConversationNotFinishedError extends Error {
  constructor(conversationId: string) {
    super(`Conversation ${conversationId} is not finished yet; its analysis is retried.`);
    this.name = 'ConversationNotFinishedError';
  }
}

const steps: PostProcessingType[] = ['extract-memories', 'generate-user-models', 'compute-metrics'];
/** Messages analysed per conversation (the latest ones). */
const transcriptLength = 500;
/** Memories per conversation; one transaction carries them with the step's record. */
const maxMemories = 25;
/** Lines and memory ids a user model keeps. */
const maxModelLines = 30;
const minMemoryWords = 3;

const recordMemoryTool: LlmTool = {
  name: 'record_memory',
  description:
    'Records one lasting fact about the user (a preference, circumstance, goal or trait) learned in this conversation.',
  inputSchema: {
    type: 'object',
    properties: {
      content: { type: 'string', description: 'The fact, as one sentence about the user.' },
      context: { type: 'string', description: 'The situation in which the user revealed it.' },
      references: { type: 'array', items: { type: 'string' }, description: 'Ids of the messages the fact comes from.' },
    },
    required: ['content', 'context', 'references'],
  },
};

const proposedMemory = z.object({
  content: z.string().trim().min(1),
  context: z.string().trim().default(''),
  references: z.array(z.string()).default([]),
});

const preferencesOf = (conversation: ConversationRecord) =>
  conversation.version_set_info.llm_model_preferences as LlmModelPreferences;

const transcriptOf = (messages: MessageRecord[]): string =>
  messages
    .map((message) => `[${message.id}] ${message.sender} (${message.message_type}): ${message.message}`)
    .join('\n');

const memoryOf = (
  conversation: ConversationRecord,
  fields: Pick<MemoryRecord, 'content' | 'context' | 'references'>,
): MemoryRecord => ({
  id: newId(),
  user_id: conversation.user_id,
  created_at: nowIso(),
  conversation_id: conversation.id,
  service_id: conversation.service_id,
  ...fields,
});

const modelMemories = async (conversation: ConversationRecord, messages: MessageRecord[]): Promise<MemoryRecord[]> => {
  const { provider: model, ...settings } = resolveModel(preferencesOf(conversation), 'extract_memories');
  const promptLogger = createPromptLogger({ ...analysisLogScope(conversation), callPrefix: 'memories-' });
  const provider = promptLogger.wrap(model);
  const known = new Set(messages.map((message) => message.id));
  const result = await provider
    .callTools({
      ...settings,
      system:
        'You read a finished conversation between a user and an agent and record what is worth remembering about the user ' +
        'for future conversations. Call record_memory once per fact. Refer to messages by the ids in brackets.',
      messages: [{ role: 'user', content: transcriptOf(messages) }],
      tools: [recordMemoryTool],
    })
    .finally(() => promptLogger.flush());
  return result.toolCalls.flatMap((call) => {
    const parsed = proposedMemory.safeParse(call.input);
    if (call.name !== recordMemoryTool.name || !parsed.success) return [];
    const references = parsed.data.references.filter((id) => known.has(id));
    return references.length > 0 ? [memoryOf(conversation, { ...parsed.data, references })] : [];
  });
};

/** The user's own substantive messages, each with the agent message it answered as context. */
const messageMemories = (conversation: ConversationRecord, messages: MessageRecord[]): MemoryRecord[] =>
  messages.flatMap((message, index) => {
    if (message.message_type !== 'user-message') return [];
    if (message.message.trim().split(/\s+/).length < minMemoryWords) return [];
    const answered = messages.slice(0, index).findLast((earlier) => earlier.message_type === 'agent-message');
    return [
      memoryOf(conversation, {
        content: `${conversation.user_display_name} said: "${message.message.trim()}"`,
        context: answered ? `In reply to the agent: "${answered.message.trim()}"` : 'At the start of the conversation.',
        references: answered ? [answered.id, message.id] : [message.id],
      }),
    ];
  });

/** The memories to store for the conversation (not stored yet). */
const extractMemories = async (conversation: ConversationRecord): Promise<MemoryRecord[]> => {
  const messages = (await recentMessages(conversation.org_id, conversation.id, transcriptLength)).filter(
    (message) => message.message_type !== 'agent-inner-thought',
  );
  const proposed = messages.length > 0 ? await modelMemories(conversation, messages) : [];
  return (proposed.length > 0 ? proposed : messageMemories(conversation, messages)).slice(0, maxMemories);
};

/** The organization's user dimension each memory is about (null when the organization has none). */
const tagDimensions = async (
  conversation: ConversationRecord,
  memories: MemoryRecord[],
  dimensions: UserDimension[],
): Promise<(UserDimension | null)[]> => {
  if (dimensions.length === 0) return memories.map(() => null);
  const { provider: model, ...settings } = resolveModel(preferencesOf(conversation), 'generate_user_models');
  const promptLogger = createPromptLogger({ ...analysisLogScope(conversation), callPrefix: 'user-model-' });
  const provider = promptLogger.wrap(model);
  const options = dimensions.map((dimension, index) => ({
    id: `dimension-${index}`,
    description: [dimension.description, ...dimension.tags].join(' '),
  }));
  const tagged = Promise.all(
    memories.map(async (memory) => {
      const choice = await provider.chooseOption({
        ...settings,
        system: 'You sort facts about a user into the aspects of the user an organization keeps track of.',
        messages: [{ role: 'user', content: `${memory.content}\n${memory.context}` }],
        options,
      });
      return dimensions[options.findIndex((option) => option.id === choice.id)] ?? (dimensions[0] as UserDimension);
    }),
  );
  return tagged.finally(() => promptLogger.flush());
};

const sameDimension = (model: UserModel, dimension: UserDimension | null): boolean =>
  dimension === null ? model.dimensions.length === 0 : model.dimensions[0]?.description === dimension.description;

/** Adds the memories to the model of their dimension, keeping the latest lines and ids. */
export const mergeUserModels = (
  previous: UserModel[],
  memories: MemoryRecord[],
  tags: (UserDimension | null)[],
): UserModel[] => {
  const models = previous.map((model) => ({ ...model }));
  memories.forEach((memory, index) => {
    const dimension = tags[index] ?? null;
    let model = models.find((candidate) => sameDimension(candidate, dimension));
    if (!model) {
      model = { content: '', insight_ids: [], dimensions: dimension ? [dimension] : [] };
      models.push(model);
    }
    const lines = [...model.content.split('\n').filter((line) => line !== ''), `- ${memory.content}`];
    model.content = [...new Set(lines)].slice(-maxModelLines).join('\n');
    model.insight_ids = [...model.insight_ids, memory.id].slice(-maxModelLines);
  });
  return models;
};

/**
 * The user models with the conversation's memories merged in, to store. `extracted`: the memories
 * this run is storing with them; otherwise those an earlier run stored are read (from the index).
 */
const generateUserModels = async (
  conversation: ConversationRecord,
  extracted: MemoryRecord[] | undefined,
): Promise<ResultPut> => {
  const { org_id: orgId, user_id: userId } = conversation;
  const [memories, previous, organization] = await Promise.all([
    extracted ?? conversationMemories(orgId, userId, conversation.id, maxMemories),
    getUserModels(orgId, userId, true),
    getOrganization(orgId),
  ]);
  const tags = await tagDimensions(conversation, memories, organization?.user_dimensions ?? []);
  return userModelsPut(orgId, previous, {
    user_id: userId,
    user_models: mergeUserModels(previous?.user_models ?? [], memories, tags),
    updated_at: nowIso(),
  });
};

/** Extracts the memories and generates the user models (those of the two still pending), recorded in one transaction. */
const rememberUser = async (conversation: ConversationRecord, pending: (type: PostProcessingType) => boolean) => {
  const types: PostProcessingType[] = [];
  const results: ResultPut[] = [];
  let extracted: MemoryRecord[] | undefined;
  if (pending('extract-memories')) {
    extracted = await extractMemories(conversation);
    types.push('extract-memories');
    results.push(...extracted.map((memory) => memoryPut(conversation.org_id, memory)));
  }
  if (pending('generate-user-models')) {
    types.push('generate-user-models');
    results.push(await generateUserModels(conversation, extracted));
  }
  if (types.length > 0) await recordPostProcessings(conversation.org_id, conversation.id, types, results);
};

/** Queues the webhook event of every completed step whose event was not queued yet; returns their types. */
const notifyCompletedSteps = async (conversation: ConversationRecord): Promise<PostProcessingType[]> => {
  const types = steps.filter(
    (type) =>
      conversation.completed_post_processings.includes(type) && !conversation.notified_post_processings.includes(type),
  );
  await queueWebhookEvents(
    types.map((type) => ({
      type: 'conversation-post-processing-complete',
      id: postProcessingEventId(conversation.org_id, conversation.id, type),
      org_id: conversation.org_id,
      conversation_id: conversation.id,
      user_id: conversation.user_id,
      service_id: conversation.service_id,
      post_processing_type: type,
      completed_at: nowIso(),
      ...(conversation.simulation ? { is_simulated: true as const } : {}),
    })),
  );
  return types;
};

/**
 * Computes and records the post-session metrics of a conversation. The metric capability does it;
 * it reads conversations, so the analysis receives it instead of importing it.
 */
export type ComputeMetrics = (conversation: ConversationRecord) => Promise<void>;

/** Runs the analysis of one finished conversation; safe to repeat for the same message. */
export const analyzeConversation = async (
  message: ConversationFinishedMessage,
  computeMetrics: ComputeMetrics,
): Promise<void> => {
  const read = () => getConversation(message.org_id, message.conversation_id, true);
  const conversation = await read();
  if (!conversation) {
    logger.info('conversation to analyse no longer exists', { conversationId: message.conversation_id });
    return;
  }
  if (!conversation.is_finished) throw new ConversationNotFinishedError(conversation.id);
  const pending = (type: PostProcessingType) => !conversation.completed_post_processings.includes(type);
  if (conversation.simulation) {
    // Simulated traffic stays apart: no memories or user models of a synthetic user, no post-session
    // results (the run judges its own metrics). The steps complete empty, so the conversation is analysed.
    const types = steps.filter(pending);
    if (types.length > 0) await recordPostProcessings(conversation.org_id, conversation.id, types, []);
  } else {
    await rememberUser(conversation, pending);
    if (pending('compute-metrics')) await computeMetrics(conversation);
  }
  const analysed = await read();
  if (!analysed) return;
  const notified = await notifyCompletedSteps(analysed);
  if (analysed.is_analyzed && notified.length === 0) return;
  await recordConversationAnalyzed(analysed.org_id, analysed.id, notified);
  if (!analysed.is_analyzed) countAnalysisCompleted();
};

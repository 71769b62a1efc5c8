import { z } from 'zod';
import { logger } from '../aws/observability';
import { requireAuthorizedConversation } from '../conversation/conversation-lookup';
import { conversationSeenBy, listMessages } from '../conversation/queries';
import type { Caller } from '../kernel/caller';
import { BadRequestError, ForbiddenError, NotFoundError } from '../kernel/errors';
import { newId } from '../kernel/ids';
import { conversationAttributes, requirePermission } from '../kernel/permissions';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import { listMetrics } from '../metric/metrics';
import { getUserModel } from '../user/insights';
import { derivedFromConversation } from './derived-from';
import { createPersona } from './personas';
import { createScenario } from './scenarios';
import type { ReferenceMessage, SuccessCriterion, UnitTestFromConversationRequest } from './schemas';
import { simulatedUserPurpose } from './simulated-user';
import { createUnitTest } from './unit-tests';

/*
 * A finished conversation becomes a regression test: a scenario whose objective and instructions
 * come from what its user said (its messages kept as the reference transcript), a persona from its
 * user's user models, and a unit test on its service and version set judged by the metrics named.
 * The platform's model writes the objective, instructions and background (`derive`); with the
 * built-in deterministic model the derivation is rule-based, and labelled so in the records' names
 * and tags: the objective quotes the user's opening request, the instructions list the user's
 * messages in order, which the simulated user then says one a turn.
 */

/** Messages read from the conversation: `max_interactions` is at most 100, so more say nothing the test can use. */
const maxMessages = 500;
const quote = (text: string, limit: number) => (text.length > limit ? `${text.slice(0, limit - 1)}…` : text);

/** What the scenario and persona are made of. */
interface Derivation {
  objective: string;
  instructions: string;
  background: string;
  /** `rule-based`, or the model (`provider:model`) that wrote it. */
  derivedBy: string;
}

const derivationAnswer = z.object({
  objective: z.string().min(1).max(10_000),
  instructions: z.string().min(1).max(10_000),
  persona_background: z.string().min(1).max(10_000),
});

const derivationSchema: Record<string, unknown> = {
  type: 'object',
  properties: {
    objective: { type: 'string', description: 'What the user wanted to achieve, in one or two sentences.' },
    instructions: {
      type: 'string',
      description: 'How a simulated user should behave to reproduce the conversation: what to say, in order.',
    },
    persona_background: { type: 'string', description: 'Who the user is, as far as the conversation shows.' },
  },
  required: ['objective', 'instructions', 'persona_background'],
  additionalProperties: false,
};

const ruleBased = (conversationId: string, said: string[]): Derivation => {
  const opening = said[0] ?? 'Talk to the agent as the user did.';
  return {
    objective: quote(`Get the agent to handle what this user asked: “${opening}”`, 10_000),
    instructions: quote(
      said.length > 0
        ? `Say these one a turn, as the user did:\n${said.map((text) => quote(text, 1000)).join('\n')}`
        : 'Answer the agent briefly.',
      10_000,
    ),
    background: quote(
      `A user of this service, as seen in conversation ${conversationId}. Their first words: “${opening}”`,
      10_000,
    ),
    derivedBy: 'rule-based',
  };
};

/**
 * The scenario and persona as the platform's model writes them from the transcript (the
 * conversation's `simulated_user` preference, else its default); the built-in deterministic model
 * is no language model, so it, or a model that fails to answer in shape, leaves the rule-based way.
 */
const derive = async (
  conversation: { id: string; version_set_info: { llm_model_preferences: Record<string, unknown> } },
  transcript: ReferenceMessage[],
  said: string[],
): Promise<Derivation> => {
  const {
    provider,
    source: _source,
    ...settings
  } = resolveModel(conversation.version_set_info.llm_model_preferences as LlmModelPreferences, simulatedUserPurpose);
  if (provider.name === 'deterministic' || transcript.length === 0) return ruleBased(conversation.id, said);
  try {
    const answer = await provider.generateObject({
      ...settings,
      system:
        'You turn a real conversation between a user and an agent into a regression test: the objective the user pursued, instructions for a simulated user to reproduce it, and who the user is.',
      messages: [
        {
          role: 'user',
          content: transcript.map((message) => `${message.sender}: ${quote(message.message, 2000)}`).join('\n'),
        },
      ],
      schemaName: 'regression_test_brief',
      schemaDescription: 'The scenario and persona of a regression test made from the conversation.',
      schema: derivationSchema,
    });
    const parsed = derivationAnswer.parse(answer.value);
    return {
      objective: parsed.objective,
      instructions: parsed.instructions,
      background: parsed.persona_background,
      derivedBy: `${provider.name}:${settings.model}`,
    };
  } catch (error) {
    logger.warn('the model did not derive a regression test; the rule-based way is used', { error: error as Error });
    return ruleBased(conversation.id, said);
  }
};

/** A criterion that a good conversation meets, for each metric's type. */
const criterionFor = (metric: {
  name: string;
  id: string;
  metric_value:
    | { type: 'boolean' }
    | { type: 'numerical'; lower_bound: number; upper_bound: number }
    | { type: 'categorical'; categories: string[] };
}): SuccessCriterion => {
  const value = metric.metric_value;
  const criterion: SuccessCriterion['criterion'] =
    value.type === 'boolean'
      ? { type: 'boolean', expected_value: true }
      : value.type === 'numerical'
        ? { type: 'numerical', verb: '>=', threshold: (value.lower_bound + value.upper_bound) / 2 }
        : { type: 'categorical', expected_values: value.categories.slice(0, 1) };
  return { name: quote(metric.name, 256), metric_id: metric.id, criterion };
};

/**
 * `POST /simulation/unit_test/from_conversation`: the new unit test, scenario and persona. The
 * caller must be able to read the conversation (else it is answered as missing) and to create
 * each record; the conversation must be finished (400).
 */
export const createUnitTestFromConversation = async (
  orgId: string,
  caller: Caller,
  input: UnitTestFromConversationRequest,
) => {
  const conversation = await requireAuthorizedConversation(
    orgId,
    input.conversation_id,
    (found) => requirePermission(caller, 'Conversation:GetConversation', conversationAttributes(found)),
    true,
  );
  if (!conversation.is_finished) {
    throw new BadRequestError(`Conversation ${conversation.id} is not finished; finish it before making a test of it.`);
  }
  const [messages, metrics, userModels] = await Promise.all([
    // Only what the caller may read is copied: the messages as the messages list shows them to
    // them, the user's models only when they may read them, the version set only when they may see it.
    listMessages(orgId, caller, conversation.id, {
      messageTypes: ['user-message', 'agent-message', 'external-event'],
      sortBy: [{ field: 'created_at', direction: 'asc' }],
      limit: maxMessages,
      continuationToken: 0,
    }),
    listMetrics(orgId, caller, { ids: input.metric_ids, creators: [], tags: [], limit: 50, continuationToken: 0 }),
    getUserModel(orgId, caller, conversation.user_id).then(
      (found) => found.user_models.map((model) => quote(model.content, 4000)).slice(0, 50),
      (error: unknown) => {
        if (error instanceof NotFoundError || error instanceof ForbiddenError) return [];
        throw error;
      },
    ),
  ]);
  const missing = input.metric_ids.filter((id) => !metrics.metrics.some((metric) => metric.id === id));
  if (missing.length > 0) throw new BadRequestError(`Metric ${missing.join(', ')} does not exist.`);

  const transcript: ReferenceMessage[] = messages.messages.map((message) => ({
    sender: message.message_type === 'agent-message' ? 'agent' : 'user',
    message_type: message.message_type,
    message: message.message,
    created_at: message.created_at,
  }));
  // The scenario and persona keep the conversation's protection: reading them needs what reading
  // what they were made of needed (the scenario is made of the messages, the persona of both).
  const source = derivedFromConversation(conversation, {
    messages: messages.messages,
    userModels: userModels.length > 0,
  });
  const versionSetName = conversationSeenBy(caller, conversation).version_set_info?.name ?? '';
  const said = transcript.filter((message) => message.sender === 'user').map((message) => message.message.trim());
  const derived = await derive(conversation, transcript, said);
  const suffix = newId().slice(-6);
  // Tag values are labels: the model's id may hold characters a tag value does not take.
  const label = {
    source: 'conversation',
    conversation: conversation.id,
    derived_by: derived.derivedBy === 'rule-based' ? 'rule-based' : 'model',
  };
  const by = derived.derivedBy;

  const { simulation_persona_id } = await createPersona(
    orgId,
    caller,
    {
      name: `User of conversation ${conversation.id} (${by}, ${suffix})`,
      role: 'user',
      tags: label,
      initial_version: {
        background: derived.background,
        preferred_language: null,
        timezone: null,
        user_models: userModels,
        nonsensitive_user_variables: {},
        sensitive_user_variables: {},
      },
    },
    source,
  );
  const { simulation_scenario_id } = await createScenario(
    orgId,
    caller,
    {
      name: `Conversation ${conversation.id} (${by}, ${suffix})`,
      tags: label,
      initial_version: {
        objective: derived.objective,
        instructions: derived.instructions,
        initial_message_type: transcript[0]?.sender === 'user' ? 'user-message' : 'skip',
        initial_external_event: null,
        conversation_starts_at: conversation.created_at,
      },
    },
    { referenceTranscript: transcript, from: { ...source, user_models: false } },
  );
  const { simulation_unit_test_id } = await createUnitTest(orgId, caller, {
    name: `Regression: conversation ${conversation.id} (${suffix})`,
    description: `Made from conversation ${conversation.id} (${by}); its messages are the scenario's reference transcript.`,
    service_id: conversation.service_id,
    // Empty when the caller may not see the version set: the test then names none until someone who may sets it.
    service_version_set_name: versionSetName,
    persona_id: simulation_persona_id,
    scenario_id: simulation_scenario_id,
    max_interactions: Math.min(100, Math.max(3, said.length + 2)),
    success_criterions: metrics.metrics.map(criterionFor),
    tags: label,
    tool_mocks: [],
    user_variables: {},
    initial_state: null,
  });
  return { simulation_unit_test_id, simulation_scenario_id, simulation_persona_id };
};

import { z } from 'zod';
import { postProcessingType } from '../../events/queue-messages';
import { turnTimings, turnUsage, versionInfo } from '../../events/stream-events';
import { maxPatternLength } from '../kernel/caller-patterns';
import { objectId, pagedResponse, timestamp, transferModes } from '../kernel/schemas';
import { whilePendingModes } from '../service/schemas';
import { toolMock } from '../tool/schemas';

const llmPreference = z.looseObject({ llm_name: z.string() });

export const versionSetInfo = z.object({
  name: z.string(),
  agent_version_info: versionInfo,
  service_hierarchical_state_machine_version_info: versionInfo,
  llm_model_preferences: z.record(z.string(), llmPreference),
});

/** Which simulated conversation of a run a conversation is (the reference's `simulation-conversation` source). */
export const runConversationSource = z.object({
  simulation_unit_test_set_run_id: z.string(),
  unit_test_id: z.string(),
  run_index: z.number().int(),
});

/**
 * What a simulated conversation belongs to: a run's conversation, a simulation session (stepped
 * by hand, forked), or a backtest's replay of a real conversation on a candidate version set.
 */
export const simulationSource = z.union([
  runConversationSource,
  z.object({ simulation_session_id: z.string() }),
  z.object({ simulation_backtest_id: z.string(), source_conversation_id: z.string() }),
]);
export type SimulationSource = z.infer<typeof simulationSource>;

/** The real conversation a simulated one copied its history from: what permission grants decide on as well. */
export const conversationScope = z.object({
  id: z.string(),
  user_id: z.string(),
  service_id: z.string(),
  tags: z.record(z.string(), z.string().nullable()),
});

/**
 * Who answers the user: the agent, the agent while an escalation waits for an operator
 * (`pending_operator`), or an operator who took the conversation over (`operator.ts`).
 */
export const controlModes = ['agent', 'pending_operator', 'operator'] as const;
export type ControlMode = (typeof controlModes)[number];

export const escalationTriggers = ['user', 'agent', 'operator'] as const;
export type EscalationTrigger = (typeof escalationTriggers)[number];

/** An escalation: why, who asked, when, and what happens until someone takes over (the service's setting then). */
export const escalationRecord = z.object({
  id: z.string(),
  reason: z.string(),
  triggered_by: z.enum(escalationTriggers),
  /** The user or operator who asked; null when the agent did. */
  requested_by_user_id: z.string().nullable(),
  requested_at: z.string(),
  /** Unclaimed by then, the conversation returns to the agent (found on its next turn). */
  expires_at: z.string(),
  while_pending: z.enum(whilePendingModes),
  holding_message: z.string().nullable(),
});
export type EscalationRecord = z.infer<typeof escalationRecord>;

/**
 * The agent's handover of a phone call to a person (its state's or dynamic behavior's `transfer`):
 * the conversation finished as transferred, and the call capability dials `phone_to` once the
 * agent's words are spoken (docs/handover.md).
 */
export const handoverRecord = z.object({
  phone_to: z.string(),
  mode: z.enum(transferModes),
  summary: z
    .string()
    .nullable()
    .describe("What a warm transfer tells the person (the state's words); null: made from the conversation."),
  requested_at: z.string(),
  interaction_id: z.string().describe('The turn that handed over.'),
  state_name: z.string().describe('The action state the agent engaged the user in.'),
});
export type HandoverRecord = z.infer<typeof handoverRecord>;

/** The operator holding a conversation. */
export const operatorHolder = z.object({ user_id: z.string(), name: z.string(), joined_at: z.string() });
export type OperatorHolder = z.infer<typeof operatorHolder>;

export const workingMemoryEntry = z.object({ content: z.string(), context: z.string() });

export const conversationRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  user_id: z.string(),
  service_id: z.string(),
  created_at: z.string(),
  is_finished: z.boolean(),
  finished_at: z.string().nullable(),
  is_analyzed: z.boolean(),
  completed_post_processings: z.array(z.string()),
  /** Post-processings whose webhook event was queued (so a redelivery queues only what is missing). */
  notified_post_processings: z.array(z.string()),
  final_message: z.string(),
  final_message_id: z.string().nullable(),
  num_messages: z.number().int(),
  tags: z.record(z.string(), z.string().nullable()),
  version_set_info: versionSetInfo,
  /** The action state the agent engaged the user in last; null until the opening interaction committed. */
  current_state: z.string().nullable(),
  last_interaction_id: z.string().nullable(),
  /** How the agent names the user in messages. */
  user_display_name: z.string(),
  /** A simulated conversation's place in its run: its tools run in `conversation-simulation` mode. */
  simulation: simulationSource.optional(),
  /** A simulated conversation's tool mocks (its unit test's): these tools are never run. */
  tool_mocks: z.array(toolMock).optional(),
  /**
   * A simulated conversation replaying a real one's tool calls: a call of the same tool with the same
   * input answers what that conversation recorded, any other is mocked; no tool runs.
   */
  tool_replay: z.object({ conversation_id: z.string() }).optional(),
  /**
   * A simulated conversation whose history was copied from a real one (message ids kept): whoever may
   * not read that conversation may not read this one (`conversationAttributes`).
   */
  derived_from: conversationScope.optional(),
  /** A simulated conversation's clock: it started at this time (the scenario's `conversation_starts_at`), not at `created_at`. */
  clock_starts_at: z.string().optional(),
  /** Operators (`operator.ts`): absent while the agent has it; the escalation stays while an operator holds it. */
  control: z.enum(controlModes).optional(),
  escalation: escalationRecord.optional(),
  operator: operatorHolder.optional(),
  /** How many times the conversation was escalated. */
  escalation_count: z.number().int().optional(),
  /** The agent handed the phone call to a person: the conversation finished as transferred. */
  handover: handoverRecord.optional(),
  /**
   * Notes for the agent not seen yet (guidance, the note of a handback), by id (ids sort by time):
   * the next agent turn adds them to its working memory and its commit removes them.
   */
  agent_notes: z.record(z.string(), workingMemoryEntry).optional(),
  /**
   * The organization's retention when the conversation began (days, absent: kept until deleted):
   * every item of its partition expires at `expires_at_epoch` (the table's TTL attribute), its
   * objects are tagged `retention-days={N}` for the bucket's lifecycle rule.
   */
  retention_days: z.number().int().optional(),
  expires_at_epoch: z.number().int().optional(),
});

/** What a conversation holds when it begins: unfinished, unanalysed, no message. */
export const newConversationState = {
  is_finished: false,
  finished_at: null,
  is_analyzed: false,
  completed_post_processings: [],
  notified_post_processings: [],
  final_message: '',
  final_message_id: null,
  num_messages: 0,
} satisfies Partial<ConversationRecord>;

export type VersionSetInfo = z.infer<typeof versionSetInfo>;

export type ConversationRecord = z.infer<typeof conversationRecord>;

export const toolCallLog = z.object({
  tool_name: z.string(),
  tool_id: z.string(),
  tool_version: z.string(),
  input: z.record(z.string(), z.unknown()),
  output: z.string().nullable(),
  duration: z.number(),
  /** The call was answered by a simulation unit test's mock; the tool did not run. */
  mocked: z.literal(true).optional(),
});

/** One move between states; `type` is the type of the state left. */
export const stateTransitionLog = z.object({
  type: z.enum(['action', 'decision', 'recall', 'annotation', 'reflection', 'tool-call', 'jumpback']),
  previous_state: z.string(),
  previous_service_hierarchical_state_machine_version_info: versionInfo,
  next_state: z.string(),
  next_service_hierarchical_state_machine_version_info: versionInfo,
  /** Action and decision states: the exit condition taken. */
  previous_state_exit_condition_description: z.string().optional(),
  /** Reflection states: the inner thought message written. */
  inner_thought_message_id: z.string().optional(),
  tool_call_logs: z.array(z.array(toolCallLog)),
});

export const reflectionEntry = z.object({ message_id: z.string(), content: z.string() });

export const interactionRecord = z.object({
  id: z.string(),
  conversation_id: z.string(),
  created_at: z.string(),
  user_message_id: z.string().nullable(),
  agent_message_id: z.string(),
  state_machine_version_info: versionInfo,
  current_state_name: z.string(),
  current_state_action: z.string(),
  current_state_objective: z.string(),
  state_transition_logs: z.array(stateTransitionLog),
  working_memory: z.array(workingMemoryEntry),
  reflections: z.array(reflectionEntry),
  triggered_dynamic_behavior_set_version_info: versionInfo.nullable(),
  /** The tool call rounds of the engage-user and the last select-next-action model calls (interactions before tools: none). */
  engage_user_tool_call_logs: z.array(z.array(toolCallLog)).default([]),
  select_next_action_tool_call_logs: z.array(z.array(toolCallLog)).default([]),
  conversation_completed: z.boolean(),
  /** Answered by this operator, not the agent (the agent's state, memory and behavior carry on unchanged). */
  operator_user_id: z.string().optional(),
  /** Interactions stored before turns were measured have neither. */
  timings: turnTimings.optional(),
  usage: turnUsage.optional(),
});

export type StateTransitionLog = z.infer<typeof stateTransitionLog>;

export type ToolCallLog = z.infer<typeof toolCallLog>;

export type WorkingMemoryEntry = z.infer<typeof workingMemoryEntry>;

export type ReflectionEntry = z.infer<typeof reflectionEntry>;

export type InteractionRecord = z.infer<typeof interactionRecord>;

export const messageTypes = ['user-message', 'agent-message', 'agent-inner-thought', 'external-event'] as const;

export const messageType = z.enum(messageTypes);

export type MessageType = z.infer<typeof messageType>;

export const messageRecord = z.object({
  id: z.string(),
  conversation_id: z.string(),
  interaction_id: z.string(),
  created_at: z.string(),
  sender: z.string(),
  message: z.string(),
  format: z.enum(['text', 'voice']),
  message_type: messageType,
  message_metadata: z.array(z.string()),
  /** An operator's message to the user: an `agent-message` whose `sender` is the operator's name. */
  operator_user_id: z.string().optional(),
});

export type MessageRecord = z.infer<typeof messageRecord>;

/** Request and response shapes of the conversation operations, named as the reference names them. */

const tagKey = z
  .string()
  .trim()
  .min(1)
  .regex(/^[\w\s]+$/, 'may contain only letters, digits, underscores and spaces');

export const createConversationQuery = z.object({
  response_format: z.enum(['text', 'voice']).describe('The format of the response that will be sent to the user.'),
  current_agent_action_type: z
    .string()
    .max(maxPatternLength)
    .default('^.*$')
    .describe(
      'A regex on the type of the agent actions to send; `^$` sends none. Run in linear time (RE2): backreferences and lookaround are refused with 422.',
    ),
  audio_format: z
    .enum(['mp3', 'pcm'])
    .nullish()
    .describe(
      'The audio format of a voice response: MP3, or base64 16 kHz mono 16-bit PCM. Required on create when response_format is voice; interact defaults to pcm.',
    ),
});

/** The reference's `UserMessageAudioConfig`: how a raw voice body is encoded. */
export const userMessageAudioConfig = z.discriminatedUnion('type', [
  z.object({ type: z.literal('mp3') }),
  z.object({
    type: z.literal('pcm'),
    frame_rate: z.number().int().min(4000).max(44100),
    n_channels: z.literal(1),
    sample_width: z.union([z.literal(2), z.literal(4)]),
  }),
]);

export type UserMessageAudioConfig = z.infer<typeof userMessageAudioConfig>;

/** A query parameter holding JSON (clients serialize the object, as the official SDKs do). */
const jsonQueryParameter = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((text, context): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        context.addIssue({ code: 'custom', message: 'must be a JSON object' });
        return z.NEVER;
      }
    })
    .pipe(schema);

export const createConversationRequest = z
  .object({
    service_id: objectId.describe('The identifier of the service to create a conversation in.'),
    service_version_set_name: z.string().min(1).default('release').describe('The version set of the service to use.'),
    initial_message: z
      .string()
      .trim()
      .min(1)
      .nullish()
      .describe('The initial user message or external event; without it the agent opens the conversation.'),
    initial_message_type: z
      .enum(['user-message', 'external-event'])
      .nullish()
      .describe('The type of `initial_message`; only with `initial_message`.'),
    tags: z
      .record(tagKey, z.string().trim().min(1).max(100).nullable())
      .default({})
      .refine((tags) => Object.keys(tags).length <= 20, 'a conversation has at most 20 tags')
      .describe('Tags of the conversation.'),
  })
  .refine((body) => !body.initial_message_type || body.initial_message, {
    message: 'initial_message_type can only be given with initial_message',
    path: ['initial_message_type'],
  });

export const interactQuery = createConversationQuery.extend({
  request_format: z.enum(['text', 'voice']).describe('The format in which the user message is delivered.'),
  request_audio_config: jsonQueryParameter(userMessageAudioConfig)
    .nullish()
    .describe(
      'The encoding of a raw voice body, as JSON: {"type":"mp3"} or {"type":"pcm","frame_rate":16000,"n_channels":1,"sample_width":2}. Without it the body is WAV or MP3, told by its content type or its first bytes.',
    ),
});

const onlyOnce = <T extends z.ZodType>(item: T, field: string) =>
  z
    .array(item)
    .length(1, `send exactly one ${field} field`)
    .transform((values) => values[0] as z.output<T>);

/** Multipart form fields: each arrives as the list of the values sent under its name. */
export const interactRequest = z
  .object({
    recorded_message: onlyOnce(z.string(), 'recorded_message').describe('The user message, UTF-8 text.'),
    initial_message_type: onlyOnce(z.enum(['user-message', 'external-event', 'skip']), 'initial_message_type')
      .optional()
      .describe('The type of the message; user-message when omitted.'),
    external_event_message_content: z
      .array(z.string().min(1))
      .default([])
      .describe('External event messages to insert before the message, oldest first.'),
    external_event_message_timestamp: z
      .array(z.iso.datetime({ offset: true }))
      .default([])
      .describe('The timestamps of the external event messages, in the same order.'),
  })
  .refine((body) => body.external_event_message_content.length === body.external_event_message_timestamp.length, {
    message: 'give one timestamp per external event message',
    path: ['external_event_message_timestamp'],
  });

/** Who has a conversation and why (`operator.ts`), as shown to callers with Conversation:Operate on it. */
export const operatorControlView = z.object({
  control: z
    .enum(controlModes)
    .describe('Who answers the user: the agent, the agent awaiting an operator, an operator.'),
  operator: operatorHolder.nullable().describe('The operator holding the conversation.'),
  escalation: escalationRecord
    .nullable()
    .describe('The escalation waiting for an operator, or that the holding operator answered.'),
  escalation_count: z.number().int().describe('How many times the conversation was escalated.'),
  handover: handoverRecord
    .nullable()
    .describe(
      'The agent handed the phone call to a person (its state or dynamic behavior said so): the conversation finished as transferred.',
    ),
});
export type OperatorControlView = z.infer<typeof operatorControlView>;

export const conversationInstance = z.object({
  id: z.string(),
  user_id: z.string(),
  created_at: timestamp,
  is_finished: z.boolean(),
  is_analyzed: z.boolean(),
  completed_post_processings: z.array(postProcessingType),
  final_message: z.string().describe('Empty without Conversation:GetMessage on the final message.'),
  service_id: z.string(),
  version_set_info: versionSetInfo.nullable().describe('Null without Service:GetVersionSet on the version set.'),
  num_messages: z.number().int(),
  tags: z.record(z.string(), z.string().nullable()),
  operator_control: operatorControlView
    .optional()
    .describe('A platform extension: only to callers with Conversation:Operate on the conversation.'),
});

export const messageInstance = z.object({
  id: z.string(),
  interaction_id: z.string(),
  created_at: timestamp,
  sender: z.string(),
  message: z.string(),
  format: z.enum(['text', 'voice']),
  message_type: messageType,
  message_metadata: z.array(z.string()).optional(),
  from_operator: z
    .literal(true)
    .optional()
    .describe("A platform extension: an operator's message (an agent-message whose sender is the operator)."),
  operator_user_id: z
    .string()
    .optional()
    .describe('The operator who sent it; only to callers with Conversation:Operate on the conversation.'),
});

/** Where a voice message's raw audio can be fetched (the Python SDK validates all three fields). */
export const messageSource = z.object({
  url: z.string().describe('A presigned URL of the audio.'),
  expires_at: timestamp.describe('When the URL stops working.'),
  content_type: z.enum(['audio/wav', 'audio/mpeg']),
});

export type MessageSource = z.infer<typeof messageSource>;

export const listConversationsResponse = pagedResponse({ conversations: z.array(conversationInstance) });

export const listMessagesResponse = pagedResponse({ messages: z.array(messageInstance) });

export const defaultMessageTypes = ['external-event', 'agent-message', 'user-message'] as const;

export const interactionInsightsResponse = z.object({
  current_state_name: z.string(),
  current_state_action: z.string(),
  current_state_objective: z.string(),
  state_transition_logs: z.array(stateTransitionLog),
  working_memory: z.array(workingMemoryEntry),
  reflections: z.array(z.string()),
  triggered_dynamic_behavior_set_version_info: versionInfo.nullable(),
  select_next_action_tool_call_logs: z.array(z.array(toolCallLog)),
  engage_user_tool_call_logs: z.array(z.array(toolCallLog)),
  timings: turnTimings.optional().describe('Where the turn spent its time, as its interaction-complete event said.'),
  usage: turnUsage.optional().describe("The turn's tokens and cost, as its interaction-complete event said."),
});

const defaultRecommendationContext = `
PERSONA:
Name: User
Background: A typical person seeking this service.
---
SCENARIO:
Name: Complete Service
Objective: Successfully complete the service interaction.
Instructions: Engage naturally with the agent to achieve the service objective.
`;

export const recommendResponsesRequest = z
  .object({
    context: z.string().trim().min(1).default(defaultRecommendationContext).describe('Persona and scenario text.'),
  })
  .default({ context: defaultRecommendationContext });

export const recommendResponsesResponse = z.object({ recommended_responses: z.array(z.string()) });

export const conversationStarterRequest = z
  .object({
    service_id: objectId,
    service_version_set_name: z.string().min(1).default('release'),
    facets: z.array(z.string().trim().min(1)).min(1),
    min_count: z.number().int().gt(0).lte(10),
    max_count: z.number().int().gt(0).lte(10),
    generation_instructions: z.string().trim().min(1),
  })
  .refine((body) => body.min_count <= body.max_count, {
    message: 'min_count must not exceed max_count',
    path: ['min_count'],
  });

export const conversationStarterResponse = z.object({
  prompts: z.array(z.object({ prompt: z.string(), facets: z.array(z.string()) })),
});

export const modifyTagsRequest = z.object({
  updates: z.record(tagKey, tagKey.nullable()).default({}).describe('Tags to add or change.'),
  deletes: z
    .array(z.string().trim().min(1))
    .default([])
    .refine((keys) => new Set(keys).size === keys.length, 'tags to delete must be unique')
    .describe('Tags to remove.'),
});

export type ConversationInstance = z.infer<typeof conversationInstance>;
export type MessageInstance = z.infer<typeof messageInstance>;
export type InteractionInsights = z.infer<typeof interactionInsightsResponse>;

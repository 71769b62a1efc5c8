import { z } from 'zod';

/**
 * The newline-delimited JSON events of the conversation stream (create conversation and
 * interact). Field names and shapes follow the reference's `*Event` schemas so that clients
 * written against the reference parse them unchanged. `end-session` is not described by the
 * reference; its shape is ours (see README.md).
 */

/** `[record id, version number]`, as the reference encodes version infos. */
export const versionInfo = z.tuple([z.string(), z.number().int()]);

export const conversationCreatedEvent = z.object({
  type: z.literal('conversation-created'),
  conversation_id: z.string().describe('The identifier of the newly created conversation.'),
});

export const userMessageAvailableEvent = z.object({
  type: z.literal('user-message-available'),
  message_id: z.string().describe('The identifier of the user message.'),
  user_message: z.string().describe('The text of the user message.'),
});

const actionSelected = z.object({
  type: z.literal('navigate-state-machine-action-state-action-selected'),
  action: z.string(),
});

const decisionStarted = z.object({ type: z.literal('navigate-state-machine-decision-state-decision-started') });

const exitConditionSelected = z.object({
  type: z.literal('navigate-state-machine-exit-condition-selected'),
  exit_condition: z.string(),
  next_state_state_machine_version_info: versionInfo,
  next_state_name: z.string(),
});

const stateTransitioned = z.object({
  type: z.literal('navigate-state-machine-state-transitioned'),
  prev_state: z.string(),
  prev_state_state_machine_version_info: versionInfo,
  next_state: z.string(),
  next_state_state_machine_version_info: versionInfo,
});

const annotationRetrieved = z.object({
  type: z.literal('navigate-state-machine-annotation-state-annotation-retrieved'),
  annotation: z.string(),
});

const reflectionPromptRetrieved = z.object({
  type: z.literal('navigate-state-machine-reflection-state-prompt-retrieved'),
  prompt: z.string(),
});

const reflectionGenerated = z.object({
  type: z.literal('navigate-state-machine-reflection-state-reflection-generated'),
  reflection: z.string(),
});

const recallStaticQueriesRetrieved = z.object({
  type: z.literal('navigate-state-machine-recall-state-static-queries-retrieved'),
  static_queries: z.array(z.string()),
});

const recallDynamicQueriesGenerated = z.object({
  type: z.literal('navigate-state-machine-recall-state-dynamic-queries-generated'),
  dynamic_queries: z.array(z.string()),
  requested_information: z.string(),
});

const recallActiveMemoryRetrieved = z.object({
  type: z.literal('navigate-state-machine-recall-state-active-memory-retrieved'),
  queries_and_responses: z.array(z.tuple([z.string(), z.string()])),
});

const dynamicBehaviorVectorGenerated = z.object({ type: z.literal('select-dynamic-behavior-vector-generated') });

const dynamicBehaviorRelevanceRetrieved = z.object({
  type: z.literal('select-dynamic-behavior-relevance-retrieval-completed'),
});

const dynamicBehaviorSelected = z.object({
  type: z.literal('select-dynamic-behavior-completed'),
  selected_dynamic_behavior_set_version_info: versionInfo.nullable(),
  previous_selected_dynamic_behavior_set_version_info: versionInfo.nullable(),
});

const dynamicBehaviorOverride = {
  overriding_instructions: z
    .boolean()
    .describe("Whether the behavior replaced the state's guidelines and constraints."),
  overriding_tool_candidates: z.boolean().describe("Whether the behavior replaced the state's tool call specs."),
};

const engageUserDynamicBehaviorOverride = z.object({
  type: z.literal('engage-user-dynamic-behavior-override'),
  ...dynamicBehaviorOverride,
});

const navigateDynamicBehaviorOverride = z.object({
  type: z.literal('navigate-state-machine-dynamic-behavior-override'),
  ...dynamicBehaviorOverride,
});

const toolCallStarted = z.object({
  type: z.literal('tool-call-started'),
  tool_round_index: z.number().int(),
  tool_id: z.string(),
  tool_version: z.string(),
  input_params: z.record(z.string(), z.unknown()),
});

const toolCallEnded = z.object({
  type: z.literal('tool-call-ended'),
  tool_round_index: z.number().int(),
  tool_id: z.string(),
  tool_version: z.string(),
  input_parameters: z.record(z.string(), z.unknown()),
  result: z.string(),
  duration: z.number().describe('Seconds.'),
  mocked: z.literal(true).optional().describe("Answered by a simulation unit test's mock; the tool did not run."),
});

const actionTooLong = z.object({
  type: z.literal('action-too-long'),
  filler: z
    .string()
    .describe(
      'Something to play while the action runs: base64 16 kHz mono 16-bit WAV in a voice response, else the filler text.',
    ),
  previously_started_event: toolCallStarted.describe('The started action that is taking long.'),
});

/** The steps of the agent's thinking that this platform reports (a subset of the reference's `Action`). */
export const agentAction = z.discriminatedUnion('type', [
  actionSelected,
  decisionStarted,
  exitConditionSelected,
  stateTransitioned,
  annotationRetrieved,
  reflectionPromptRetrieved,
  reflectionGenerated,
  recallStaticQueriesRetrieved,
  recallDynamicQueriesGenerated,
  recallActiveMemoryRetrieved,
  dynamicBehaviorVectorGenerated,
  dynamicBehaviorRelevanceRetrieved,
  dynamicBehaviorSelected,
  engageUserDynamicBehaviorOverride,
  navigateDynamicBehaviorOverride,
  toolCallStarted,
  toolCallEnded,
  actionTooLong,
]);

export const currentAgentActionEvent = z.object({
  type: z.literal('current-agent-action'),
  action: agentAction.describe('The action the agent is performing right now.'),
});

export const newMessageEvent = z.object({
  type: z.literal('new-message'),
  message: z.string().describe('One piece of the agent message, in order.'),
  transcript_alignment: z
    .array(z.tuple([z.number().int(), z.string()]))
    .nullable()
    .describe('Alignment of an audio piece with its transcript; null for text.'),
  stop: z.boolean().describe('Whether this is the last piece of the agent message.'),
  sequence_number: z.number().int().describe('The sequence number of this piece in the agent message.'),
  message_id: z.string().describe('The identifier of the agent message.'),
});

const milliseconds = z.number().int().nonnegative();

/** Where a turn's time went, in milliseconds (see README.md). */
export const turnTimings = z.object({
  total_ms: milliseconds.describe(
    'From the request to the turn being ready to store: recognition, the models, tools and synthesis included.',
  ),
  speech_recognition_ms: milliseconds.optional().describe("Voice input only: transcribing the user's audio."),
  model_first_token_ms: milliseconds
    .nullable()
    .describe("From asking the model for the agent's message to its first piece; null if it wrote none."),
  first_token_ms: milliseconds
    .optional()
    .describe(
      "From the request to the first piece of the agent's message (recognition and earlier model calls included); absent if it wrote none.",
    ),
  first_clause_ms: milliseconds
    .optional()
    .describe("Voice output only: from the request to the agent's first clause being ready to speak."),
  model_total_ms: milliseconds.describe(
    'Every model call of the turn, added up: the time spent waiting on the models, not on what read their answers.',
  ),
  tool_calls: z
    .array(
      z.object({
        name: z.string(),
        ms: milliseconds,
        at_ms: milliseconds.optional().describe('When the call started, from the request.'),
      }),
    )
    .describe('Each tool call of the turn, in order, with its name.'),
  speech_synthesis_ms: milliseconds
    .optional()
    .describe("Voice output only: speaking the agent's message (and fillers)."),
  first_audio_ms: milliseconds
    .optional()
    .describe(
      "Voice output only: from the request to the agent's first audio piece being sent (recognition, the model's first clause and its synthesis included).",
    ),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional()
    .describe(
      "The turn's OpenTelemetry trace (W3C trace id), where the deployment exports traces and sampled this turn: its spans time each model call, tool call and speech stage (docs/observability.md).",
    ),
});

/** The tokens of one model call and, when priced, its cost. */
export const modelCallUsage = z.object({
  model: z.string().describe("The provider's model id."),
  purpose: z.string().describe('What the call was for: engage_user, select_next_action, generate_reflection, ...'),
  input_tokens: z.number().int().nonnegative().nullable().describe('Null when the provider reported no token use.'),
  output_tokens: z.number().int().nonnegative().nullable(),
  tokens_estimated: z
    .boolean()
    .describe('The tokens are estimated from the text (the built-in model counts none), not reported by a provider.'),
  cost_usd: z
    .number()
    .nonnegative()
    .nullable()
    .describe(
      "Tokens times the model's configured price (LLM_PRICES); 0 for the built-in model; null without a price.",
    ),
});

/** A turn's token use, call by call and in total. */
export const turnUsage = z.object({
  model_calls: z.array(modelCallUsage),
  input_tokens: z.number().int().nonnegative().describe('Of the calls whose tokens are known.'),
  output_tokens: z.number().int().nonnegative(),
  cost_usd: z.number().nonnegative().nullable().describe('Null when any call has no cost.'),
});

export const interactionCompleteEvent = z.object({
  type: z.literal('interaction-complete'),
  message_id: z.string().describe('The identifier of the agent message in this interaction.'),
  interaction_id: z.string().describe('The identifier of this interaction.'),
  full_message: z.string().describe('The whole agent message.'),
  conversation_completed: z.boolean().describe('Whether the conversation is auto-completed after this interaction.'),
  timings: turnTimings.optional().describe('Where the turn spent its time; also in the interaction insights.'),
  usage: turnUsage.optional().describe("The turn's tokens and cost; also in the interaction insights."),
});

export const errorEvent = z.object({
  type: z.literal('error'),
  http_error_code: z.number().int().describe('The HTTP status code of the error.'),
  error_description: z.string().describe('A description of the error.'),
});

/** Any event of a conversation's stream as the engine and the turn make it, before it is given its id. */
export const streamEvent = z.discriminatedUnion('type', [
  conversationCreatedEvent,
  userMessageAvailableEvent,
  currentAgentActionEvent,
  newMessageEvent,
  interactionCompleteEvent,
  errorEvent,
]);

/**
 * The id every streamed event carries (`event_id`): `{interaction_id}-{n}`, `n` counting the
 * interaction's events from 0, six digits. Ids sort in stream order within a conversation, and an
 * interaction's ids have no gaps. The reference's clients ignore the extra field.
 */
export const eventId = z
  .string()
  .regex(/^[0-9a-f]{24}-\d{6}$/, 'An event id is `{interaction_id}-{n}`, n six digits.')
  .describe('The id of this event in its conversation: `{interaction_id}-{n}`, in stream order.');

const identified = { event_id: eventId };
const identifiedConversationCreated = conversationCreatedEvent.extend(identified);
const identifiedUserMessageAvailable = userMessageAvailableEvent.extend(identified);
const identifiedCurrentAgentAction = currentAgentActionEvent.extend(identified);
const identifiedNewMessage = newMessageEvent.extend(identified);
const identifiedInteractionComplete = interactionCompleteEvent.extend(identified);
const identifiedError = errorEvent.extend(identified);

/** Every event of `POST /conversation/` (create). */
export const createConversationEvent = z.discriminatedUnion('type', [
  identifiedConversationCreated,
  identifiedCurrentAgentAction,
  identifiedNewMessage,
  identifiedInteractionComplete,
  identifiedError,
]);

/** Every event of `POST /conversation/{conversation_id}/interact`. */
export const interactEvent = z.discriminatedUnion('type', [
  identifiedUserMessageAvailable,
  identifiedCurrentAgentAction,
  identifiedNewMessage,
  identifiedInteractionComplete,
  identifiedError,
]);

/** Every event a conversation's stream can carry, as replayed by `GET /conversation/{conversation_id}/events`. */
export const conversationEvent = z.discriminatedUnion('type', [
  identifiedConversationCreated,
  identifiedUserMessageAvailable,
  identifiedCurrentAgentAction,
  identifiedNewMessage,
  identifiedInteractionComplete,
  identifiedError,
]);

export type VersionInfo = z.infer<typeof versionInfo>;
export type AgentAction = z.infer<typeof agentAction>;
export type ConversationCreatedEvent = z.infer<typeof conversationCreatedEvent>;
export type UserMessageAvailableEvent = z.infer<typeof userMessageAvailableEvent>;
export type CurrentAgentActionEvent = z.infer<typeof currentAgentActionEvent>;
export type NewMessageEvent = z.infer<typeof newMessageEvent>;
export type InteractionCompleteEvent = z.infer<typeof interactionCompleteEvent>;
export type TurnTimings = z.infer<typeof turnTimings>;
export type TurnUsage = z.infer<typeof turnUsage>;
export type ModelCallUsage = z.infer<typeof modelCallUsage>;
export type ErrorEvent = z.infer<typeof errorEvent>;
/** Any event of a conversation's stream, before it is given its id. */
export type StreamEvent = z.infer<typeof streamEvent>;
/** A streamed event with its `event_id`. */
export type ConversationEvent = z.infer<typeof conversationEvent>;
export type CreateConversationEvent = z.infer<typeof createConversationEvent>;
export type InteractEvent = z.infer<typeof interactEvent>;

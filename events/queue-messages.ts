import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * Messages between parts of the platform through SQS. Producers build them with these
 * schemas' types and consumers parse them on receipt; a message that does not parse is a
 * bug, not a retryable failure.
 */

/** The post-conversation analyses, named as the reference's `PostAnalysisType`. */
export const postProcessingType = z.enum(['extract-memories', 'generate-user-models', 'compute-metrics']);

/**
 * Analysis queue (`ANALYSIS_QUEUE_URL`): a conversation finished and is to be analysed.
 * Sent by the finish operation and by an interaction that ended the session. Delivery is at
 * least once; the worker is idempotent per (conversation, post-processing type).
 */
export const conversationFinishedMessage = z.object({
  type: z.literal('conversation-finished'),
  org_id: z.string(),
  conversation_id: z.string(),
  user_id: z.string(),
  service_id: z.string(),
  finished_at: z.string().describe('ISO 8601 time the conversation was marked finished.'),
  trigger: z.enum(['finish-conversation', 'end-session']).describe('What finished the conversation.'),
});

export const analysisQueueMessage = z.discriminatedUnion('type', [conversationFinishedMessage]);

/**
 * Webhook queue (`WEBHOOK_QUEUE_URL`): an event for the organization's webhook destinations.
 * The message is the webhook payload itself (`webhook_content` of the delivery); `type` is
 * matched against each destination's `accepted_types` and `accepted_extension_types`. `id` is
 * deterministic, so a duplicate
 * send (at-least-once delivery) carries the same id and the webhook worker can drop it.
 */
export const conversationPostProcessingCompleteMessage = z.object({
  type: z.literal('conversation-post-processing-complete'),
  id: z.string().regex(/^[a-f0-9]{24}$/),
  org_id: z.string(),
  conversation_id: z.string(),
  user_id: z.string(),
  service_id: z.string(),
  post_processing_type: postProcessingType,
  completed_at: z.string().describe('ISO 8601 time the post-processing completed.'),
  is_simulated: z
    .literal(true)
    .optional()
    .describe('Present on events of simulated conversations, which reach only destinations that include them.'),
});

/**
 * `api-key-expiration-soon`: an API key of the organization expires within 7 days. Sent once
 * per key by the daily schedule; `id` derives from the key, so a repeated run sends the same id.
 */
export const apiKeyExpirationSoonMessage = z.object({
  type: z.literal('api-key-expiration-soon'),
  id: z.string().regex(/^[a-f0-9]{24}$/),
  org_id: z.string(),
  api_key_id: z.string(),
  api_key_name: z.string().nullable(),
  expires_at: z.string().describe('ISO 8601 time the key stops working.'),
});

/** The agent-framework resources whose changes are announced. */
export const frameworkResourceType = z.enum(['agent', 'state-machine', 'service', 'tool', 'dynamic-behavior-set']);

/** `agent-framework-resource-updated`: an agent, state machine, service, tool or dynamic behavior set changed. */
export const agentFrameworkResourceUpdatedMessage = z.object({
  type: z.literal('agent-framework-resource-updated'),
  id: z.string().regex(/^[a-f0-9]{24}$/),
  org_id: z.string(),
  resource_type: frameworkResourceType,
  resource_id: z.string(),
  change: z.enum(['created', 'updated', 'deleted']).describe('`updated` covers new versions and changed settings.'),
  version: z.number().int().nullable().describe('The version the change created, for versioned resources.'),
  updated_at: z.string().describe('ISO 8601 time of the change.'),
});

/**
 * `version-set-promotion-completed`: a promotion of a service's version set ended. `id` derives
 * from the promotion, so a repeated announcement carries the same id.
 */
export const versionSetPromotionCompletedMessage = z.object({
  type: z.literal('version-set-promotion-completed'),
  id: z.string().regex(/^[a-f0-9]{24}$/),
  org_id: z.string(),
  service_id: z.string(),
  version_set_name: z.string().describe('The version set promoted into.'),
  promotion_id: z.string(),
  from: z.string().describe('The version set whose versions were promoted.'),
  status: z.enum(['promoted', 'rejected', 'failed']),
  reason: z.string().nullable().describe('Why it was rejected or failed.'),
  simulation_unit_test_set_run_id: z.string().nullable().describe("The gate's simulation run, if any."),
  pass_rate: z.number().nullable().describe("The gate run's pass rate, if it completed."),
  revision: z.number().int().nullable().describe("The version set's new revision, when promoted."),
  completed_at: z.string().describe('ISO 8601 time the promotion ended.'),
});

/** Who escalated a conversation: its user, the agent (a state or a dynamic behavior), or an operator. */
export const escalationTrigger = z.enum(['user', 'agent', 'operator']);

/** How an operator's stretch ended, as they said when handing back. */
export const handbackOutcome = z.enum(['resolved', 'unresolved', 'needs-follow-up']);

/**
 * The conversation an operator event is about. These events go only to destinations that name
 * them in `accepted_extension_types` (the vendor SDKs' webhook parsers throw on types they do not know), and
 * those of simulated conversations only to destinations that include them. `id` is the id of the
 * operator action recorded in the conversation's audit trail, so a repeated send is dropped.
 */
const operatorEventScope = {
  id: z.string().regex(/^[a-f0-9]{24}$/),
  org_id: z.string(),
  conversation_id: z.string(),
  user_id: z.string().describe("The conversation's user."),
  service_id: z.string(),
  is_simulated: z
    .literal(true)
    .optional()
    .describe('Present on events of simulated conversations, which reach only destinations that include them.'),
};

/** `conversation-escalation-requested`: a conversation awaits an operator. */
export const conversationEscalationRequestedMessage = z.object({
  type: z.literal('conversation-escalation-requested'),
  ...operatorEventScope,
  escalation_id: z.string(),
  reason: z.string(),
  triggered_by: escalationTrigger,
  requested_by_user_id: z.string().nullable().describe('The user or operator who asked; null for the agent.'),
  requested_at: z.string().describe('ISO 8601.'),
  expires_at: z.string().describe('ISO 8601: unclaimed by then, the conversation returns to the agent.'),
});

/** `conversation-operator-joined`: an operator took a conversation over. */
export const conversationOperatorJoinedMessage = z.object({
  type: z.literal('conversation-operator-joined'),
  ...operatorEventScope,
  operator_user_id: z.string(),
  operator_name: z.string(),
  joined_at: z.string().describe('ISO 8601.'),
  escalation_id: z.string().nullable().describe('The escalation answered; null when the operator stepped in unasked.'),
  waited_ms: z.number().int().nullable().describe('How long the escalation waited; null without one.'),
});

/** `conversation-operator-left`: an operator handed a conversation back to the agent. */
export const conversationOperatorLeftMessage = z.object({
  type: z.literal('conversation-operator-left'),
  ...operatorEventScope,
  operator_user_id: z.string().describe('The operator who held it.'),
  operator_name: z.string(),
  handed_back_by_user_id: z.string().describe('Who handed it back: the holder, or another operator releasing it.'),
  outcome: handbackOutcome,
  joined_at: z.string().describe('ISO 8601.'),
  left_at: z.string().describe('ISO 8601.'),
  held_ms: z.number().int(),
});

/** Every webhook payload: the body a destination receives. */
export const webhookEvent = z.discriminatedUnion('type', [
  conversationPostProcessingCompleteMessage,
  apiKeyExpirationSoonMessage,
  agentFrameworkResourceUpdatedMessage,
  versionSetPromotionCompletedMessage,
  conversationEscalationRequestedMessage,
  conversationOperatorJoinedMessage,
  conversationOperatorLeftMessage,
]);

/**
 * The webhook worker's own message: make attempt `attempt` (from 1) of a delivery. Sent by the
 * fan-out of an event (attempt 1) and after a failed attempt, with the backoff as the message's
 * `DelaySeconds`. The delivery record, not the message, says what was done.
 */
export const webhookDeliveryAttemptMessage = z.object({
  type: z.literal('webhook-delivery-attempt'),
  org_id: z.string(),
  destination_id: z.string(),
  delivery_id: z.string(),
  attempt: z.number().int().min(1),
});

export const webhookQueueMessage = z.discriminatedUnion('type', [
  ...webhookEvent.options,
  webhookDeliveryAttemptMessage,
]);

/**
 * Tool-build queue (`TOOL_BUILD_QUEUE_URL`): a tool version was published and built; the builder
 * deploys it to the tool runtime. Idempotent per version: a deployed version is not redeployed.
 */
export const toolVersionPublishedMessage = z.object({
  type: z.literal('tool-version-published'),
  org_id: z.string(),
  tool_id: z.string(),
  version: z.string().regex(/^\d+\.\d+\.\d+$/),
});

/** How a CodeBuild build can end. */
export const endedToolBuildStatus = z.enum(['SUCCEEDED', 'FAILED', 'FAULT', 'STOPPED', 'TIMED_OUT']);

/** The build's environment variables that name what it builds (`codebuild-builder.ts` sets them). */
const buildVariable = z.object({ name: z.string(), value: z.string() });

/**
 * Tool-build queue, in AWS: CodeBuild's own "Build State Change" event of a tool build that
 * ended, as EventBridge delivers it (rule in `infra/constructs/tool-runtime.ts`). Parsed into
 * what the builder needs; the organization, tool and artifact come from the variables the build
 * was started with. Idempotent per build: the version records which build it waits for.
 */
export const toolBuildStateChangeMessage = z
  .object({
    source: z.literal('aws.codebuild'),
    'detail-type': z.literal('CodeBuild Build State Change'),
    detail: z.object({
      'build-status': endedToolBuildStatus,
      'build-id': z.string(),
      'additional-information': z.object({
        environment: z.object({ 'environment-variables': z.array(buildVariable) }),
        logs: z.object({ 'group-name': z.string().optional(), 'stream-name': z.string().optional() }).optional(),
      }),
    }),
  })
  .transform((event, context) => {
    const information = event.detail['additional-information'];
    const variables = new Map(information.environment['environment-variables'].map((item) => [item.name, item.value]));
    const orgId = variables.get('TOOL_ORG_ID');
    const toolId = variables.get('TOOL_ID');
    const artifactKey = variables.get('TOOL_ARTIFACT_KEY');
    if (!orgId || !toolId || !artifactKey) {
      context.addIssue({ code: 'custom', message: 'the build does not name its organization, tool and artifact' });
      return z.NEVER;
    }
    const group = information.logs?.['group-name'];
    const stream = information.logs?.['stream-name'];
    return {
      type: 'tool-build-state-changed' as const,
      org_id: orgId,
      tool_id: toolId,
      artifact_key: artifactKey,
      build_id: event.detail['build-id'],
      build_status: event.detail['build-status'],
      logs: group && stream ? { group, stream } : null,
    };
  });

export const toolBuildQueueMessage = z.union([toolVersionPublishedMessage, toolBuildStateChangeMessage]);

/**
 * Simulation queue (`SIMULATION_QUEUE_URL`): simulate one conversation of a run, the `run_index`th
 * run of a unit test. Sent once per (unit test, run index) when the run is created, and again as a
 * continuation when a conversation needs more turns than one invocation takes; `checkpoint` then
 * names the conversation so far (the run conversation record in the table is what counts). A
 * conversation's outcome is recorded once, so a redelivered message counts nothing twice.
 */
export const simulateConversationMessage = z.object({
  type: z.literal('simulate-conversation'),
  org_id: z.string(),
  simulation_unit_test_set_run_id: z.string(),
  unit_test_id: z.string(),
  run_index: z.number().int().min(0),
  checkpoint: z
    .object({ conversation_id: z.string(), interactions: z.number().int().min(0) })
    .nullable()
    .describe('Null for the first step; where the previous step left the conversation otherwise.'),
});

/**
 * Simulation queue: look at a running version set promotion again. Sent when the promotion starts
 * its gate run, then again with a delay while the run is in progress; the promotion record, not
 * the message, says what is done, and it ends once (a conditional write).
 */
export const advancePromotionMessage = z.object({
  type: z.literal('advance-version-set-promotion'),
  org_id: z.string(),
  promotion_id: z.string(),
});

/**
 * Simulation queue: replay one real conversation of a backtest on its candidate version set, a
 * step of turns at a time. The replay's own conversation is the checkpoint (how many of the
 * source's interactions it has replayed); its outcome is recorded once, with the backtest's aggregate.
 */
export const replayBacktestConversationMessage = z.object({
  type: z.literal('replay-backtest-conversation'),
  org_id: z.string(),
  simulation_backtest_id: z.string(),
  conversation_id: z.string().describe('The source conversation.'),
});

export const simulationQueueMessage = z.discriminatedUnion('type', [
  simulateConversationMessage,
  advancePromotionMessage,
  replayBacktestConversationMessage,
]);

/** The id of a post-processing-complete event: the same for every send of the same completion. */
export const postProcessingEventId = (orgId: string, conversationId: string, type: PostProcessingType): string =>
  createHash('sha256').update(`${orgId}\u0000${conversationId}\u0000${type}`).digest('hex').slice(0, 24);

export type PostProcessingType = z.infer<typeof postProcessingType>;
export type ConversationFinishedMessage = z.infer<typeof conversationFinishedMessage>;
export type AnalysisQueueMessage = z.infer<typeof analysisQueueMessage>;
export type ConversationPostProcessingCompleteMessage = z.infer<typeof conversationPostProcessingCompleteMessage>;
export type WebhookQueueMessage = z.infer<typeof webhookQueueMessage>;
export type WebhookEvent = z.infer<typeof webhookEvent>;
export type WebhookDeliveryAttemptMessage = z.infer<typeof webhookDeliveryAttemptMessage>;
export type FrameworkResourceType = z.infer<typeof frameworkResourceType>;
export type ToolBuildQueueMessage = z.input<typeof toolBuildQueueMessage>;
export type ToolBuildStateChange = z.output<typeof toolBuildStateChangeMessage>;
export type ToolVersionPublishedMessage = z.infer<typeof toolVersionPublishedMessage>;
export type SimulationQueueMessage = z.infer<typeof simulationQueueMessage>;
export type SimulateConversationMessage = z.infer<typeof simulateConversationMessage>;
export type AdvancePromotionMessage = z.infer<typeof advancePromotionMessage>;
export type ReplayBacktestConversationMessage = z.infer<typeof replayBacktestConversationMessage>;
export type VersionSetPromotionCompletedMessage = z.infer<typeof versionSetPromotionCompletedMessage>;

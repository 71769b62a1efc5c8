import type {
  AnalysisQueueMessage,
  SimulationQueueMessage,
  ToolBuildQueueMessage,
  WebhookQueueMessage,
} from './queue-messages';
import type { CreateConversationEvent, InteractEvent } from './stream-events';

/**
 * One example of every contract, for tests of producers and consumers. Ids are fixed so
 * snapshots stay stable.
 */
export const sampleIds = {
  org: 'acme',
  user: '000000000000000000000001',
  service: '000000000000000000000002',
  conversation: '000000000000000000000003',
  interaction: '000000000000000000000004',
  userMessage: '000000000000000000000005',
  agentMessage: '000000000000000000000006',
  stateMachine: '000000000000000000000007',
  nextInteraction: '000000000000000000000008',
} as const;

/** A create-conversation stream, in order: created, agent actions, pieces, complete. */
export const sampleCreateConversationStream: CreateConversationEvent[] = [
  {
    event_id: `${sampleIds.interaction}-000000`,
    type: 'conversation-created',
    conversation_id: sampleIds.conversation,
  },
  {
    event_id: `${sampleIds.interaction}-000001`,
    type: 'current-agent-action',
    action: { type: 'navigate-state-machine-action-state-action-selected', action: 'Greet the user.' },
  },
  {
    event_id: `${sampleIds.interaction}-000002`,
    type: 'new-message',
    message: 'Hello, ',
    transcript_alignment: null,
    stop: false,
    sequence_number: 0,
    message_id: sampleIds.agentMessage,
  },
  {
    event_id: `${sampleIds.interaction}-000003`,
    type: 'new-message',
    message: 'how can I help?',
    transcript_alignment: null,
    stop: false,
    sequence_number: 1,
    message_id: sampleIds.agentMessage,
  },
  {
    event_id: `${sampleIds.interaction}-000004`,
    type: 'new-message',
    message: '',
    transcript_alignment: null,
    stop: true,
    sequence_number: 2,
    message_id: sampleIds.agentMessage,
  },
  {
    event_id: `${sampleIds.interaction}-000005`,
    type: 'interaction-complete',
    message_id: sampleIds.agentMessage,
    interaction_id: sampleIds.interaction,
    full_message: 'Hello, how can I help?',
    conversation_completed: false,
  },
];

/** An interaction that reaches the terminal state and ends the session. */
export const sampleInteractStream: InteractEvent[] = [
  {
    event_id: `${sampleIds.nextInteraction}-000000`,
    type: 'user-message-available',
    message_id: sampleIds.userMessage,
    user_message: 'Goodbye!',
  },
  {
    event_id: `${sampleIds.nextInteraction}-000001`,
    type: 'current-agent-action',
    action: { type: 'navigate-state-machine-decision-state-decision-started' },
  },
  {
    event_id: `${sampleIds.nextInteraction}-000002`,
    type: 'current-agent-action',
    action: {
      type: 'navigate-state-machine-exit-condition-selected',
      exit_condition: 'The user says goodbye',
      next_state_state_machine_version_info: [sampleIds.stateMachine, 1],
      next_state_name: 'goodbye',
    },
  },
  {
    event_id: `${sampleIds.nextInteraction}-000003`,
    type: 'current-agent-action',
    action: {
      type: 'navigate-state-machine-state-transitioned',
      prev_state: 'triage',
      prev_state_state_machine_version_info: [sampleIds.stateMachine, 1],
      next_state: 'goodbye',
      next_state_state_machine_version_info: [sampleIds.stateMachine, 1],
    },
  },
  {
    event_id: `${sampleIds.nextInteraction}-000004`,
    type: 'new-message',
    message: 'Goodbye!',
    transcript_alignment: null,
    stop: false,
    sequence_number: 0,
    message_id: sampleIds.agentMessage,
  },
  {
    event_id: `${sampleIds.nextInteraction}-000005`,
    type: 'new-message',
    message: '',
    transcript_alignment: null,
    stop: true,
    sequence_number: 1,
    message_id: sampleIds.agentMessage,
  },
  {
    event_id: `${sampleIds.nextInteraction}-000006`,
    type: 'interaction-complete',
    message_id: sampleIds.agentMessage,
    interaction_id: sampleIds.nextInteraction,
    full_message: 'Goodbye!',
    conversation_completed: true,
  },
];

export const sampleErrorEvent: InteractEvent = {
  event_id: `${sampleIds.nextInteraction}-000007`,
  type: 'error',
  http_error_code: 501,
  error_description: "State 'lookup' is a tool-call state; tool-call states are not supported yet.",
};

export const sampleAnalysisMessage: AnalysisQueueMessage = {
  type: 'conversation-finished',
  org_id: sampleIds.org,
  conversation_id: sampleIds.conversation,
  user_id: sampleIds.user,
  service_id: sampleIds.service,
  finished_at: '2025-01-01T12:00:00.000Z',
  trigger: 'end-session',
};

export const sampleWebhookMessage: WebhookQueueMessage = {
  type: 'conversation-post-processing-complete',
  id: '3b0c5d7e9f1a2b3c4d5e6f70',
  org_id: sampleIds.org,
  conversation_id: sampleIds.conversation,
  user_id: sampleIds.user,
  service_id: sampleIds.service,
  post_processing_type: 'generate-user-models',
  completed_at: '2025-01-01T12:00:05.000Z',
};

/** The other webhook payloads and the webhook worker's own attempt message. */
export const sampleWebhookMessages: WebhookQueueMessage[] = [
  sampleWebhookMessage,
  {
    type: 'api-key-expiration-soon',
    id: '4c1d6e8f0a2b3c4d5e6f7081',
    org_id: sampleIds.org,
    api_key_id: '000000000000000000000008',
    api_key_name: 'ci',
    expires_at: '2025-01-08T12:00:00.000Z',
  },
  {
    type: 'agent-framework-resource-updated',
    id: '000000000000000000000009',
    org_id: sampleIds.org,
    resource_type: 'agent',
    resource_id: '00000000000000000000000a',
    change: 'updated',
    version: 2,
    updated_at: '2025-01-01T12:00:00.000Z',
  },
  {
    type: 'version-set-promotion-completed',
    id: '00000000000000000000000d',
    org_id: sampleIds.org,
    service_id: '00000000000000000000000e',
    version_set_name: 'release',
    promotion_id: '00000000000000000000000f',
    from: 'edge',
    status: 'promoted',
    reason: null,
    simulation_unit_test_set_run_id: '000000000000000000000009',
    pass_rate: 0.95,
    revision: 4,
    completed_at: '2025-01-01T12:10:00.000Z',
  },
  {
    type: 'conversation-escalation-requested',
    id: '000000000000000000000010',
    org_id: sampleIds.org,
    conversation_id: sampleIds.conversation,
    user_id: sampleIds.user,
    service_id: sampleIds.service,
    escalation_id: '000000000000000000000011',
    reason: 'The user asks for a person.',
    triggered_by: 'agent',
    requested_by_user_id: null,
    requested_at: '2025-01-01T12:00:00.000Z',
    expires_at: '2025-01-01T12:10:00.000Z',
  },
  {
    type: 'conversation-operator-joined',
    id: '000000000000000000000012',
    org_id: sampleIds.org,
    conversation_id: sampleIds.conversation,
    user_id: sampleIds.user,
    service_id: sampleIds.service,
    operator_user_id: '000000000000000000000013',
    operator_name: 'Dana Operator',
    joined_at: '2025-01-01T12:01:30.000Z',
    escalation_id: '000000000000000000000011',
    waited_ms: 90_000,
  },
  {
    type: 'conversation-operator-left',
    id: '000000000000000000000014',
    org_id: sampleIds.org,
    conversation_id: sampleIds.conversation,
    user_id: sampleIds.user,
    service_id: sampleIds.service,
    operator_user_id: '000000000000000000000013',
    operator_name: 'Dana Operator',
    handed_back_by_user_id: '000000000000000000000013',
    outcome: 'resolved',
    joined_at: '2025-01-01T12:01:30.000Z',
    left_at: '2025-01-01T12:06:30.000Z',
    held_ms: 300_000,
  },
  {
    type: 'webhook-delivery-attempt',
    org_id: sampleIds.org,
    destination_id: '00000000000000000000000b',
    delivery_id: '00000000000000000000000c',
    attempt: 2,
  },
];

export const sampleToolBuildMessage: ToolBuildQueueMessage = {
  type: 'tool-version-published',
  org_id: sampleIds.org,
  tool_id: '000000000000000000000008',
  version: '1.0.0',
};

/** A continuation step of a simulated conversation (the first step has no checkpoint). */
export const sampleSimulationMessage: SimulationQueueMessage = {
  type: 'simulate-conversation',
  org_id: sampleIds.org,
  simulation_unit_test_set_run_id: '000000000000000000000009',
  unit_test_id: '00000000000000000000000a',
  run_index: 0,
  checkpoint: { conversation_id: sampleIds.conversation, interactions: 10 },
};

/** A step of a backtest's replay of one real conversation. */
export const sampleBacktestReplayMessage: SimulationQueueMessage = {
  type: 'replay-backtest-conversation',
  org_id: sampleIds.org,
  simulation_backtest_id: '00000000000000000000000d',
  conversation_id: sampleIds.conversation,
};

import { expect } from 'vitest';

/**
 * What the vendor's Python SDK accepts of a conversation stream (its pydantic models, read from its
 * sources): each line is validated against the reference's event union of the operation, a
 * discriminated union on `type`; an agent action's `type` and a message's `message_type` are
 * closed sets too. An unknown value raises inside the stream and aborts it; fields beyond the
 * reference's (the platform's `event_id`, `timings`, `from_operator`) are ignored.
 */
const required: Record<string, string[]> = {
  'conversation-created': ['conversation_id'],
  'user-message-available': ['message_id', 'user_message'],
  'current-agent-action': ['action'],
  'new-message': ['message', 'transcript_alignment', 'stop', 'sequence_number', 'message_id'],
  'interaction-complete': ['message_id', 'interaction_id', 'full_message', 'conversation_completed'],
  error: ['http_error_code', 'error_description'],
};

export const createUnion = [
  'conversation-created',
  'error',
  'interaction-complete',
  'new-message',
  'current-agent-action',
];
export const interactUnion = [
  'user-message-available',
  'error',
  'interaction-complete',
  'new-message',
  'current-agent-action',
];

/** The reference's agent action types (`ServiceConversationAction`). */
export const agentActionTypes = new Set([
  'action-too-long',
  'check-if-active-memory-needed-completed',
  'designated-tool-call-params-generated',
  'designated-tool-retrieved',
  'engage-user-dynamic-behavior-override',
  'engage-user-message-fragment-generated',
  'extract-active-memories-completed',
  'navigate-state-machine-action-state-action-selected',
  'navigate-state-machine-annotation-state-annotation-retrieved',
  'navigate-state-machine-decision-state-decision-started',
  'navigate-state-machine-dynamic-behavior-override',
  'navigate-state-machine-exit-condition-selected',
  'navigate-state-machine-recall-state-active-memory-retrieved',
  'navigate-state-machine-recall-state-dynamic-queries-generated',
  'navigate-state-machine-recall-state-static-queries-retrieved',
  'navigate-state-machine-reflection-state-prompt-retrieved',
  'navigate-state-machine-reflection-state-reflection-generated',
  'navigate-state-machine-state-transitioned',
  'navigate-state-machine-tool-call-state-tool-output-available',
  'select-dynamic-behavior-completed',
  'select-dynamic-behavior-relevance-retrieval-completed',
  'select-dynamic-behavior-vector-generated',
  'tool-call-ended',
  'tool-call-started',
]);

/** The reference's `MessageType`. */
export const messageTypes = new Set(['user-message', 'agent-message', 'agent-inner-thought', 'external-event']);

/** Fails unless every event would pass the Python SDK's validation for an operation of `union`. */
export const expectPythonParsable = (events: Record<string, unknown>[], union: string[]): void => {
  for (const event of events) {
    expect(union).toContain(event.type);
    for (const field of required[event.type as string] ?? []) expect(event).toHaveProperty(field);
    if (event.type === 'current-agent-action') {
      expect([...agentActionTypes]).toContain((event.action as { type: string }).type);
    }
    expect(event.event_id).toMatch(/^[0-9a-f]{24}-\d{6}$/);
  }
};

/** Fails unless every listed message has a `message_type` the Python SDK knows. */
export const expectKnownMessageTypes = (messages: Record<string, unknown>[]): void => {
  for (const message of messages) expect([...messageTypes]).toContain(message.message_type);
};

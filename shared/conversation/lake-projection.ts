import { lakeProjection } from '../kernel/lake-projection';
import { conversationRecord, interactionRecord, messageRecord } from './schemas';

/** Conversations and their messages as the SQL query's tables (`shared/analytics/`). */
export const conversationProjection = lakeProjection(conversationRecord, {
  name: 'conversations',
  entity: 'conversation',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    user_id: 'VARCHAR',
    service_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
    is_finished: 'BOOLEAN',
    finished_at: 'TIMESTAMPTZ',
    is_analyzed: 'BOOLEAN',
    num_messages: 'BIGINT',
    current_state: 'VARCHAR',
    user_display_name: 'VARCHAR',
    tags: 'JSON',
  },
  derived: {
    /** A simulated conversation (a run's, a session's or a backtest's replay), kept apart from real use. */
    is_simulated: { type: 'BOOLEAN', value: (conversation) => conversation.simulation !== undefined },
    /** The version set it runs (the release it measures). */
    version_set_name: { type: 'VARCHAR', value: (conversation) => conversation.version_set_info.name },
    /** How many times it was escalated to an operator. */
    escalation_count: { type: 'BIGINT', value: (conversation) => conversation.escalation_count ?? 0 },
  },
});

export const messageProjection = lakeProjection(messageRecord, {
  name: 'messages',
  entity: 'message',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    interaction_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
    sender: 'VARCHAR',
    message: 'VARCHAR',
    format: 'VARCHAR',
    message_type: 'VARCHAR',
  },
});

/**
 * Interactions (turns) with where their time went and what they cost: the console's dashboard
 * reads latency, cost, states and tools from them. Stage times are milliseconds from the request
 * (NULL where the turn had no such stage, or was stored before it was measured).
 */
export const interactionProjection = lakeProjection(interactionRecord, {
  name: 'interactions',
  entity: 'interaction',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
    current_state_name: 'VARCHAR',
    operator_user_id: 'VARCHAR',
    conversation_completed: 'BOOLEAN',
  },
  derived: {
    total_ms: { type: 'BIGINT', value: (turn) => turn.timings?.total_ms ?? null },
    speech_recognition_ms: { type: 'BIGINT', value: (turn) => turn.timings?.speech_recognition_ms ?? null },
    model_first_token_ms: { type: 'BIGINT', value: (turn) => turn.timings?.model_first_token_ms ?? null },
    first_token_ms: { type: 'BIGINT', value: (turn) => turn.timings?.first_token_ms ?? null },
    first_clause_ms: { type: 'BIGINT', value: (turn) => turn.timings?.first_clause_ms ?? null },
    speech_synthesis_ms: { type: 'BIGINT', value: (turn) => turn.timings?.speech_synthesis_ms ?? null },
    first_audio_ms: { type: 'BIGINT', value: (turn) => turn.timings?.first_audio_ms ?? null },
    /** Each tool call of the turn: `[{name, ms, at_ms}]`. */
    tool_calls: { type: 'JSON', value: (turn) => turn.timings?.tool_calls ?? [] },
    input_tokens: { type: 'BIGINT', value: (turn) => turn.usage?.input_tokens ?? null },
    output_tokens: { type: 'BIGINT', value: (turn) => turn.usage?.output_tokens ?? null },
    /** NULL when a model of the turn has no price (or the turn was stored before it was measured). */
    cost_usd: { type: 'DOUBLE', value: (turn) => turn.usage?.cost_usd ?? null },
    triggered_dynamic_behavior_set_id: {
      type: 'VARCHAR',
      value: (turn) => turn.triggered_dynamic_behavior_set_version_info?.[0] ?? null,
    },
  },
});

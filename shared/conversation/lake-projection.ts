import { lakeProjection } from '../kernel/lake-projection';
import { conversationRecord, messageRecord } from './schemas';

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
    /** A simulation run's conversation, kept apart from real use. */
    is_simulated: { type: 'BOOLEAN', value: (conversation) => conversation.simulation !== undefined },
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

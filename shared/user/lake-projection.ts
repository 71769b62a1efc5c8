import { lakeProjection } from '../kernel/lake-projection';
import { memoryRecord, userRecord } from './schemas';

/** Users and their memories as the SQL query's tables (`shared/analytics/`). */
export const userProjection = lakeProjection(userRecord, {
  name: 'users',
  entity: 'user',
  key: 'user_id',
  fields: {
    user_id: 'VARCHAR',
    first_name: 'VARCHAR',
    last_name: 'VARCHAR',
    email: 'VARCHAR',
    role_name: 'VARCHAR',
    is_verified: 'BOOLEAN',
    created_at: 'TIMESTAMPTZ',
  },
  derived: {
    num_conversations: { type: 'BIGINT', value: (user) => user.user_stats.num_conversations },
    num_messages: { type: 'BIGINT', value: (user) => user.user_stats.num_messages },
    last_message_time: { type: 'TIMESTAMPTZ', value: (user) => user.user_stats.last_message_time },
    is_simulated: { type: 'BOOLEAN', value: (user) => user.is_simulated === true },
  },
});

export const memoryProjection = lakeProjection(memoryRecord, {
  name: 'memories',
  entity: 'memory',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    user_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    service_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
    content: 'VARCHAR',
    context: 'VARCHAR',
  },
});

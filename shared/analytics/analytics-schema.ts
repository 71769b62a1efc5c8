/**
 * The tables and columns the SQL query answers over (documented in docs/admin.md), pure
 * declarations: the query engine, the analytics lake and the CDK stack's Glue tables read them.
 * Which records make each table is `analytics-tables.ts`'s business.
 */
export type ColumnType = 'VARCHAR' | 'BOOLEAN' | 'BIGINT' | 'TIMESTAMPTZ' | 'JSON';

export interface AnalyticsTableSchema {
  name: string;
  columns: Record<string, ColumnType>;
  /** The column naming a record: of its versions, the latest wins. */
  key: string;
}

const schema = (name: string, columns: Record<string, ColumnType>, key = 'id'): AnalyticsTableSchema => ({
  name,
  columns,
  key,
});

export const conversationsSchema = schema('conversations', {
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
  /** A simulation run's conversation (the record's `simulation`), kept apart from real use. */
  is_simulated: 'BOOLEAN',
});

export const messagesSchema = schema('messages', {
  id: 'VARCHAR',
  conversation_id: 'VARCHAR',
  interaction_id: 'VARCHAR',
  created_at: 'TIMESTAMPTZ',
  sender: 'VARCHAR',
  message: 'VARCHAR',
  format: 'VARCHAR',
  message_type: 'VARCHAR',
});

export const usersSchema = schema(
  'users',
  {
    user_id: 'VARCHAR',
    first_name: 'VARCHAR',
    last_name: 'VARCHAR',
    email: 'VARCHAR',
    role_name: 'VARCHAR',
    is_verified: 'BOOLEAN',
    created_at: 'TIMESTAMPTZ',
    num_conversations: 'BIGINT',
    num_messages: 'BIGINT',
    last_message_time: 'TIMESTAMPTZ',
    is_simulated: 'BOOLEAN',
  },
  'user_id',
);

export const servicesSchema = schema('services', {
  id: 'VARCHAR',
  name: 'VARCHAR',
  description: 'VARCHAR',
  is_active: 'BOOLEAN',
  agent_id: 'VARCHAR',
  service_hierarchical_state_machine_id: 'VARCHAR',
  tags: 'JSON',
  created_at: 'TIMESTAMPTZ',
  updated_at: 'TIMESTAMPTZ',
});

export const agentsSchema = schema('agents', {
  id: 'VARCHAR',
  name: 'VARCHAR',
  deprecated: 'BOOLEAN',
  latest_version: 'BIGINT',
  created_at: 'TIMESTAMPTZ',
});

export const memoriesSchema = schema('memories', {
  id: 'VARCHAR',
  user_id: 'VARCHAR',
  conversation_id: 'VARCHAR',
  service_id: 'VARCHAR',
  created_at: 'TIMESTAMPTZ',
  content: 'VARCHAR',
  context: 'VARCHAR',
});

/** Tables of capabilities that record nothing for SQL yet: their columns, no rows. */
export const declaredOnlySchemas: readonly AnalyticsTableSchema[] = [
  schema('metrics', { id: 'VARCHAR', name: 'VARCHAR', created_at: 'TIMESTAMPTZ', updated_at: 'TIMESTAMPTZ' }),
  schema('metric_evaluation_results', {
    id: 'VARCHAR',
    metric_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    value: 'JSON',
    created_at: 'TIMESTAMPTZ',
  }),
  schema('tool_invocations', {
    id: 'VARCHAR',
    tool_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
  schema('dynamic_behavior_invocations', {
    id: 'VARCHAR',
    dynamic_behavior_set_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
  schema('simulation_unit_test_set_runs', {
    id: 'VARCHAR',
    simulation_unit_test_set_id: 'VARCHAR',
    status: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
];

/** Every table, in the order the documentation lists them. */
export const analyticsTableSchemas: readonly AnalyticsTableSchema[] = [
  conversationsSchema,
  messagesSchema,
  usersSchema,
  servicesSchema,
  agentsSchema,
  memoriesSchema,
  ...declaredOnlySchemas,
];

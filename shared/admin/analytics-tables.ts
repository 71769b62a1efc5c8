import { agents } from '../agent/index';
import { conversations, messages } from '../conversation/index';
import { type Item, queryPages } from '../data/table';
import { services } from '../service/index';
import { memories, users } from '../user/index';

/**
 * The tables the SQL query sees, each made of one entity's records projected onto documented
 * columns. The analytics lake (`lake-*.ts`) keeps them per organization as Parquet: the table's
 * stream brings each change of a record (`row` of its new image, or its removal), and a backfill
 * reads an organization's records with Queries of its partitions (`items`). Tables of
 * capabilities that record nothing for SQL yet exist with their columns and no rows, so queries
 * naming them keep working.
 */
export type ColumnType = 'VARCHAR' | 'BOOLEAN' | 'BIGINT' | 'TIMESTAMPTZ' | 'JSON';

export interface AnalyticsTable {
  name: string;
  columns: Record<string, ColumnType>;
  /** The column naming a record: of its versions, the latest wins. */
  key: string;
  /** The `entity` of the items whose changes make its rows; none while no capability fills it. */
  entity?: string;
  /** A stored item (its attributes, keys included) as a row of the columns. */
  row: (item: Item) => Item;
  /** The organization's items of `entity`, a page at a time. */
  items: (orgId: string) => AsyncIterable<Item[]>;
}

const pick = (record: Item, columns: Record<string, ColumnType>): Item => {
  const row: Item = {};
  for (const column of Object.keys(columns)) row[column] = record[column] ?? null;
  return row;
};

const conversationColumns = {
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
} as const satisfies Record<string, ColumnType>;

const userColumns = {
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
} as const satisfies Record<string, ColumnType>;

/** Messages live in their conversations' partitions: a page of conversations, then theirs, a few at once. */
async function* organizationMessages(orgId: string): AsyncGenerator<Item[]> {
  for await (const page of queryPages(conversations.queryIndex(orgId, 'all', {}), 200)) {
    for (let start = 0; start < page.length; start += 16) {
      const found: Item[] = [];
      await Promise.all(
        page.slice(start, start + 16).map(async (conversation) => {
          for await (const items of queryPages(messages.query(orgId, { conversation_id: String(conversation.id) })))
            found.push(...items);
        }),
      );
      if (found.length > 0) yield found;
    }
  }
}

async function* none(): AsyncGenerator<Item[]> {}

/** A table no capability fills yet: its columns, no rows. */
const declared = (name: string, columns: Record<string, ColumnType>): AnalyticsTable => ({
  name,
  columns,
  key: 'id',
  row: (item) => pick(item, columns),
  items: none,
});

const picked = (table: Omit<AnalyticsTable, 'row' | 'key'> & Partial<Pick<AnalyticsTable, 'key'>>): AnalyticsTable => ({
  key: 'id',
  ...table,
  row: (item) => pick(item, table.columns),
});

export const analyticsTables: readonly AnalyticsTable[] = [
  {
    name: 'conversations',
    columns: conversationColumns,
    key: 'id',
    entity: conversations.name,
    row: (item) => ({
      ...pick(item, conversationColumns),
      is_simulated: item.simulation !== undefined && item.simulation !== null,
    }),
    items: (orgId) => queryPages(conversations.queryIndex(orgId, 'all', {})),
  },
  picked({
    name: 'messages',
    columns: {
      id: 'VARCHAR',
      conversation_id: 'VARCHAR',
      interaction_id: 'VARCHAR',
      created_at: 'TIMESTAMPTZ',
      sender: 'VARCHAR',
      message: 'VARCHAR',
      format: 'VARCHAR',
      message_type: 'VARCHAR',
    },
    entity: messages.name,
    items: organizationMessages,
  }),
  {
    name: 'users',
    columns: userColumns,
    key: 'user_id',
    entity: users.name,
    row: (item) =>
      pick({ ...item, ...(item.user_stats as Item), is_simulated: item.is_simulated === true }, userColumns),
    items: (orgId) => queryPages(users.query(orgId, {})),
  },
  picked({
    name: 'services',
    columns: {
      id: 'VARCHAR',
      name: 'VARCHAR',
      description: 'VARCHAR',
      is_active: 'BOOLEAN',
      agent_id: 'VARCHAR',
      service_hierarchical_state_machine_id: 'VARCHAR',
      tags: 'JSON',
      created_at: 'TIMESTAMPTZ',
      updated_at: 'TIMESTAMPTZ',
    },
    entity: services.name,
    items: (orgId) => queryPages(services.query(orgId, {})),
  }),
  picked({
    name: 'agents',
    columns: {
      id: 'VARCHAR',
      name: 'VARCHAR',
      deprecated: 'BOOLEAN',
      latest_version: 'BIGINT',
      created_at: 'TIMESTAMPTZ',
    },
    entity: agents.heads.name,
    items: (orgId) => queryPages(agents.heads.query(orgId, {})),
  }),
  picked({
    name: 'memories',
    columns: {
      id: 'VARCHAR',
      user_id: 'VARCHAR',
      conversation_id: 'VARCHAR',
      service_id: 'VARCHAR',
      created_at: 'TIMESTAMPTZ',
      content: 'VARCHAR',
      context: 'VARCHAR',
    },
    entity: memories.name,
    items: (orgId) => queryPages(memories.queryIndex(orgId, 'all', {})),
  }),
  declared('metrics', { id: 'VARCHAR', name: 'VARCHAR', created_at: 'TIMESTAMPTZ', updated_at: 'TIMESTAMPTZ' }),
  declared('metric_evaluation_results', {
    id: 'VARCHAR',
    metric_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    value: 'JSON',
    created_at: 'TIMESTAMPTZ',
  }),
  declared('tool_invocations', {
    id: 'VARCHAR',
    tool_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
  declared('dynamic_behavior_invocations', {
    id: 'VARCHAR',
    dynamic_behavior_set_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
  declared('simulation_unit_test_set_runs', {
    id: 'VARCHAR',
    simulation_unit_test_set_id: 'VARCHAR',
    status: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
];

/** The table an entity's records make, by the items' `entity` attribute. */
export const analyticsTableOfEntity: ReadonlyMap<string, AnalyticsTable> = new Map(
  analyticsTables.flatMap((table) => (table.entity ? [[table.entity, table] as const] : [])),
);

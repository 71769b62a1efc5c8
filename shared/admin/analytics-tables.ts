import { agents } from '../agent/index';
import { conversations, messages } from '../conversation/index';
import { type Item, queryAll } from '../data/table';
import { BadRequestError } from '../kernel/errors';
import { services } from '../service/index';
import { memories, users } from '../user/index';

/**
 * The tables the SQL query sees: the organization's own records, read from the table with
 * Queries of its partitions when a query runs (so always fresh), projected onto documented
 * columns. Tables of capabilities this deployment does not have yet exist with their columns
 * and no rows, so queries naming them keep working as those capabilities arrive.
 */
export type ColumnType = 'VARCHAR' | 'BOOLEAN' | 'BIGINT' | 'TIMESTAMPTZ' | 'JSON';

export interface AnalyticsTable {
  name: string;
  columns: Record<string, ColumnType>;
  rows: (orgId: string, budget: RowBudget) => Promise<Item[]>;
}

/** At most this many records are read for one query, over all tables: the interactive engine's bound. */
export const maxAnalyticsRows = 100_000;

export class RowBudget {
  private used = 0;
  /** The bound of the next read, which fails the query once the organization's data outgrows the engine. */
  take(rows: number): void {
    this.used += rows;
    if (this.used > maxAnalyticsRows) {
      throw new BadRequestError(
        `The organization's data exceeds the ${maxAnalyticsRows} records the SQL query engine reads; this environment does not support it.`,
      );
    }
  }
  get remaining(): number {
    return maxAnalyticsRows - this.used + 1;
  }
}

const readBounded = async (budget: RowBudget, read: (bound: number) => Promise<Item[]>): Promise<Item[]> => {
  const items = await read(budget.remaining);
  budget.take(items.length);
  return items;
};

const pick = (record: Item, columns: Record<string, ColumnType>): Item =>
  Object.fromEntries(Object.keys(columns).map((column) => [column, record[column] ?? null]));

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

const readConversations = (orgId: string, budget: RowBudget) =>
  readBounded(budget, (bound) => queryAll(conversations.queryIndex(orgId, 'all', {}), bound));

/** Messages live in their conversation's partition: read one conversation at a time, a few at once. */
const readMessages = async (orgId: string, budget: RowBudget): Promise<Item[]> => {
  const ids = (await queryAll(conversations.queryIndex(orgId, 'all', {}), budget.remaining)).map((item) =>
    String(item.id),
  );
  const found: Item[] = [];
  for (let start = 0; start < ids.length; start += 8) {
    const batch = await Promise.all(
      ids
        .slice(start, start + 8)
        .map((id) => readBounded(budget, (bound) => queryAll(messages.query(orgId, { conversation_id: id }), bound))),
    );
    found.push(...batch.flat());
  }
  return found;
};

const noRows = async (): Promise<Item[]> => [];

export const analyticsTables: readonly AnalyticsTable[] = [
  {
    name: 'conversations',
    columns: conversationColumns,
    rows: async (orgId, budget) =>
      (await readConversations(orgId, budget)).map((item) => ({
        ...pick(item, conversationColumns),
        is_simulated: item.simulation !== undefined && item.simulation !== null,
      })),
  },
  {
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
    rows: readMessages,
  },
  {
    name: 'users',
    columns: {
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
    rows: async (orgId, budget) =>
      (await readBounded(budget, (bound) => queryAll(users.query(orgId, {}), bound))).map((item) => ({
        ...item,
        ...(item.user_stats as Item),
        is_simulated: item.is_simulated === true,
      })),
  },
  {
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
    rows: (orgId, budget) => readBounded(budget, (bound) => queryAll(services.query(orgId, {}), bound)),
  },
  {
    name: 'agents',
    columns: {
      id: 'VARCHAR',
      name: 'VARCHAR',
      deprecated: 'BOOLEAN',
      latest_version: 'BIGINT',
      created_at: 'TIMESTAMPTZ',
    },
    rows: (orgId, budget) => readBounded(budget, (bound) => queryAll(agents.heads.query(orgId, {}), bound)),
  },
  {
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
    rows: (orgId, budget) => readBounded(budget, (bound) => queryAll(memories.queryIndex(orgId, 'all', {}), bound)),
  },
  // Capabilities not in this deployment yet: their tables exist, empty.
  {
    name: 'metrics',
    columns: { id: 'VARCHAR', name: 'VARCHAR', created_at: 'TIMESTAMPTZ', updated_at: 'TIMESTAMPTZ' },
    rows: noRows,
  },
  {
    name: 'metric_evaluation_results',
    columns: {
      id: 'VARCHAR',
      metric_id: 'VARCHAR',
      conversation_id: 'VARCHAR',
      value: 'JSON',
      created_at: 'TIMESTAMPTZ',
    },
    rows: noRows,
  },
  {
    name: 'tool_invocations',
    columns: { id: 'VARCHAR', tool_id: 'VARCHAR', conversation_id: 'VARCHAR', created_at: 'TIMESTAMPTZ' },
    rows: noRows,
  },
  {
    name: 'dynamic_behavior_invocations',
    columns: {
      id: 'VARCHAR',
      dynamic_behavior_set_id: 'VARCHAR',
      conversation_id: 'VARCHAR',
      created_at: 'TIMESTAMPTZ',
    },
    rows: noRows,
  },
  {
    name: 'simulation_unit_test_set_runs',
    columns: { id: 'VARCHAR', simulation_unit_test_set_id: 'VARCHAR', status: 'VARCHAR', created_at: 'TIMESTAMPTZ' },
    rows: noRows,
  },
];

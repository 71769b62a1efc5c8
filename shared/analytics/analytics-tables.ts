import { agents } from '../agent/index';
import { conversations, messages } from '../conversation/index';
import { type Item, queryPages } from '../data/table';
import { services } from '../service/index';
import { memories, users } from '../user/index';
import {
  type AnalyticsTableSchema,
  agentsSchema,
  type ColumnType,
  conversationsSchema,
  declaredOnlySchemas,
  memoriesSchema,
  messagesSchema,
  servicesSchema,
  usersSchema,
} from './analytics-schema';

/**
 * The records each SQL table is made of: one entity's, projected onto the table's columns
 * (`analytics-schema.ts`). The analytics lake (`lake-*.ts`) keeps them per organization as
 * Parquet: the table's stream brings each change of a record (`row` of its new image, or its
 * removal), and a backfill reads an organization's records with Queries of its partitions
 * (`items`).
 */
export interface AnalyticsTable extends AnalyticsTableSchema {
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

/** A table whose rows are its entity's records' fields of the same names. */
const picked = (
  schema: AnalyticsTableSchema,
  entity: string,
  items: (orgId: string) => AsyncIterable<Item[]>,
): AnalyticsTable => ({ ...schema, entity, row: (item) => pick(item, schema.columns), items });

export const analyticsTables: readonly AnalyticsTable[] = [
  {
    ...conversationsSchema,
    entity: conversations.name,
    row: (item) => ({
      ...pick(item, conversationsSchema.columns),
      is_simulated: item.simulation !== undefined && item.simulation !== null,
    }),
    items: (orgId) => queryPages(conversations.queryIndex(orgId, 'all', {})),
  },
  picked(messagesSchema, messages.name, organizationMessages),
  {
    ...usersSchema,
    entity: users.name,
    row: (item) =>
      pick({ ...item, ...(item.user_stats as Item), is_simulated: item.is_simulated === true }, usersSchema.columns),
    items: (orgId) => queryPages(users.query(orgId, {})),
  },
  picked(servicesSchema, services.name, (orgId) => queryPages(services.query(orgId, {}))),
  picked(agentsSchema, agents.heads.name, (orgId) => queryPages(agents.heads.query(orgId, {}))),
  picked(memoriesSchema, memories.name, (orgId) => queryPages(memories.queryIndex(orgId, 'all', {}))),
  ...declaredOnlySchemas.map((schema) => ({ ...schema, row: (item: Item) => pick(item, schema.columns), items: none })),
];

/** The table an entity's records make, by the items' `entity` attribute. */
export const analyticsTableOfEntity: ReadonlyMap<string, AnalyticsTable> = new Map(
  analyticsTables.flatMap((table) => (table.entity ? [[table.entity, table] as const] : [])),
);

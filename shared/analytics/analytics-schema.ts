import { agentProjection } from '../agent/lake-projection';
import { callProjection } from '../call/lake-projection';
import { conversationProjection, interactionProjection, messageProjection } from '../conversation/lake-projection';
import type { Columns, LakeProjection, LakeTableSchema } from '../kernel/lake-projection';
import { metricProjection, metricResultProjection } from '../metric/lake-projection';
import { serviceProjection } from '../service/lake-projection';
import { toolInvocationProjection } from '../tool/lake-projection';
import { memoryProjection, userProjection } from '../user/lake-projection';

/**
 * The tables and columns the SQL query answers over (documented in docs/admin.md), pure
 * declarations: the query engine, the analytics lake and the CDK stack's Glue tables and stream
 * filter read them. Each capability whose records reach the lake declares its tables' columns and
 * rows (its `lake-projection.ts`); the lake reads nothing else of their records.
 */

/** The tables the lake holds files of, one per projection, in the order the documentation lists them. */
export const lakeTables: readonly LakeProjection[] = [
  conversationProjection,
  messageProjection,
  interactionProjection,
  userProjection,
  serviceProjection,
  agentProjection,
  memoryProjection,
  metricProjection,
  metricResultProjection,
  callProjection,
  toolInvocationProjection,
];

const declaredOnly = <C extends Columns & { id: 'VARCHAR' }>(name: string, columns: C): LakeTableSchema<C> => ({
  name,
  columns,
  key: 'id',
});

/** Tables of capabilities that record nothing for SQL yet: their columns, no rows. */
export const declaredOnlySchemas: readonly LakeTableSchema[] = [
  declaredOnly('dynamic_behavior_invocations', {
    id: 'VARCHAR',
    dynamic_behavior_set_id: 'VARCHAR',
    conversation_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
  declaredOnly('simulation_unit_test_set_runs', {
    id: 'VARCHAR',
    simulation_unit_test_set_id: 'VARCHAR',
    status: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  }),
];

/** Every table, in the order the documentation lists them. */
export const analyticsTableSchemas: readonly LakeTableSchema[] = [...lakeTables, ...declaredOnlySchemas];

/** The entities whose items' changes reach the lake (the `entity` attribute of their items). */
export const lakeEntities: readonly string[] = lakeTables.map((table) => table.entity);

import { versionedHead } from '../data/versioned-head';
import { lakeProjection } from '../kernel/lake-projection';

/** Agents (their heads) as the SQL query's table (`shared/analytics/`). */
export const agentProjection = lakeProjection(versionedHead, {
  name: 'agents',
  entity: 'agent',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    name: 'VARCHAR',
    deprecated: 'BOOLEAN',
    latest_version: 'BIGINT',
    created_at: 'TIMESTAMPTZ',
  },
});

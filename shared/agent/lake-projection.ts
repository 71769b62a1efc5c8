import { versionedHead, versionedHeadColumns } from '../data/versioned-head';
import { lakeProjection } from '../kernel/lake-projection';

/** Agents (their heads) as the SQL query's table (`shared/analytics/`). */
export const agentProjection = lakeProjection(versionedHead, {
  name: 'agents',
  entity: 'agent',
  key: 'id',
  fields: versionedHeadColumns,
});

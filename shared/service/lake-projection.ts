import { lakeProjection } from '../kernel/lake-projection';
import { storedService } from './schemas';

/** Services as the SQL query's table (`shared/analytics/`). */
export const serviceProjection = lakeProjection(storedService, {
  name: 'services',
  entity: 'service',
  key: 'id',
  fields: {
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
});

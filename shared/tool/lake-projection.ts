import { lakeProjection } from '../kernel/lake-projection';
import { toolInvocationInstance } from './schemas';
import { formatVersion } from './version-constraint';

/**
 * Tool invocations as the SQL query's table (`shared/analytics/`): every run of a tool, built or
 * served by an MCP server, from a conversation, a simulated one or `invoke-tool-version`.
 */
export const toolInvocationProjection = lakeProjection(toolInvocationInstance, {
  name: 'tool_invocations',
  entity: 'tool-invocation',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    tool_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
    duration_ms: 'BIGINT',
  },
  derived: {
    /** The conversation that called it; NULL for a direct invocation and a simulated conversation's. */
    conversation_id: {
      type: 'VARCHAR',
      value: (invocation) =>
        invocation.invocation_source.type === 'regular-conversation'
          ? invocation.invocation_source.conversation_id
          : null,
    },
    tool_version: { type: 'VARCHAR', value: (invocation) => formatVersion(invocation.tool_version) },
    succeeded: { type: 'BOOLEAN', value: (invocation) => invocation.invocation_status.succeeded },
    /** The failure's type (`McpToolError`, `TimeoutError`, ...); NULL when it succeeded. */
    exception_type: {
      type: 'VARCHAR',
      value: (invocation) =>
        invocation.invocation_status.succeeded ? null : invocation.invocation_status.exception_type,
    },
    /** `regular-conversation` or `simulation-conversation`. */
    source_type: { type: 'VARCHAR', value: (invocation) => invocation.invocation_source.type },
    simulation_unit_test_set_run_id: {
      type: 'VARCHAR',
      value: (invocation) =>
        invocation.invocation_source.type === 'simulation-conversation'
          ? invocation.invocation_source.simulation_unit_test_set_run_id
          : null,
    },
  },
});

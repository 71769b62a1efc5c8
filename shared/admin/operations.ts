import { z } from 'zod';
import { defineOperation, operationDefiner } from '../kernel/operation';
import { organizationPath } from '../kernel/schemas';

const adminOperation = operationDefiner({ group: 'admin', tag: 'Admin' });

export const pingOperation = adminOperation({
  operationId: 'ping',
  method: 'GET',
  path: '/v1/{organization}/admin/ping',
  summary: 'Check the service and whether it is in maintenance mode',
  auth: 'none',
  maintenanceExempt: true,
  request: { path: organizationPath },
  response: { status: 200, body: z.object({ in_maintenance_mode: z.boolean() }) },
});

// Not an API call of an organization: no path parameters, no headers.
export const openApiOperation = defineOperation({
  operationId: 'get-openapi-document',
  method: 'GET',
  path: '/openapi.json',
  group: 'admin',
  tag: 'Admin',
  summary: 'The OpenAPI 3.1 description of this API, generated from its schemas',
  auth: 'none',
  maintenanceExempt: true,
  request: {},
  response: { status: 200, body: z.record(z.string(), z.unknown()) },
});

export const getModelsOperation = adminOperation({
  operationId: 'get-models',
  method: 'GET',
  path: '/v1/{organization}/admin/get_models/',
  summary: 'The models this deployment can use: the built-in stand-in, the default model and LLM_MODEL_MAP entries',
  rateLimitPerMinute: 20,
  request: { path: organizationPath },
  response: {
    status: 200,
    body: z.object({
      models: z.array(
        z.object({
          name: z.string().describe('The llm_name to use in llm_model_preferences.'),
          params_model_schema: z.record(z.string(), z.unknown()).describe('JSON Schema of the sampling parameters.'),
          provider: z.string(),
          model: z.string().describe("The provider's own model id."),
          source: z.enum(['built-in', 'default', 'model-map']),
        }),
      ),
    }),
  },
});

export const submitSqlQueryOperation = adminOperation({
  operationId: 'submit-sql-query',
  method: 'POST',
  path: '/v1/{organization}/admin/sql_query',
  summary:
    "Run one read-only SELECT over the organization's own data (DuckDB); needs more privilege than DefaultAdministratorRole",
  rateLimitPerMinute: 6,
  extraErrors: { 408: 'The query cannot be executed within the time limit.' },
  request: {
    path: organizationPath,
    body: z.object({
      sql_query: z.string().trim().min(1).max(100_000),
      async_query: z
        .boolean()
        .default(false)
        .describe('Write up to 100,000 rows to the bucket and answer a presigned `download_url` instead of rows.'),
    }),
  },
  response: {
    status: 200,
    body: z.object({
      execution_time_ms: z.number().int(),
      result: z.array(z.array(z.unknown())),
      truncated: z.boolean(),
      columns: z.array(z.object({ name: z.string(), type: z.string() })),
      download_url: z
        .string()
        .optional()
        .describe('With async_query: a presigned link to the NDJSON result, for an hour.'),
    }),
  },
});

export const adminOperations = [pingOperation, openApiOperation, getModelsOperation, submitSqlQueryOperation] as const;

export const getPromptLogsOperation = adminOperation({
  operationId: 'get-prompt-logs',
  method: 'GET',
  path: '/v1/{organization}/admin/get_prompt_logs/',
  group: 'admin-stream',
  summary:
    'A zip of the prompt logs under a prefix from the past 30 days (at most 1,000), streamed: `{log_key}-system`, `{log_key}-history` and `{log_key}-metrics` (time, tokens, cost), or `{log_key}-error`',
  streaming: true,
  rateLimitPerMinute: 20,
  request: {
    path: organizationPath,
    query: z.object({
      prompt_log_prefix: z
        .string()
        .max(512)
        .describe(
          'A prefix of log keys, which are `{service_id}/{conversation_id}/{interaction_id}/{call}`, `{service_id}/{conversation_id}/analysis/{call}` or `{service_id}/starters/{request_id}/{call}`.',
        ),
    }),
  },
  response: {
    status: 200,
    body: z.string().meta({ format: 'binary' }).describe('A zip archive.'),
    contentType: 'application/zip',
  },
});

/** Operations whose answer is streamed (Lambda response streaming), in a group of their own. */
export const adminStreamOperations = [getPromptLogsOperation] as const;

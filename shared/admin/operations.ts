import { z } from 'zod';
import { commonHeaders, organizationPath } from '../kernel/schemas';
import { defineOperation } from '../kernel/operation';

export const pingOperation = defineOperation({
  operationId: 'ping',
  method: 'GET',
  path: '/v1/{organization}/admin/ping',
  group: 'admin',
  tag: 'Admin',
  summary: 'Check the service and whether it is in maintenance mode',
  auth: 'none',
  maintenanceExempt: true,
  request: { path: organizationPath, headers: commonHeaders },
  response: { status: 200, body: z.object({ in_maintenance_mode: z.boolean() }) },
});

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

export const getModelsOperation = defineOperation({
  operationId: 'get-models',
  method: 'GET',
  path: '/v1/{organization}/admin/get_models/',
  group: 'admin',
  tag: 'Admin',
  summary: 'The models this deployment can use: the built-in stand-in, the default model and LLM_MODEL_MAP entries',
  auth: 'required',
  rateLimitPerMinute: 20,
  request: { path: organizationPath, headers: commonHeaders },
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

export const adminOperations = [pingOperation, openApiOperation, getModelsOperation] as const;

import { describe, expect, it } from 'vitest';
import { routeTable } from '#shared/api/route-table';
import { api, harness } from '../support/client';

describe('ping', () => {
  it('answers without credentials and reports maintenance mode off', async () => {
    const response = await api(`/v1/${harness().credentials.org_id}/admin/ping`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ in_maintenance_mode: false });
  });
});

describe('openapi document', () => {
  it('describes every operation of the route table as OpenAPI 3.1', async () => {
    // Act
    const response = await api('/openapi.json');
    // Assess
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    const described = Object.entries(response.body.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      ([path, methods]) => Object.entries(methods).map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`),
    );
    expect(described.sort()).toEqual(
      routeTable.map((operation) => `${operation.method} ${operation.path} ${operation.operationId}`).sort(),
    );
  });

  it('documents request schemas and the 422 error shape', async () => {
    const { body } = await api('/openapi.json');
    const createAgent = body.paths['/v1/{organization}/organization/agent'].post;
    expect(createAgent.requestBody.content['application/json'].schema.properties.agent_name).toBeDefined();
    expect(createAgent.responses['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/HTTPValidationError');
    expect(createAgent.security.length).toBeGreaterThan(0);
  });
});

describe('unknown routes', () => {
  it('answers 404 and 405 as JSON', async () => {
    const missing = await api('/v1/acme/no-such-thing');
    const wrongMethod = await api('/v1/acme/admin/ping', { method: 'DELETE' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: 'Not Found' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
  });
});

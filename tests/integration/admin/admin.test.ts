import { describe, expect, it } from 'vitest';
import { routeShape } from '#shared/api/paths';
import { routeTable } from '#shared/api/route-table';
import { socketOperations } from '#shared/api/socket-operations';
import { api, harness } from '../support/client';

describe('ping', () => {
  it('answers without credentials and reports maintenance mode off', async () => {
    const response = await api(`/v1/${harness().credentials.org_id}/admin/ping`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ in_maintenance_mode: false });
  });
});

describe('openapi document', () => {
  it('describes every operation of the route table and the voice session socket as OpenAPI 3.1, each under one template per URL', async () => {
    // Act
    const response = await api('/openapi.json');

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    const paths = Object.keys(response.body.paths as Record<string, unknown>);
    const described = Object.entries(
      response.body.paths as Record<string, Record<string, { operationId: string }>>,
    ).flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, operation]) => `${method.toUpperCase()} ${routeShape(path)} ${operation.operationId}`,
      ),
    );
    expect(described.sort()).toEqual(
      [...routeTable, ...socketOperations]
        .map((operation) => `${operation.method} ${routeShape(operation.path)} ${operation.operationId}`)
        .sort(),
    );
    expect(new Set(paths.map(routeShape)).size).toBe(paths.length);
  });

  it('documents 401 on sign-in and verify, and 413, 415 and 429 where they can occur', async () => {
    // Act
    const { body } = await api('/openapi.json');

    // Assess
    const signIn = body.paths['/v1/{organization}/user/signin_with_api_key'].post.responses;
    const verify = body.paths['/v1/{organization}/user/verify'].get.responses;
    const createRole = body.paths['/v1/{organization}/role/'].post.responses;
    expect(Object.keys(signIn)).toEqual(expect.arrayContaining(['401', '403', '429']));
    expect(signIn['429'].headers['Retry-After']).toBeDefined();
    expect(Object.keys(verify)).toContain('401');
    expect(Object.keys(createRole)).toEqual(expect.arrayContaining(['401', '403', '413', '415', '429']));
  });

  it('describes continuation_token as an opaque handle', async () => {
    // Act
    const { body } = await api('/openapi.json');

    // Assess
    const parameter = body.paths['/v1/{organization}/user/'].get.parameters.find(
      (candidate: { name: string }) => candidate.name === 'continuation_token',
    );
    expect(parameter.description).toMatch(/^Opaque/);
  });

  it('documents request schemas and the 422 error shape', async () => {
    const { body } = await api('/openapi.json');
    const createAgent = body.paths['/v1/{organization}/organization/agent'].post;
    expect(createAgent.requestBody.content['application/json'].schema.properties.agent_name).toBeDefined();
    expect(createAgent.responses['422'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/HTTPValidationError',
    );
    expect(createAgent.security.length).toBeGreaterThan(0);
  });
});

describe('routing', () => {
  it('lets a fixed segment win over a parameter: DELETE /user/signin answers 405, not "user not found"', async () => {
    // Act
    const response = await api(`/v1/${harness().credentials.org_id}/user/signin`, { method: 'DELETE' });

    // Assess
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
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

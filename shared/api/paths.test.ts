import { describe, expect, it } from 'vitest';
import { defineOperation, type Operation } from '../kernel/operation';
import {
  canonicalParameterNames,
  canonicalResourcePaths,
  matchResource,
  mostSpecific,
  renamedParameters,
  routeShape,
} from './paths';

const operation = (method: 'GET' | 'DELETE' | 'POST', path: string): Operation =>
  defineOperation({
    operationId: `${method} ${path}`,
    method,
    path,
    group: 'agent',
    tag: 'Test',
    summary: '',
    auth: 'none',
    request: {},
    response: { status: 200 },
  });

describe('canonicalResourcePaths', () => {
  it('names a parameter position as the first operation does and drops trailing slashes', () => {
    // Prepare
    const create = operation('POST', '/v1/{organization}/machine/{machine_id}/');
    const remove = operation('DELETE', '/v1/{organization}/machine/{state_machine_id}/');
    // Act
    const paths = canonicalResourcePaths([create, remove]);
    // Assess
    expect(paths.get(create)).toBe('/v1/{organization}/machine/{machine_id}');
    expect(paths.get(remove)).toBe('/v1/{organization}/machine/{machine_id}');
  });

  it('maps parameters back to the operation own names by position', () => {
    const remove = operation('DELETE', '/v1/{organization}/machine/{state_machine_id}/');
    const names = canonicalParameterNames(remove, '/v1/{organization}/machine/{machine_id}');
    const parameters = renamedParameters(names, { organization: 'acme', machine_id: 'abc' });
    expect(parameters).toEqual({ organization: 'acme', state_machine_id: 'abc' });
  });
});

describe('matchResource', () => {
  it('matches with or without a trailing slash and decodes parameters', () => {
    expect(matchResource('/v1/{organization}/user', '/v1/a%20b/user/')?.pathParameters).toEqual({
      organization: 'a b',
    });
    expect(matchResource('/v1/{organization}/user', '/v1/acme/user')).toBeDefined();
  });

  it('does not match a different literal segment or length', () => {
    expect(matchResource('/v1/{organization}/user', '/v1/acme/role')).toBeUndefined();
    expect(matchResource('/v1/{organization}/user', '/v1/acme/user/x')).toBeUndefined();
  });
});

describe('routeShape', () => {
  it('treats paths that differ only in parameter names and trailing slash as one resource', () => {
    expect(routeShape('/v1/{organization}/x/{a}/')).toBe(routeShape('/v1/{org}/x/{b}'));
  });
});

describe('mostSpecific', () => {
  it('lets a fixed segment win over a parameter at the same position', () => {
    // Prepare
    const matches = ['/v1/{organization}/user/{requested_user_id}', '/v1/{organization}/user/signin'].map(
      (resource) => ({ resource }),
    );

    // Act
    const chosen = mostSpecific(matches);

    // Assess
    expect(chosen).toEqual([{ resource: '/v1/{organization}/user/signin' }]);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createService, uniqueName } from '../support/fixtures';
import { createOrganization, rootSession, type Session } from '../support/identity';

/** Values DynamoDB cannot store faithfully, each with the body location the 422 must name. */
const deeplyNested = (levels: number): unknown => (levels === 0 ? 1 : { a: deeplyNested(levels - 1) });
const unstorable: { what: string; value: unknown }[] = [
  { what: 'a number above 2^53-1', value: 2 ** 53 + 2 },
  { what: 'a number smaller in magnitude than 1e-130', value: 1e-131 },
  { what: 'nesting 28 levels deep', value: deeplyNested(28) },
];
const unstorableKeys = ['', '__proto__', 'constructor', 'prototype'];

let admin: Session;
beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
});

const createRoleWithConditions = (conditionsJson: string) =>
  api(`/v1/${admin.orgId}/role/`, {
    token: admin.token,
    headers: { 'content-type': 'application/json' },
    // Raw JSON: a "__proto__" key survives only in text, not in a JavaScript object literal.
    raw: `{"role_name":"${uniqueName('Role').replace(' ', '-')}","description":"d","frontend_view":"client",
      "permission_grants":[{"action":"Allow","permission_name":"Conversation:GetConversation","conditions":${conditionsJson}}]}`,
  });

describe('create-role', () => {
  it.each(unstorable)('answers 422 naming the field to a condition value that is $what', async ({ value }) => {
    // Act
    const response = await createRoleWithConditions(JSON.stringify({ user_id: { type: 'Equals', value } }));

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc.slice(0, 6)).toEqual([
      'body',
      'permission_grants',
      0,
      'conditions',
      'user_id',
      'value',
    ]);
  });

  it.each(unstorableKeys)('answers 422 to the condition key %j instead of dropping or storing it', async (key) => {
    // Act
    const response = await createRoleWithConditions(`{${JSON.stringify(key)}:{"type":"Equals","value":"x"}}`);

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'permission_grants', 0, 'conditions', key]);
  });
});

describe('upsert-service-version-set', () => {
  it.each(unstorable)('answers 422 to an llm_model_preferences parameter that is $what', async ({ value }) => {
    // Prepare
    const { serviceId } = await createService(admin);

    // Act
    const response = await api(`/v1/${admin.orgId}/service/${serviceId}/version_sets/beta/`, {
      method: 'PUT',
      token: admin.token,
      body: {
        version_set: {
          agent_version_number: null,
          service_hierarchical_state_machine_version_number: null,
          llm_model_preferences: { reply: { llm_name: 'm', params: { p: value } } },
        },
      },
    });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc.slice(0, 7)).toEqual([
      'body',
      'version_set',
      'llm_model_preferences',
      'reply',
      'params',
      'p',
      ...(typeof value === 'object' ? ['a'] : []),
    ]);
  });
  it.each(['constructor', 'prototype', '__proto__'])(
    'answers 422 to the version set name %j, a key no stored map can hold',
    async (name) => {
      // Prepare
      const { serviceId } = await createService(admin);

      // Act
      const response = await api(`/v1/${admin.orgId}/service/${serviceId}/version_sets/${name}/`, {
        method: 'PUT',
        token: admin.token,
        body: { version_set: {} },
      });

      // Assess
      expect(response.status).toBe(422);
      expect(response.body.detail[0].loc).toEqual(['path', 'version_set_name']);
    },
  );
});

describe('get-users', () => {
  it.each([0, -1])('answers 422 to limit %i', async (limit) => {
    // Act
    const response = await api(`/v1/${admin.orgId}/user/`, { token: admin.token, query: { limit } });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['query', 'limit']);
  });
});

describe.each(['user_model', 'memory'])('get-user-model, get-memories (%s)', (resource) => {
  it('answers 422 to a user id longer than a key holds', async () => {
    // Act
    const response = await api(`/v1/${admin.orgId}/user/${'x'.repeat(5000)}/${resource}`, { token: admin.token });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['path', 'user_id']);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createOrganization, createUserSession, rootSession, type Session } from '../support/identity';

let orgId: string;
let superAdmin: Session;

beforeAll(async () => {
  ({ orgId, session: superAdmin } = await createOrganization(await rootSession()));
});

describe('get-models', () => {
  it('lists the built-in model with its parameter schema to an administrator', async () => {
    const administrator = await createUserSession(superAdmin, 'DefaultAdministratorRole');

    const response = await api(`/v1/${orgId}/admin/get_models/`, { token: administrator.token });

    expect(response.status).toBe(200);
    expect(response.body.models).toContainEqual({
      name: 'deterministic',
      provider: 'deterministic',
      model: 'deterministic',
      source: 'built-in',
      params_model_schema: expect.objectContaining({ type: 'object' }),
    });
  });

  it('refuses a user without Admin:GetModels with 403', async () => {
    const user = await createUserSession(superAdmin, 'DefaultUserRole');

    const response = await api(`/v1/${orgId}/admin/get_models/`, { token: user.token });

    expect(response.status).toBe(403);
  });
});

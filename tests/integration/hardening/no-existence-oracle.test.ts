import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../support/client';
import { createOrganization, createUserSession, organizationKey, rootSession, type Session } from '../support/identity';

/** A caller who may not read a record gets exactly the answer for a record that does not exist. */
let admin: Session;
let user: Session;
beforeAll(async () => {
  const root = await rootSession();
  ({ session: admin } = await createOrganization(root));
  user = await createUserSession(admin, 'DefaultUserRole');
});

describe('delete-api-key', () => {
  it('answers a user who may not see keys the same 404 for an existing key as for a missing one', async () => {
    // Prepare
    const existing = organizationKey(admin.orgId).api_key_id;
    const missing = 'f'.repeat(24);
    const remove = (keyId: string) => api(`/v1/${admin.orgId}/organization/api_key/${keyId}`, { method: 'DELETE', token: user.token });

    // Act
    const [forExisting, forMissing] = [await remove(existing), await remove(missing)];

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing.text.replace(missing, existing));
  });
});

describe('modify-role', () => {
  it('answers a user who may not see roles the same 404 for an existing role as for a missing one', async () => {
    // Prepare
    const modify = (roleName: string) =>
      api(`/v1/${admin.orgId}/role/${roleName}`, { token: user.token, body: { description: 'Changed.' } });

    // Act
    const [forExisting, forMissing] = [await modify('DefaultAdministratorRole'), await modify('NoSuchRole')];

    // Assess
    expect(forExisting.status).toBe(404);
    expect(forExisting.text).toBe(forMissing.text.replace('NoSuchRole', 'DefaultAdministratorRole'));
  });
});

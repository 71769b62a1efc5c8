import { describe, expect, it } from 'vitest';
import { api, eventually, expectStatus } from '../support/client';
import { createService } from '../support/fixtures';
import { createOrganization, createUserSession, rootSession } from '../support/identity';
import { removeStoredAttributes, setStoredAttributes, storedItemsStartingWith } from '../support/table';
import { createTwilioNumber, newTwilioAccount } from '../support/twilio';

/**
 * The default roles' upgrade step (`shared/role/default-role-upgrade.ts`): an organization made
 * before phone numbers and calls, whose administrator roles lack those groups, gets them when its
 * users next act, and a role inheriting from one follows.
 */

type Grant = { permission_name: string; action: string };

const administratorRoles = ['DefaultAdministratorRole', 'DefaultAmigoAdministratorRole'];

describe('upgradeDefaultRoles', () => {
  it('gives an organization made before phone numbers the permission groups its default roles gained since', async () => {
    // Prepare: an organization as one made before phone numbers was stored: its administrator roles
    // without the PhoneNumber and Call groups, no generation on its record; and a role inheriting.
    const { orgId, session: owner } = await createOrganization(await rootSession());
    const { serviceId } = await createService(owner);
    const inheriting = await api(`/v1/${orgId}/role/`, {
      token: owner.token,
      body: {
        role_name: 'Dispatcher',
        description: 'Inherits the administrator role.',
        permission_grants: [],
        frontend_view: 'admin',
        is_base_role: false,
        inherited_from: (
          await api(`/v1/${orgId}/role/`, { token: owner.token, query: { name: 'DefaultAdministratorRole' } })
        ).body.roles[0].id,
      },
    });
    expectStatus('create an inheriting role', inheriting, 201);
    const roleItems = async () =>
      (await storedItemsStartingWith(`ORG#${orgId}#ROLE`)).filter((item) => String(item.sk).startsWith('ROLE#'));
    for (const item of await roleItems()) {
      if (!administratorRoles.includes(String(item.name))) continue;
      const grants = (item.permission_grants as Grant[]).filter(
        (grant) => !['PhoneNumber:*', 'Call:*'].includes(grant.permission_name),
      );
      await setStoredAttributes({ pk: String(item.pk), sk: String(item.sk) }, { permission_grants: grants });
    }
    const [organization] = await storedItemsStartingWith(`ORG#${orgId}#ORGANIZATION`);
    await removeStoredAttributes({ pk: String(organization?.pk), sk: String(organization?.sk) }, [
      'default_roles_generation',
    ]);

    // Act: an administrator and a dispatcher act (once the platform's few seconds of cached roles have passed).
    const administrator = await createUserSession(owner, 'DefaultAdministratorRole');
    const dispatcher = await createUserSession(owner, 'Dispatcher');
    const number = await eventually(async () => {
      const created = await api(`/v1/${orgId}/phone_number/`, {
        token: administrator.token,
        body: {
          phone_number: '+14155550150',
          service_id: serviceId,
          provider: 'twilio',
          twilio_account_sid: `AC${'1'.repeat(32)}`,
          twilio_auth_token: 'b'.repeat(32),
        },
      });
      return created.status === 201 ? created : undefined;
    }, 15_000);
    const calls = await api(`/v1/${orgId}/call/`, { token: dispatcher.token });

    // Assess
    expect(number.status).toBe(201);
    expect(calls.status, calls.text).toBe(200);
    const upgraded = await roleItems();
    for (const name of administratorRoles) {
      const role = upgraded.find((item) => item.name === name);
      const granted = ((role?.permission_grants ?? []) as Grant[]).map((grant) => grant.permission_name);
      expect(granted).toEqual(expect.arrayContaining(['PhoneNumber:*', 'Call:*']));
      // Each group once: what the role already named is left alone.
      expect(granted.filter((permission) => permission === 'Call:*')).toHaveLength(1);
    }
    const administratorRole = upgraded.find((item) => item.name === 'DefaultAdministratorRole');
    expect(upgraded.find((item) => item.name === 'Dispatcher')?.inherited_from).toBe(administratorRole?.id);
    const [after] = await storedItemsStartingWith(`ORG#${orgId}#ORGANIZATION`);
    expect(after?.default_roles_generation).toBe(3);
  });

  it('gives a new organization the current generation, so nothing is upgraded', async () => {
    const { orgId, session } = await createOrganization(await rootSession());
    const { serviceId } = await createService(session);

    await createTwilioNumber(session, serviceId, newTwilioAccount());

    const [organization] = await storedItemsStartingWith(`ORG#${orgId}#ORGANIZATION`);
    expect(organization?.default_roles_generation).toBe(3);
    expect((await storedItemsStartingWith(`ORG#${orgId}#ROLE`)).some((item) => item.entity === 'replaced-role')).toBe(
      false,
    );
  });
});

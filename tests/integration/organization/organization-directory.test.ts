import { describe, expect, it } from 'vitest';
import { api, eventually, expectStatus } from '../support/client';
import { createOrganization, createUserSession, rootSession } from '../support/identity';
import {
  deleteStoredItems,
  removeStoredAttributes,
  storedItemsStartingWith,
  storedKeysStartingWith,
} from '../support/table';

/**
 * The organization directory (`shared/organization/organization-directory.ts`): one entry per
 * organization in the root organization's partition, which the lake's backfill lists with Queries
 * instead of scanning the table.
 */
describe('organization directory', () => {
  it('lists a new organization, enters one made before the directory once its users act, and erases its entry with it', async () => {
    // Prepare
    const root = await rootSession();
    const { orgId, session: owner } = await createOrganization(root);
    const directory = `ORG#${root.orgId}#ORGDIRECTORY`;
    const entered = async () => (await storedKeysStartingWith(directory)).some((item) => item.sk === orgId);
    const recordOf = async () => (await storedItemsStartingWith(`ORG#${orgId}#ORGANIZATION`))[0];
    const listedAtCreation = { entered: await entered(), marked: (await recordOf())?.listed_in_directory };
    // As an organization made before the directory was stored: no entry, no mark on its record.
    const record = await recordOf();
    await deleteStoredItems([{ pk: directory, sk: orgId }]);
    await removeStoredAttributes({ pk: String(record?.pk), sk: String(record?.sk) }, ['listed_in_directory']);
    const unlisted = await entered();

    // Act: a user acts (once the platform's few seconds of cached organizations have passed), then the organization is deleted.
    const user = await createUserSession(owner, 'DefaultUserRole');
    const listedByUse = await eventually(
      async () => {
        const agents = await api(`/v1/${orgId}/organization/agent`, { token: user.token });
        expectStatus('get agents', agents, 200);
        return (await entered()) ? true : undefined;
      },
      15_000,
      1_000,
    );
    const markedByUse = (await recordOf())?.listed_in_directory;
    const deleted = await api(`/v1/${orgId}/organization/`, { method: 'DELETE', token: owner.token });

    // Assess
    expect(listedAtCreation).toEqual({ entered: true, marked: true });
    expect(unlisted).toBe(false);
    expect(listedByUse).toBe(true);
    expect(markedByUse).toBe(true);
    expect(deleted.status).toBe(204);
    expect(await entered()).toBe(false);
  });
});

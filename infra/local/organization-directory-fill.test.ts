import { describe, expect, it } from 'vitest';
import { insertOrganization } from '#shared/composition/organization-creation';
import { updateItem } from '#shared/data/table';
import { newId } from '#shared/kernel/ids';
import { listedOrganizationIds, markOrganizationDeleted, organizationDirectory } from '#shared/organization/index';
import { organizations } from '#shared/organization/organization-repository';
import { useLocalAws } from '../../tests/unit/local/use-local-aws';
import { fillOrganizationDirectory } from './organization-directory-fill';

useLocalAws();

/** An organization as one made before the directory was stored: no entry, no mark on its record. */
const organizationFromBefore = async (): Promise<string> => {
  const orgId = `old-${newId().slice(-10)}`;
  await insertOrganization({
    orgId,
    fields: { org_name: 'Made before the directory' },
    images: {},
    clusterName: 'default',
    superAdminEmail: 'admin@example.com',
  });
  await organizationDirectory.erase(orgId);
  await updateItem({ Key: organizations.key(orgId, {}), UpdateExpression: 'REMOVE listed_in_directory' });
  return orgId;
};

const listed = async (): Promise<string[]> => {
  const ids: string[] = [];
  for (let page = await listedOrganizationIds(); ; page = await listedOrganizationIds(page.nextKey)) {
    ids.push(...page.orgIds);
    if (!page.nextKey) return ids;
  }
};

describe('fillOrganizationDirectory', () => {
  it('enters each organization made before the directory once, and no deleted one', async () => {
    // Prepare
    const [kept, deleted] = [await organizationFromBefore(), await organizationFromBefore()];
    await markOrganizationDeleted(deleted, new Date().toISOString());
    const before = await listed();

    // Act
    const first = await fillOrganizationDirectory();
    const second = await fillOrganizationDirectory();

    // Assess
    expect(before).not.toContain(kept);
    expect(first.listed).toEqual([kept]);
    expect(second.listed).toEqual([]);
    const after = await listed();
    expect(after).toContain(kept);
    expect(after).not.toContain(deleted);
  });
});

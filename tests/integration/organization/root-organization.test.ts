import { beforeAll, describe, expect, it } from 'vitest';
import { dataLayerEnv } from '../../support/data-layer-env';
import { api, harness } from '../support/client';
import { crossOrgHeaders, newOrganizationId, organizationBody, rootSession, type Session } from '../support/identity';

/**
 * The root organization is made, and on later starts brought up to date, by
 * `bootstrapRootOrganization` (what `npm start` runs on its data directory). Run here in the test
 * process against the platform's table, on organizations the test creates as earlier releases
 * left a root organization.
 */
let root: Session;
let bootstrap: typeof import('#shared/composition/root-organization');

beforeAll(async () => {
  root = await rootSession();
  for (const name of dataLayerEnv) process.env[name] = harness().awsEnv[name];
  bootstrap = await import('#shared/composition/root-organization');
});

/** An organization named as a root organization of an earlier release was, or as `names` say. */
const organizationNamed = async (names: { org_name: string; title: string }): Promise<string> => {
  const orgId = newOrganizationId();
  const created = await api(`/v1/${orgId}/organization/`, {
    method: 'PUT',
    token: root.token,
    headers: { ...crossOrgHeaders(root), 'x-database-cluster-name': 'default' },
    body: { ...organizationBody(), ...names },
  });
  expect(created.status, created.text).toBe(201);
  return orgId;
};

const namesOf = async (orgId: string) => {
  const organization = await api(`/v1/${orgId}/organization/`);
  return { org_name: organization.body.org_name, title: organization.body.title };
};

describe('upgrading a deployment', () => {
  it('renames a root organization an earlier release called "Platform operators" to "Platform administration"', async () => {
    // Prepare
    const orgId = await organizationNamed({ org_name: 'Platform', title: 'Platform operators' });

    // Act: the deployment starts again on its data.
    await bootstrap.bootstrapRootOrganization({ orgId, email: 'admin@localhost' });

    // Assess
    expect(await namesOf(orgId)).toEqual({ org_name: 'Platform administration', title: 'Platform administration' });
  });

  it('keeps a name the administrators chose for the root organization', async () => {
    // Prepare
    const orgId = await organizationNamed({ org_name: 'Acme platform', title: 'Acme platform team' });

    // Act
    await bootstrap.bootstrapRootOrganization({ orgId, email: 'admin@localhost' });

    // Assess
    expect(await namesOf(orgId)).toEqual({ org_name: 'Acme platform', title: 'Acme platform team' });
  });

  it('names a new root organization "Platform administration"', async () => {
    // Act
    const orgId = newOrganizationId();
    await bootstrap.bootstrapRootOrganization({ orgId, email: 'admin@localhost' });

    // Assess
    expect(await namesOf(orgId)).toEqual({ org_name: 'Platform administration', title: 'Platform administration' });
  });
});

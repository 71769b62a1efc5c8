import { frontendDns } from '../aws/frontend-dns';
import { transactWrite } from '../data/table';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { BadRequestError, ConflictError, ForbiddenError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { type BrandingImage, getOrganization, organizationCreateItems } from '../organization/index';
import { isReservedOrganizationId } from '../organization/organization-ids';
import { brandingImagesOf, type OrganizationFields } from '../organization/organizations';
import type { OrganizationRecord } from '../organization/schemas';
import { defaultUserPreferences } from '../organization/user-preferences';
import { currentDefaultRolesGeneration, defaultRole } from '../role/default-roles';
import { roleCreateItem } from '../role/index';
import { callerAtLeast } from '../role/privilege';
import { defaultRoleRecords } from '../role/roles';
import { type UserRecord, userCreateItems } from '../user/index';
import { newUserRecord } from '../user/users';

/*
 * Creating an organization writes records of three capabilities at once (the organization, its
 * default roles, its super user), so it lives here, above them, like the organization's erasure.
 */

export interface NewOrganization {
  orgId: string;
  fields: OrganizationFields;
  images: Partial<Record<BrandingImage, Buffer>>;
  clusterName: string | null;
  superAdminEmail: string;
}

/**
 * Writes a new organization, its four default roles and its verified super user in one
 * transaction: a failed create leaves nothing behind. Returns the super user.
 */
export const insertOrganization = async (organization: NewOrganization): Promise<UserRecord> => {
  const at = nowIso();
  const { orgId, fields } = organization;
  const record: OrganizationRecord = {
    org_id: orgId,
    org_name: fields.org_name,
    title: fields.title ?? null,
    main_description: fields.main_description ?? null,
    sub_description: fields.sub_description ?? null,
    onboarding_instructions: fields.onboarding_instructions ?? [],
    default_user_preferences: fields.default_user_preferences ?? defaultUserPreferences(),
    user_dimensions: fields.user_dimensions ?? [],
    devops_team_name: fields.devops_team_name ?? null,
    tenant_id: newId(),
    cluster_name: organization.clusterName,
    created_at: at,
    updated_at: at,
    default_roles_generation: currentDefaultRolesGeneration,
  };
  const superUser = newUserRecord(
    {
      orgId,
      firstName: 'Super',
      lastName: 'Administrator',
      email: organization.superAdminEmail,
      roleName: defaultRole('DefaultSuperAdministratorRole').name,
      verified: true,
      preferences: record.default_user_preferences,
    },
    at,
  );
  await transactWrite(
    [
      ...organizationCreateItems(record, organization.images),
      ...defaultRoleRecords(orgId, at).map(roleCreateItem),
      ...userCreateItems(superUser),
    ],
    () => new ConflictError(`Organization ${orgId} already exists.`),
  );
  return superUser;
};

export interface CreateOrganizationInput extends OrganizationFields {
  logo: string;
  square_logo: string;
  favicon: string;
  signup_page_headshot?: string | null;
}

export const createOrganization = async (
  orgId: string,
  caller: Caller,
  input: CreateOrganizationInput,
  clusterName: string,
): Promise<string> => {
  for (const permission of ['Organization:CreateOrganization', 'Role:CreateRole', 'User:InviteUser'] as const) {
    requirePermission(caller, permission);
  }
  if (!callerAtLeast(caller, defaultRole('DefaultSuperAdministratorRole').permission_grants)) {
    throw new ForbiddenError(
      'Creating an organization needs privileges at least those of DefaultSuperAdministratorRole.',
    );
  }
  if (isReservedOrganizationId(orgId)) throw new BadRequestError(`The organization id ${orgId} is reserved.`);
  if (await getOrganization(orgId, { includeDeleted: true }))
    throw new ConflictError(`Organization ${orgId} already exists.`);
  const images = brandingImagesOf(input);
  await insertOrganization({ orgId, fields: input, images, clusterName, superAdminEmail: config.superAdminEmail });
  await (await frontendDns()).addOrganization(orgId);
  return orgId;
};

import { frontendDns } from '../aws/frontend-dns';
import { transactWrite } from '../data/table';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { BadRequestError, ConflictError, ForbiddenError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { hasPermission, requirePermission } from '../kernel/permissions';
import { defaultRole } from '../role/default-roles';
import { callerAtLeast } from '../role/privilege';
import { roleCreateItem } from '../role/role-repository';
import { defaultRoleRecords } from '../role/roles';
import { defaultUserPreferences } from '../user/preferences';
import { type UserRecord, userCreateItems } from '../user/user-repository';
import { newUserRecord } from '../user/users';
import { checkBrandingImages } from './images';
import { isReservedOrganizationId } from './organization-ids';
import {
  type BrandingImage,
  getOrganization,
  organizationCreateItems,
  requireOrganization,
  updateOrganization,
} from './organization-repository';
import type { OrganizationRecord, UserDimension, UserPreferences } from './schemas';

export interface OrganizationView {
  org_id: string;
  org_name: string;
  title: string | null;
  main_description: string | null;
  sub_description: string | null;
  onboarding_instructions: string[];
  default_user_preferences: UserPreferences | null;
  tenant_id: string | null;
}

/** Public fields for anyone; preferences and tenant only for a caller with Organization:GetOrganizationDetails. */
export const getOrganizationView = async (orgId: string, caller: Caller | undefined): Promise<OrganizationView> => {
  const organization = await requireOrganization(orgId);
  const detailed = caller !== undefined && hasPermission(caller, 'Organization:GetOrganizationDetails');
  return {
    org_id: organization.org_id,
    org_name: organization.org_name,
    title: organization.title,
    main_description: organization.main_description,
    sub_description: organization.sub_description,
    onboarding_instructions: organization.onboarding_instructions,
    default_user_preferences: detailed ? organization.default_user_preferences : null,
    tenant_id: detailed ? organization.tenant_id : null,
  };
};

export const getUserDimensions = async (caller: Caller, orgId: string): Promise<UserDimension[]> => {
  requirePermission(caller, 'Organization:GetOrganizationDetails');
  return (await requireOrganization(orgId)).user_dimensions;
};

/** The descriptive fields set at creation and changeable later (null: unset / unchanged). */
interface OrganizationDescription {
  title?: string | null;
  main_description?: string | null;
  sub_description?: string | null;
  onboarding_instructions?: string[] | null;
  user_dimensions?: UserDimension[] | null;
  default_user_preferences?: UserPreferences | null;
}

export interface OrganizationFields extends OrganizationDescription {
  org_name: string;
  devops_team_name?: string | null;
}

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

/** The branding images of a create or modify request, decoded and checked (one 422 for all that fail). */
const brandingImagesOf = (input: Partial<Record<BrandingImage, string | null>>) =>
  checkBrandingImages({
    logo: input.logo,
    square_logo: input.square_logo,
    favicon: input.favicon,
    signup_page_headshot: input.signup_page_headshot,
  });

export interface CreateOrganizationInput extends OrganizationFields {
  logo: string;
  square_logo: string;
  favicon: string;
  signup_page_headshot?: string | null;
}

export const createOrganizationFor = async (
  caller: Caller,
  orgId: string,
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

export interface ModifyOrganizationInput extends OrganizationDescription {
  org_name?: string | null;
  logo?: string | null;
  square_logo?: string | null;
  favicon?: string | null;
  signup_page_headshot?: string | null;
}

/** `null` or omitted leaves a field unchanged. */
export const modifyOrganizationFor = async (
  caller: Caller,
  orgId: string,
  input: ModifyOrganizationInput,
): Promise<void> => {
  requirePermission(caller, 'Organization:ModifyOrganization');
  await requireOrganization(orgId);
  const images = brandingImagesOf(input);
  const changes = {
    org_name: input.org_name ?? undefined,
    title: input.title ?? undefined,
    main_description: input.main_description ?? undefined,
    sub_description: input.sub_description ?? undefined,
    onboarding_instructions: input.onboarding_instructions ?? undefined,
    user_dimensions: input.user_dimensions ?? undefined,
    default_user_preferences: input.default_user_preferences ?? undefined,
  };
  await updateOrganization(orgId, changes, images, nowIso());
};

import type { Caller } from '../kernel/caller';
import { nowIso } from '../kernel/ids';
import { hasPermission, requirePermission } from '../kernel/permissions';
import { checkBrandingImages } from './images';
import { type BrandingImage, requireOrganization, updateOrganization } from './organization-repository';
import {
  type ConversationRetentionDays,
  conversationRetentionDays,
  type UserDimension,
  type UserPreferences,
} from './schemas';

export interface OrganizationView {
  org_id: string;
  org_name: string;
  title: string | null;
  main_description: string | null;
  sub_description: string | null;
  onboarding_instructions: string[];
  default_user_preferences: UserPreferences | null;
  tenant_id: string | null;
  conversation_retention_days: ConversationRetentionDays | null;
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
    conversation_retention_days: detailed ? retentionDaysOf(organization) : null,
  };
};

/** The organization's conversation retention in days, 0 for none (also for a value no longer on the list). */
export const retentionDaysOf = (organization: { conversation_retention_days?: number }): ConversationRetentionDays =>
  conversationRetentionDays.find((days) => days === organization.conversation_retention_days) ?? 0;

export const getUserDimensions = async (orgId: string, caller: Caller): Promise<UserDimension[]> => {
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

/** The branding images of a create or modify request, decoded and checked (one 422 for all that fail). */
export const brandingImagesOf = (input: Partial<Record<BrandingImage, string | null>>) =>
  checkBrandingImages({
    logo: input.logo,
    square_logo: input.square_logo,
    favicon: input.favicon,
    signup_page_headshot: input.signup_page_headshot,
  });

export interface ModifyOrganizationInput extends OrganizationDescription {
  org_name?: string | null;
  logo?: string | null;
  square_logo?: string | null;
  favicon?: string | null;
  signup_page_headshot?: string | null;
  conversation_retention_days?: ConversationRetentionDays | null;
}

/** Sets the organization's name and title (undefined leaves one unchanged): the platform renaming its root organization. */
export const renameOrganization = (orgId: string, names: { org_name?: string; title?: string }): Promise<void> =>
  updateOrganization(orgId, names, {}, nowIso());

/** `null` or omitted leaves a field unchanged. */
export const modifyOrganization = async (
  orgId: string,
  caller: Caller,
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
    conversation_retention_days: input.conversation_retention_days ?? undefined,
  };
  await updateOrganization(orgId, changes, images, nowIso());
};

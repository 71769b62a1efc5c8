import { z } from 'zod';

export const userPreferencesRecord = z.object({
  enable_response_recommendation: z.boolean(),
  preferred_language: z.string().nullable(),
  conversations_visible_to_admins: z.boolean(),
  user_model_visible_to_admins: z.boolean(),
  timezone: z.string().nullable(),
  audio_keyterms: z.array(z.string()),
});

export type UserPreferences = z.infer<typeof userPreferencesRecord>;

export const userDimensionRecord = z.object({ description: z.string(), tags: z.array(z.string()) });

export type UserDimension = z.infer<typeof userDimensionRecord>;

export const organizationRecord = z.object({
  org_id: z.string(),
  org_name: z.string(),
  title: z.string().nullable(),
  main_description: z.string().nullable(),
  sub_description: z.string().nullable(),
  onboarding_instructions: z.array(z.string()),
  default_user_preferences: userPreferencesRecord,
  user_dimensions: z.array(userDimensionRecord),
  devops_team_name: z.string().nullable(),
  tenant_id: z.string(),
  cluster_name: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  /** Set by delete: the organization is considered deleted from then on. */
  deleted_at: z.string().optional(),
});

export type OrganizationRecord = z.infer<typeof organizationRecord>;

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

/**
 * How many days an organization keeps a conversation's data (its messages, events, voice audio and
 * prompt logs) after the conversation began; 0 keeps it until deleted. A fixed list, so that the
 * bucket has one lifecycle rule per value (objects tagged `retention-days={N}`).
 */
export const conversationRetentionDays = [0, 7, 30, 90, 180, 365, 730] as const;

export type ConversationRetentionDays = (typeof conversationRetentionDays)[number];

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
  /** A platform extension: conversation data expires this many days after it began; absent or 0: kept. */
  conversation_retention_days: z.number().int().optional(),
  /** Set by delete: the organization is considered deleted from then on. */
  deleted_at: z.string().optional(),
  /**
   * The generation of the default roles its roles have (`role/default-roles.ts`); absent: the
   * first, made before phone numbers. Raised by the upgrade that gives them what later ones added.
   */
  default_roles_generation: z.number().int().optional(),
  /** Whether the organization has its entry in the directory (`organization-directory.ts`); absent: made before it. */
  listed_in_directory: z.boolean().optional(),
});

export type OrganizationRecord = z.infer<typeof organizationRecord>;

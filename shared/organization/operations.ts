import { z } from 'zod';
import { mediaMaxBodyBytes, operationDefiner } from '../kernel/operation';
import { organizationPath, timestamp } from '../kernel/schemas';
import { organizationIdPattern } from './organization-ids';
import { conversationRetentionDays, organizationRecord, userDimensionRecord, userPreferencesRecord } from './schemas';
import { userPreferencesInput } from './user-preferences';

/*
 * Organizations, their API keys, user dimensions and the public signing keys (group
 * `organization`). Agents and state machines under /organization/ belong to group `agent`.
 */

const organizationOperation = operationDefiner({ group: 'organization', tag: 'Organization' });

/** Bounds keep the organization record well inside DynamoDB's item size: oversized input is a 422. */
const nonEmpty = z.string().trim().min(1).max(1000);
const text = z.string().max(2000);
const onboarding = z.array(z.string().max(10_000)).max(10);
const userDimension = z.object({ description: nonEmpty, tags: z.array(z.string().trim().min(1).max(100)).max(20) });
const userDimensions = z.array(userDimension).max(50);
const base64Image = z.string().describe('Base64 of the image bytes.');
const retentionDays = z
  .literal(conversationRetentionDays)
  .describe(
    `Platform extension: days a conversation's data (messages, events, voice audio, prompt logs) is kept after it began, one of ${conversationRetentionDays.join(', ')}; 0 keeps it until deleted. Applies to conversations begun from then on.`,
  );
const devopsTeamName = z
  .string()
  .trim()
  .min(1)
  .max(20)
  .regex(/^[a-z-]+$/, 'must contain only lowercase letters and hyphens');

export const getOrganizationOperation = organizationOperation({
  operationId: 'get-organization',
  method: 'GET',
  path: '/v1/{organization}/organization/',
  summary: 'Get an organization',
  auth: 'optional',
  request: { path: organizationPath },
  response: {
    status: 200,
    body: organizationRecord
      .pick({
        org_id: true,
        org_name: true,
        title: true,
        main_description: true,
        sub_description: true,
        onboarding_instructions: true,
      })
      .extend({
        default_user_preferences: userPreferencesRecord
          .nullable()
          .describe('Only for a signed-in caller holding Organization:GetOrganizationDetails.'),
        tenant_id: z
          .string()
          .nullable()
          .describe('Only for a signed-in caller holding Organization:GetOrganizationDetails.'),
        conversation_retention_days: retentionDays
          .nullable()
          .optional()
          .describe(
            'Platform extension, only for a signed-in caller holding Organization:GetOrganizationDetails: days conversation data is kept (0: until deleted).',
          ),
      }),
  },
});

export const createOrganizationOperation = organizationOperation({
  operationId: 'create-organization',
  method: 'PUT',
  path: '/v1/{organization}/organization/',
  summary: 'Create an organization',
  rateLimitPerMinute: 5,
  request: {
    // Base64 images.
    maxBodyBytes: mediaMaxBodyBytes,
    path: z.object({
      organization: z
        .string()
        .regex(organizationIdPattern, 'must be lowercase letters, digits and inner hyphens, at most 63 characters')
        .describe('The ID of the organization to create.'),
    }),
    body: z
      .object({
        org_name: nonEmpty,
        title: text.nullish(),
        main_description: text.nullish(),
        sub_description: text.nullish(),
        onboarding_instructions: onboarding.nullish(),
        user_dimensions: userDimensions.default([]),
        logo: base64Image.describe('PNG, aspect ratio 5:2, at least 400x160 px.'),
        square_logo: base64Image.describe('Square PNG, at least 40x40 px.'),
        favicon: base64Image.describe('Square ICO, at least 40x40 px.'),
        signup_page_headshot: base64Image.nullish().describe('PNG, aspect ratio 0.73, at least 292x400 px.'),
        default_user_preferences: userPreferencesInput.nullish(),
        devops_team_name: devopsTeamName.optional(),
        azure_devops_team_name: devopsTeamName.optional().describe('The reference’s name for devops_team_name.'),
      })
      .refine((body) => body.devops_team_name !== undefined || body.azure_devops_team_name !== undefined, {
        message: 'Field required: devops_team_name (or azure_devops_team_name).',
        path: ['devops_team_name'],
      }),
  },
  response: { status: 201, body: z.object({ org_id: z.string() }) },
});

export const modifyOrganizationOperation = organizationOperation({
  operationId: 'modify-organization',
  method: 'POST',
  path: '/v1/{organization}/organization/',
  summary: 'Modify an organization',
  rateLimitPerMinute: 10,
  request: {
    // Base64 images.
    maxBodyBytes: mediaMaxBodyBytes,
    path: organizationPath,
    body: z
      .object({
        org_name: nonEmpty.nullish(),
        title: text.nullish(),
        main_description: text.nullish(),
        sub_description: text.nullish(),
        onboarding_instructions: onboarding.nullish(),
        user_dimensions: userDimensions.min(1).nullish(),
        default_user_preferences: userPreferencesInput.nullish(),
        logo: base64Image.nullish(),
        square_logo: base64Image.nullish(),
        favicon: base64Image.nullish(),
        signup_page_headshot: base64Image.nullish(),
        conversation_retention_days: retentionDays.nullish(),
      })
      .prefault({}),
  },
  response: { status: 204 },
});

export const deleteOrganizationOperation = organizationOperation({
  operationId: 'delete-organization',
  method: 'DELETE',
  path: '/v1/{organization}/organization/',
  summary: 'Delete an organization and erase all its data',
  rateLimitPerMinute: 5,
  request: { path: organizationPath },
  response: { status: 204 },
});

export const createApiKeyOperation = organizationOperation({
  operationId: 'create-api-key',
  method: 'POST',
  path: '/v1/{organization}/organization/api_key/',
  summary: 'Create an API key',
  rateLimitPerMinute: 5,
  request: {
    path: organizationPath,
    body: z.object({
      name: z.string().trim().min(1).max(256).nullish().describe('An optional name to recognise the key by.'),
      duration: z.string().max(64).describe('ISO 8601 duration from 1 to 90 days, e.g. P30D.'),
      role_name: z.string().min(1).max(256).default('DefaultAdministratorRole'),
    }),
  },
  response: {
    status: 201,
    body: z.object({ api_key_id: z.string(), api_key: z.string(), expires_at: timestamp }),
  },
});

export const getApiKeysOperation = organizationOperation({
  operationId: 'get-api-keys',
  method: 'GET',
  path: '/v1/{organization}/organization/api_key/',
  summary: 'Get API keys for the organization',
  rateLimitPerMinute: 10,
  request: { path: organizationPath },
  response: {
    status: 200,
    body: z.object({
      api_keys: z.array(
        z.object({
          _id: z.string(),
          key_id: z.string(),
          name: z.string().nullable(),
          org_id: z.string(),
          created_at: timestamp,
          updated_at: timestamp,
          expires_at: timestamp,
          creator: z.object({ org_id: z.string(), user_id: z.string() }),
          role_id: z.string(),
          role_name: z.string(),
        }),
      ),
    }),
  },
});

export const deleteApiKeyOperation = organizationOperation({
  operationId: 'delete-api-key',
  method: 'DELETE',
  path: '/v1/{organization}/organization/api_key/{api_key_id}/',
  summary: 'Delete an API key',
  rateLimitPerMinute: 10,
  request: {
    path: organizationPath.extend({ api_key_id: z.string().min(1).max(64).describe('ID of the API key to delete.') }),
  },
  response: { status: 200, body: z.object({ deleted_key_id: z.string() }) },
});

export const getUserDimensionsOperation = organizationOperation({
  operationId: 'get-user-dimensions',
  method: 'GET',
  path: '/v1/{organization}/organization/user_dimensions/',
  summary: 'Get user dimensions for the organization',
  rateLimitPerMinute: 20,
  request: { path: organizationPath },
  response: { status: 200, body: z.object({ user_dimensions: z.array(userDimensionRecord) }) },
});

export const getJwksOperation = organizationOperation({
  operationId: 'get-jwks',
  method: 'GET',
  path: '/v1/{organization}/organization/jwks.json',
  summary: 'Public keys that verify the tokens the platform issues (JSON Web Key Set)',
  auth: 'none',
  request: { path: organizationPath },
  response: {
    status: 200,
    body: z.object({
      keys: z.array(
        z.object({
          kty: z.string(),
          crv: z.string(),
          x: z.string(),
          y: z.string(),
          kid: z.string(),
          alg: z.string(),
          use: z.string(),
        }),
      ),
    }),
  },
});

export const organizationOperations = [
  getOrganizationOperation,
  createOrganizationOperation,
  modifyOrganizationOperation,
  deleteOrganizationOperation,
  createApiKeyOperation,
  getApiKeysOperation,
  deleteApiKeyOperation,
  getUserDimensionsOperation,
  getJwksOperation,
] as const;

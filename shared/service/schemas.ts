import { z } from 'zod';
import { creatorInfo, objectId, pagedResponse, strippedText, tagList, tagsInput } from '../kernel/schemas';

/**
 * The reference describes an LLM preference as `{llm_name, params}`, the spec as
 * `{llm_name, top_p, temperature, top_k}`; both shapes are accepted and kept as given.
 */
export const llmConfigInput = z.object({
  llm_name: strippedText.describe('The name of the LLM to use.'),
  params: z.record(z.string(), z.unknown()).optional().describe('LLM-specific parameters to use.'),
  top_p: z.number().optional(),
  temperature: z.number().optional(),
  top_k: z.number().int().optional(),
});

const versionNumber = z.number().int().positive();

export const versionSetInput = z.object({
  agent_version_number: versionNumber
    .nullish()
    .transform((value) => value ?? null)
    .describe('The version number of the agent to be used; null uses the latest version.'),
  service_hierarchical_state_machine_version_number: versionNumber
    .nullish()
    .transform((value) => value ?? null)
    .describe('The version number of the state machine to be used; null uses the latest version.'),
  llm_model_preferences: z
    .record(z.string(), llmConfigInput)
    .default({})
    .describe('A map of LLM interaction name to the preferred LLM config for that interaction.'),
});

export const llmConfigRecord = z.object({
  llm_name: z.string(),
  params: z.record(z.string(), z.unknown()),
  top_p: z.number().optional(),
  temperature: z.number().optional(),
  top_k: z.number().int().optional(),
});

export const versionSetRecord = z.object({
  agent_version_number: z.number().int().nullable(),
  service_hierarchical_state_machine_version_number: z.number().int().nullable(),
  llm_model_preferences: z.record(z.string(), llmConfigRecord),
});

const keytermsInput = z
  .array(
    z
      .string()
      .trim()
      .regex(/^[a-z-]+( [a-z-]+){0,2}$/, 'must be one to three lowercase words'),
  )
  .max(20);

export const createServiceRequest = z.object({
  service_hierarchical_state_machine_id: objectId.describe('The ID of the state machine that this service uses.'),
  agent_id: objectId.describe('The ID of the agent that this service uses.'),
  name: strippedText.describe('The name of this service.'),
  description: strippedText.describe('A description of this service.'),
  is_active: z.boolean().describe('Whether the newly-created service is active.'),
  release_version_set: versionSetInput
    .nullish()
    .describe('The release version set; when omitted it equals the edge version set.'),
  keyterms: keytermsInput.default([]).describe('Terms that audio transcription tends to get wrong in this service.'),
  tags: tagsInput.default({}).describe('The tags of this service.'),
});

export const createServiceResponse = z.object({ id: z.string().describe('The ID of the newly created service.') });

export const updateServiceRequest = z.object({
  name: strippedText.nullish().describe('The name of the service. Only updated if not-null.'),
  description: strippedText.nullish().describe('A description of this service. Only updated if not-null.'),
  is_active: z.boolean().nullish().describe('The activeness of the service. Only updated if not-null.'),
  agent_id: objectId.nullish().describe('The ID of the agent that this service uses. Only updated if not-null.'),
  service_hierarchical_state_machine_id: objectId
    .nullish()
    .describe('The ID of the state machine that this service uses. Only updated if not-null.'),
  tags: tagsInput.nullish().describe('The tags of this service. Only updated if not-null.'),
  keyterms: keytermsInput.nullish().describe('Transcription key terms. Only updated if not-null.'),
});

export const upsertVersionSetRequest = z.object({
  version_set: versionSetInput.describe('The version set to upsert.'),
});

export const serviceRecord = z.object({
  id: z.string().describe('The identifier of the service.'),
  name: z.string().describe('The name of the service.'),
  version_sets: z.record(z.string(), versionSetRecord).describe('The available version sets of the service.'),
  description: z.string().describe('A description of the service.'),
  is_active: z.boolean().describe('Whether the service is active.'),
  service_hierarchical_state_machine_id: z.string().describe('The ID of the state machine that this service uses.'),
  agent_id: z.string().describe('The ID of the agent that this service uses.'),
  tags: tagList.describe('The tags of the service.'),
  keyterms: z.array(z.string()).describe('Terms that audio transcription tends to get wrong in this service.'),
  creator: creatorInfo.describe('The user who created the service.'),
  updated_by: creatorInfo.describe('The user who last updated the service.'),
});

export const listServicesResponse = pagedResponse({
  services: z.array(serviceRecord).describe('The services that are found.'),
}).extend({
  filter_values: z
    .object({ tags: z.array(z.string()).describe('The tags of the services, as key:value.') })
    .nullable()
    .describe('Values the filters can take, counted over every service; only on the first page.'),
});

export type LlmConfigInput = z.infer<typeof llmConfigInput>;
export type VersionSetInput = z.infer<typeof versionSetInput>;
export type VersionSetRecord = z.infer<typeof versionSetRecord>;
export type LlmConfigRecord = z.infer<typeof llmConfigRecord>;
export type CreateServiceRequest = z.infer<typeof createServiceRequest>;
export type UpdateServiceRequest = z.infer<typeof updateServiceRequest>;
export type ServiceRecord = z.infer<typeof serviceRecord>;

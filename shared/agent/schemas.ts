import { z } from 'zod';
import { creatorInfo, pagedResponse, strippedText, timestamp } from '../kernel/schemas';

const relationshipToDeveloper = z.object({
  ownership: strippedText.describe("The agent's belief of which entity owns it."),
  type: strippedText.describe('The entity that the agent regards itself as.'),
  conversation_visibility: strippedText.describe(
    'Whether the agent believes that its owner can see its conversations with clients.',
  ),
  thought_visibility: strippedText.describe(
    'Whether the agent believes that its owner can see its inner thoughts when engaging in conversations with its clients.',
  ),
});

export const identityInput = z.object({
  name: strippedText.describe('A human friendly name of the agent.'),
  role: strippedText.describe("The agent's role within the organization."),
  developed_by: strippedText.describe('A human-friendly name of the organization that developed this agent.'),
  default_spoken_language: z
    .string()
    .regex(/^[a-z]{3}$/, 'must be an ISO 639-3 language code (three lowercase letters)')
    .describe("The agent's primary language, as an ISO 639-3 code."),
  relationship_to_developer: relationshipToDeveloper.describe('Relationship of the agent to its developer.'),
});

/**
 * The reference's request carries only `voice_id`; the spec adds the three tuning numbers,
 * so they are accepted too and default to 0 as in the reference's stored records.
 */
export const voiceConfigInput = z.object({
  voice_id: strippedText.describe('The voice ID; it must be one the platform knows.'),
  stability: z.number().optional(),
  similarity_boost: z.number().optional(),
  style: z.number().optional(),
});

/** `{}` in a not-set-able field means "leave unchanged". */
const keepExisting = z.strictObject({});

export const agentVersionBody = z.object({
  initials: z.string().trim().min(1).max(3).nullish().describe("The agent's initials."),
  identity: identityInput.nullish().describe("Information about the agent's identity."),
  background: strippedText.nullish().describe("A description of the agent's background."),
  behaviors: z.array(strippedText).nullish().describe('A list of behavioral guidelines that this agent follows.'),
  communication_patterns: z
    .array(strippedText)
    .nullish()
    .describe('A list of descriptions that illustrate the communication styles of this agent.'),
  voice_config: z
    .union([voiceConfigInput, keepExisting])
    .nullish()
    .describe('The voice config of the agent: null means the default settings, {} keeps the existing one.'),
});

export const voiceConfigRecord = z.object({
  voice_id: z.string(),
  stability: z.number(),
  similarity_boost: z.number(),
  style: z.number(),
});

export const agentRecord = z.object({
  id: z.string().describe('The ID of the agent.'),
  name: z.string().describe('The name of the agent.'),
  deprecated: z.boolean().describe('Whether the agent has been deprecated.'),
  latest_version: z
    .number()
    .int()
    .nullable()
    .describe('The latest version of the agent; null while no version exists.'),
});

/** What a version holds besides its bookkeeping: the fields a new version inherits. */
export const agentVersionContent = z.object({
  initials: z.string(),
  identity: z.object({
    name: z.string(),
    role: z.string(),
    developed_by: z.string(),
    default_spoken_language: z.string(),
    relationship_to_developer: z.object({
      ownership: z.string(),
      type: z.string(),
      conversation_visibility: z.string(),
      thought_visibility: z.string(),
    }),
  }),
  background: z.string(),
  behaviors: z.array(z.string()),
  communication_patterns: z.array(z.string()),
  voice_config: voiceConfigRecord.nullable().describe('The voice configuration; null means the default settings.'),
});

export const agentVersionRecord = z.object({
  org_id: z.string().describe('The ID of the organization of this agent.'),
  agent_id: z.string().describe('The ID of this agent.'),
  version: z.number().int().describe('The version of the agent.'),
  ...agentVersionContent.shape,
  created_at: timestamp.describe('The time at which this version was created.'),
  creator: creatorInfo.describe('The user who created this version of the agent.'),
});

export const createAgentRequest = z.object({
  agent_name: strippedText.max(256).describe('The name of the new agent.'),
});

export const createAgentResponse = z.object({ id: z.string().describe('The ID of the newly created agent.') });

export const createAgentVersionResponse = z.object({
  id: z.string().describe('The ID of this version.'),
  version: z.number().int().describe('The version number; the first version of an agent is 1.'),
  created_at: timestamp.describe('The time at which this version was created.'),
});

export const listAgentsResponse = pagedResponse({
  agents: z.array(agentRecord).describe('The agents for this organization.'),
});

export const listAgentVersionsResponse = pagedResponse({
  agent_versions: z.array(agentVersionRecord).describe('The returned agent versions.'),
});

export type AgentVersionBody = z.infer<typeof agentVersionBody>;
export type AgentRecord = z.infer<typeof agentRecord>;
export type AgentVersionContent = z.infer<typeof agentVersionContent>;
export type AgentVersionRecord = z.infer<typeof agentVersionRecord>;
export type VoiceConfigRecord = z.infer<typeof voiceConfigRecord>;

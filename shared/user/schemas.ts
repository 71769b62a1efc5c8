import { z } from 'zod';
import { timestamp } from '../kernel/schemas';
import { userDimensionRecord, userPreferencesRecord } from '../organization/schemas';

export const userRecord = z.object({
  org_id: z.string(),
  user_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  role_name: z.string(),
  is_verified: z.boolean(),
  verified_at: z.string().nullable(),
  preferences: userPreferencesRecord,
  user_stats: z.object({
    num_conversations: z.number().int(),
    num_messages: z.number().int(),
    last_message_time: z.string().nullable(),
  }),
  additional_context: z.array(z.string()),
  nonsensitive_variables: z.record(z.string(), z.string()),
  sensitive_variables: z.record(z.string(), z.string()),
  enable_devops_access: z.boolean(),
  /** A simulation run's synthetic user: readable by id, left out of the organization's lists. */
  is_simulated: z.literal(true).optional(),
  /** A simulation session's synthetic user expires with its session (epoch seconds, the table's TTL attribute). */
  expires_at_epoch: z.number().int().optional(),
  created_at: z.string(),
  updated_at: z.string(),
  /** Optimistic concurrency: every write moves it on. */
  version: z.number().int(),
});
export type UserRecord = z.infer<typeof userRecord>;

export const memoryRecord = z.object({
  id: z.string(),
  user_id: z.string(),
  created_at: z.string(),
  conversation_id: z.string(),
  /** The service of the conversation (permission conditions may name it). */
  service_id: z.string(),
  /** Ids of the messages the memory was drawn from. */
  references: z.array(z.string()),
  content: z.string(),
  context: z.string(),
});

export type MemoryRecord = z.infer<typeof memoryRecord>;

export const userModel = z.object({
  content: z.string(),
  /** Ids of the memories the model was built from. */
  insight_ids: z.array(z.string()),
  dimensions: z.array(userDimensionRecord),
});

export const userModelsRecord = z.object({
  user_id: z.string(),
  user_models: z.array(userModel),
  updated_at: z.string(),
  revision: z.number().int(),
});

export type UserModel = z.infer<typeof userModel>;

export type UserModelsRecord = z.infer<typeof userModelsRecord>;

export const userModelResponse = z.object({
  user_models: z.array(userModel).describe('The latest user models of the user.'),
  additional_context: z.array(z.string()).describe('The additional context of the user.'),
});

export const memoryInstance = z.object({
  id: z.string(),
  created_at: timestamp,
  conversation_id: z.string(),
  references: z.array(z.string()).describe('The messages the memory refers to.'),
  content: z.string(),
  context: z.string(),
});

export type MemoryInstance = z.infer<typeof memoryInstance>;

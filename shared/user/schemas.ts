import { z } from 'zod';
import { timestamp } from '../kernel/schemas';
import { userDimensionRecord } from '../organization/schemas';

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

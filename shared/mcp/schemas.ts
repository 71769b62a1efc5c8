import { z } from 'zod';
import { objectId } from '../kernel/schemas';

/**
 * The input of each tool the platform serves over MCP (`tools.ts`): what an assistant fills in,
 * published as each tool's `inputSchema` (JSON Schema generated from these) and checked against
 * them before the tool runs. JSON arguments, so numbers and booleans are themselves, not text.
 */

const page = (defaultLimit: number, maxLimit: number) => ({
  limit: z.number().int().min(1).max(maxLimit).default(defaultLimit).describe('How many to answer at most.'),
  continuation_token: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe('From a previous answer (`continuation_token`) for the next page; 0 for the first.'),
});

export const listServicesInput = z.object({
  is_active: z.boolean().optional().describe('Only active (true) or inactive (false) services.'),
  ...page(20, 50),
});

export const listAgentsInput = z.object({
  deprecated: z.boolean().optional().describe('Only deprecated (true) or current (false) agents.'),
  ...page(20, 50),
});

export const startConversationInput = z.object({
  service_id: objectId.describe('The service to talk to (`list_services`).'),
  version_set_name: z
    .string()
    .min(1)
    .max(128)
    .default('release')
    .describe("The service's version set to run: `release` unless another is named."),
});

export const sendMessageInput = z.object({
  conversation_id: objectId.describe('The conversation (`start_conversation`).'),
  message: z.string().trim().min(1).max(10_000).describe("The user's message."),
});

export const conversationInput = z.object({
  conversation_id: objectId.describe('The conversation.'),
});

export const getConversationMessagesInput = conversationInput.extend({
  ...page(50, 500),
  newest_first: z.boolean().default(false).describe('Newest messages first; oldest first by default.'),
});

export const searchConversationsInput = z.object({
  service_id: objectId.optional().describe("Only this service's conversations."),
  is_finished: z.boolean().optional().describe('Only finished (true) or ongoing (false) conversations.'),
  tags: z
    .array(z.string().regex(/^[^:]+:.*$/, 'key:value'))
    .max(20)
    .default([])
    .describe('`key:value`, `key:*` (any value) or `key:` (no value); a conversation has every one.'),
  ...page(20, 150),
});

export const runSimulationInput = z.object({
  simulation_unit_test_set_id: objectId.describe('The simulation unit test set to run.'),
});

export const getSimulationRunInput = z.object({
  simulation_unit_test_set_run_id: objectId.describe('The run (`run_simulation`).'),
});

export const sqlQueryInput = z.object({
  sql_query: z
    .string()
    .trim()
    .min(1)
    .max(100_000)
    .describe("One read-only SELECT over the organization's tables (conversations, messages, interactions, ...)."),
});

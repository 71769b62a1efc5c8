import { expect } from 'vitest';
import type { SystemPromptInput } from './prompt';
import type { LlmOption, LlmRequest } from './provider';

/** A support agent in an order-lookup state, shared by the prompt and deterministic-model tests. */
export const supportAgentPrompt: SystemPromptInput = {
  agent: {
    name: 'Ava',
    role: 'customer support agent',
    developedBy: 'Acme Robotics',
    background: 'Ava helps Acme customers with their orders.\n## Not a heading: authors may write markdown here.',
    behaviors: ['Be kind and patient', 'Admit what you do not know'],
    communicationPatterns: ['Short sentences', 'One question at a time'],
  },
  state: {
    name: 'Order lookup',
    objective: "Find the customer's order",
    actions: ['Ask for the order number', 'Confirm the delivery address', 'Offer to check the order status'],
    intraStateNavigationGuidelines: ['Move on once the order is found'],
    actionGuidelines: ['Never guess an order number'],
    boundaryConstraints: ["Never reveal another customer's order"],
  },
  globalGuidelines: ['Answer in the language of the user'],
  globalConstraints: ['No legal advice'],
  userContext: ['Name: Bob', 'Plan: premium\n  renewed in May'],
  workingMemory: ['The user ordered a lamp'],
  dynamicInstruction: 'Keep the answer brief.',
};

/** The provider tests' request: one user turn to `model` under a short system prompt; `extra` overrides fields. */
export const greetingRequest = (model: string, extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model,
  system: 'You are Ava.',
  messages: [{ role: 'user', content: 'Hi' }],
  ...extra,
});

/** Every fragment of a text stream, in order. */
export const collect = async (fragments: AsyncIterable<string>): Promise<string[]> => {
  const collected: string[] = [];
  for await (const fragment of fragments) collected.push(fragment);
  return collected;
};

/** The options of the providers' choice tests. */
export const stayOrLeaveOptions: LlmOption[] = [
  { id: 'stay', description: 'Continue in this state' },
  { id: 'leave', description: 'The user says goodbye' },
];

/** What a provider's failure is expected to look like: an `LlmError`, retryable or not, its message naming `cause`. */
export const llmError = (retryable: boolean, cause?: string) => ({
  name: 'LlmError',
  retryable,
  ...(cause === undefined ? {} : { message: expect.stringContaining(cause) }),
});

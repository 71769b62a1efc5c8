// Shapes the adapters ask models for and validate on the way back: a choice among options and
// the input of a tool call.
import { z } from 'zod';
import { type LlmChoice, LlmError, type LlmOption } from './provider';

/** Name of the tool (Bedrock) or response schema (OpenAI) through which a model reports its choice. */
export const CHOICE_NAME = 'choose_option';

/** Rejects an empty option list: there is nothing a model could validly pick. */
export const requireOptions = (options: LlmOption[]): void => {
  if (options.length === 0) throw new LlmError('chooseOption needs at least one option', { retryable: false });
};

/** JSON Schema of a choice: one of the option ids and a short reasoning. */
export const choiceSchema = (options: LlmOption[]): Record<string, unknown> => ({
  type: 'object',
  properties: {
    id: { type: 'string', enum: options.map((option) => option.id), description: 'The id of the chosen option.' },
    reasoning: { type: 'string', description: 'Why this option fits the conversation, in one or two sentences.' },
  },
  required: ['id', 'reasoning'],
  additionalProperties: false,
});

/** The system prompt of a choice call: the caller's prompt plus the options to choose from. */
export const choiceSystemPrompt = (system: string, options: LlmOption[]): string => {
  const task = [
    '## Choice',
    'Based on the conversation so far, choose exactly one of the options below. Report the choice as ' +
      '{"id": "<option id>", "reasoning": "<why, briefly>"}.',
    ...options.map((option) => `- ${option.id}: ${option.description}`),
  ].join('\n');
  return system.trim() === '' ? task : `${system}\n\n${task}`;
};

/** Validates a model's choice; an id outside the options is a non-retryable {@link LlmError}. */
export const parseChoice = (value: unknown, options: LlmOption[]): LlmChoice => {
  const ids = options.map((option) => option.id);
  const parsed = z.object({ id: z.enum(ids), reasoning: z.string() }).safeParse(value);
  if (!parsed.success) {
    throw new LlmError(`model answered with an invalid choice (expected one of: ${ids.join(', ')})`, {
      retryable: false,
      cause: parsed.error,
    });
  }
  return parsed.data;
};

/** Validates a tool call's input, which must be a JSON object. */
export const parseToolInput = (value: unknown, toolName: string): Record<string, unknown> => {
  const parsed = z.record(z.string(), z.unknown()).safeParse(value);
  if (!parsed.success) {
    throw new LlmError(`model called tool ${toolName} with an input that is not an object`, {
      retryable: false,
      cause: parsed.error,
    });
  }
  return parsed.data;
};

import { LlmError } from '../llm/provider';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import {
  buildSimulatedUserPrompt,
  SIMULATED_USER_SCHEMA_NAME,
  type SimulatedUserBrief,
  type SimulatedUserLine,
  type SimulatedUserTurn,
  simulatedUserSchema,
  simulatedUserTurn,
} from '../llm/simulated-user-prompt';

/**
 * The simulated user: a model asked, through the provider interface, for the next message of a
 * persona pursuing a scenario's objective (`simulated-user-prompt.ts`). The model is the run's
 * `simulated_user` preference, else its `default`; the built-in deterministic model answers by
 * fixed rules (`deterministic-simulated-user.ts`), honestly not a language model.
 */

/** The model preference key of the simulated user. */
export const simulatedUserPurpose = 'simulated_user';

/** An invalid answer is asked for once more. */
const attempts = 2;

export const nextSimulatedUserTurn = async (
  preferences: LlmModelPreferences,
  brief: SimulatedUserBrief,
  transcript: SimulatedUserLine[],
  signal?: AbortSignal,
): Promise<SimulatedUserTurn & { model: string }> => {
  const { provider, source: _source, ...settings } = resolveModel(preferences, simulatedUserPurpose);
  const prompt = buildSimulatedUserPrompt({ brief, transcript });
  let lastError: unknown;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    const answer = await provider.generateObject({
      ...settings,
      ...prompt,
      schemaName: SIMULATED_USER_SCHEMA_NAME,
      schemaDescription: "The simulated user's next message and whether it ends the conversation.",
      schema: simulatedUserSchema,
      signal,
    });
    const parsed = simulatedUserTurn.safeParse(answer.value);
    if (parsed.success) return { ...parsed.data, model: `${provider.name}:${settings.model}` };
    lastError = parsed.error;
  }
  throw new LlmError('The simulated user model gave no usable turn.', { retryable: false, cause: lastError });
};

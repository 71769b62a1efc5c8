import { z } from 'zod';
import { logger } from '../aws/observability';
import { contentWords } from '../llm/content-words';
import { simulateUserByRules } from '../llm/deterministic-simulated-user';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import type { SimulatedUserBrief, SimulatedUserLine } from '../llm/simulated-user-prompt';
import { simulatedUserPurpose } from './simulated-user';

/*
 * Proposed next caller texts for a session (`recommend`): what a tester might try next. The
 * model is the session's `simulated_user` preference, else its default. The built-in deterministic
 * model is no language model, so it (or a model that fails to answer in shape) leaves a rule-based
 * stand-in, labelled so: the persona's next line by the simulated user's rules, answers to the
 * agent's question, a question about what the agent last spoke of, and fixed probes (a person, a
 * misunderstanding, a goodbye).
 */

const answer = z.object({ suggestions: z.array(z.string().min(1).max(2000)).min(1).max(20) });

const answerSchema: Record<string, unknown> = {
  type: 'object',
  properties: {
    suggestions: {
      type: 'array',
      items: { type: 'string' },
      description: 'Different things the caller could say next, each one message.',
    },
  },
  required: ['suggestions'],
  additionalProperties: false,
};

/** The rule-based stand-in's suggestions, most telling first. */
export const ruleBasedSuggestions = (
  brief: SimulatedUserBrief,
  transcript: SimulatedUserLine[],
  n: number,
): string[] => {
  const lastAgent = transcript.findLast((line) => line.speaker === 'agent')?.text ?? '';
  const asked = lastAgent.includes('?');
  const [topic] = [...contentWords(lastAgent).values()].sort((a, b) => b.length - a.length);
  const candidates = [
    simulateUserByRules({ brief, transcript }).message,
    ...(asked ? ['Yes, please.', 'No, not right now.'] : []),
    ...(topic ? [`Can you tell me more about ${topic}?`] : []),
    'Can I talk to a person instead?',
    'Sorry, I did not understand. Could you say that differently?',
    'Thanks, that is all I needed.',
  ];
  return [...new Set(candidates.map((text) => text.trim()).filter((text) => text !== ''))].slice(0, n);
};

/** Who the caller is and what they came for, as the model is told. */
const callerOf = ({ persona, scenario }: SimulatedUserBrief): string =>
  [
    persona
      ? `The caller is ${persona.name} (${persona.role || 'a user'}): ${persona.background}`
      : 'The caller is an ordinary user of the service.',
    scenario ? `Their objective: ${scenario.objective}` : 'They came with no particular objective.',
  ].join(' ');

export const recommendCallerTexts = async (
  preferences: LlmModelPreferences,
  brief: SimulatedUserBrief,
  transcript: SimulatedUserLine[],
  n: number,
): Promise<{ suggestions: string[]; generated_by: string }> => {
  const { provider, source: _source, ...settings } = resolveModel(preferences, simulatedUserPurpose);
  const ruleBased = () => ({ suggestions: ruleBasedSuggestions(brief, transcript, n), generated_by: 'rule-based' });
  if (provider.name === 'deterministic') return ruleBased();
  try {
    const result = await provider.generateObject({
      ...settings,
      system: `You help test a conversational agent. ${callerOf(brief)} Propose ${n} different, realistic things the caller could say next, including ones that test the agent's limits.`,
      messages: [
        {
          role: 'user',
          content:
            transcript.map((line) => `${line.speaker}: ${line.text}`).join('\n') || '(The conversation has not begun.)',
        },
      ],
      schemaName: 'next_caller_texts',
      schemaDescription: 'Proposed next caller messages.',
      schema: answerSchema,
    });
    return {
      suggestions: answer.parse(result.value).suggestions.slice(0, n),
      generated_by: `${provider.name}:${settings.model}`,
    };
  } catch (error) {
    logger.warn('the model proposed no next caller texts; the rule-based ones are given', { error: error as Error });
    return ruleBased();
  }
};

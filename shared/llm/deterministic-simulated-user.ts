import { contentWords } from './content-words';
import type { SimulatedUserPromptInput, SimulatedUserTurn } from './simulated-user-prompt';

const FAREWELL = 'Thank you, that is everything I needed. Goodbye.';

const sentencesOf = (text: string): string[] =>
  (text.match(/[^.!?\n]+[.!?]?/g) ?? []).map((sentence) => sentence.trim()).filter((sentence) => sentence !== '');

/** The persona's sentence (background or user model) sharing the most content words with `asked`. */
const answerFrom = (facts: string[], asked: string): string | undefined => {
  const wanted = contentWords(asked);
  const scored = facts
    .map((fact) => ({ fact, shared: [...contentWords(fact).keys()].filter((key) => wanted.has(key)).length }))
    .filter((candidate) => candidate.shared > 0)
    .sort((a, b) => b.shared - a.shared);
  return scored[0]?.fact;
};

/**
 * The simulated user of the built-in deterministic model. It is NOT a language model: it follows
 * fixed rules over the brief, so a whole simulation runs offline and the same conversation always
 * goes the same way.
 *
 * - Its first message introduces the persona (name, role) and states the scenario's objective.
 * - Each later message answers the agent's question, when the agent asked one, with the persona's
 *   background or user-model sentence that shares the most words with it, then takes the next
 *   sentence of the scenario's instructions as its next step.
 * - Once the instructions are all said, it thanks the agent, says goodbye and completes the conversation.
 */
export const simulateUserByRules = ({ brief, transcript }: SimulatedUserPromptInput): SimulatedUserTurn => {
  const { persona, scenario } = brief;
  const spoken = transcript.filter((line) => line.speaker === 'user').length;
  if (spoken === 0) {
    const who = persona.role === '' ? persona.name : `${persona.name}, ${persona.role}`;
    return { message: `Hi, I'm ${who}. ${scenario.objective}`.trim(), conversation_completed: false };
  }
  const steps = sentencesOf(scenario.instructions);
  const lastAgent = transcript.findLast((line) => line.speaker === 'agent')?.text ?? '';
  const answer = lastAgent.includes('?')
    ? answerFrom([...sentencesOf(persona.background), ...persona.user_models], lastAgent)
    : undefined;
  const step = steps[spoken - 1];
  if (step === undefined) {
    return { message: answer ? `${answer} ${FAREWELL}` : FAREWELL, conversation_completed: true };
  }
  return { message: answer ? `${answer} ${step}` : step, conversation_completed: false };
};

import { contentWords } from './content-words';
import type {
  SimulatedPersona,
  SimulatedScenario,
  SimulatedUserLine,
  SimulatedUserPromptInput,
  SimulatedUserTurn,
} from './simulated-user-prompt';

const FAREWELL = 'Thank you, that is everything I needed. Goodbye.';

/** The sentences of a text, a quotation (“…”) kept whole. */
const sentencesOf = (text: string): string[] =>
  (text.match(/(?:[“"][^”"]*[”"]|[^.!?\n“"])+[.!?]?/g) ?? [])
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '');

const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);
const lowered = (text: string): string => text.charAt(0).toLowerCase() + text.slice(1);
const withoutStop = (text: string): string => text.replace(/[.!?:;,\s]+$/, '');
const ended = (text: string, mark: '.' | '?'): string => `${capitalized(withoutStop(text))}${mark}`;

/** What the instructions say of the caller, in the caller's own words: "your order" is "my order". */
const ownWords = (text: string): string =>
  text
    .replace(/^you\b/i, 'I')
    .replace(/\byou are\b/gi, 'I am')
    .replace(/\byou're\b/gi, "I'm")
    .replace(/\byourself\b/gi, 'myself')
    .replace(/\byours\b/gi, 'mine')
    .replace(/\byour\b/gi, 'my')
    .replace(/\byou\b/gi, 'me');

/** How a line a caller would say as it stands begins: a greeting, a question, a sentence about themselves. */
const SPOKEN_START =
  /^(i|i'm|im|i've|i'd|my|we|our|it|it's|its|the|a|an|this|that|there|hi|hello|yes|no|please|thanks|thank|sorry|ok|okay|can|could|would|will|is|are|does|did|what|why|how|when|where|who|which)\b/i;

/** Instructions on how to behave (answer briefly, be impatient, keep to English): never said. */
const CONDUCT =
  /^(answer|respond|reply|be|stay|keep|remain|continue|go on|behave|act|play|pretend|use|speak|talk|write|never|always|avoid|wait|follow|sound|try|do not|don't|let)\b/i;

/**
 * A sentence of the scenario's instructions as the caller would say it, or undefined for an
 * instruction on how to behave. "Say the lamp arrived broken" is "The lamp arrived broken.", "Ask
 * for a refund" is "Could I get a refund?", "Ask why it jams" is "Could you tell me why it jams?",
 * another imperative ("Request a technician") is what the caller would like to do.
 */
const spokenStep = (sentence: string): string | undefined => {
  const quoted = /[“"]([^”"]+)[”"]/.exec(sentence)?.[1];
  if (quoted) return quoted.trim();
  const text = withoutStop(sentence);
  if (CONDUCT.test(text)) return undefined;
  if (SPOKEN_START.test(text)) return sentence;
  const said =
    /^(?:say|tell(?: the agent| them| him| her)?|state|insist|confirm|add|note|mention|explain|report)(?: that|:)\s+(.+)$/i.exec(
      text,
    );
  if (said) return ended(ownWords(said[1] as string), '.');
  const plainlySaid = /^(?:say|tell the agent)\s+(.+)$/i.exec(text);
  if (plainlySaid) return ended(ownWords(plainlySaid[1] as string), '.');
  const asked =
    /^ask(?: the agent| them| him| her)?\s+(to|for|about|regarding|whether|if|why|what|when|where|how|who|which)?\s*(.+)$/i.exec(
      text,
    );
  if (asked) {
    const [, word = '', rest = ''] = asked;
    const what = ownWords(rest);
    switch (word.toLowerCase()) {
      case 'to':
        return `Could you ${what}?`;
      case 'for':
        return `Could I get ${what}?`;
      case 'about':
      case 'regarding':
        return `Could you tell me about ${what}?`;
      case '':
        return `Could you tell me ${what}?`;
      default:
        return `Could you tell me ${word.toLowerCase()} ${what}?`;
    }
  }
  return `I'd like to ${lowered(ownWords(text))}.`;
};

/**
 * The lines the scenario's instructions give the caller, in order. Lines listed under a heading
 * ending with a colon ("Say these one a turn, as the user did:") are said as they stand; other
 * instructions are taken sentence by sentence (`spokenStep`), those on how to behave left out.
 */
const stepsOf = (instructions: string): string[] => {
  const lines = instructions
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const heading = lines.findIndex((line) => line.endsWith(':'));
  if (heading >= 0) return lines.slice(heading + 1);
  return sentencesOf(instructions).flatMap((sentence) => spokenStep(sentence) ?? []);
};

/** What the caller came for, in their own words: "Get a refund" is "I'd like to get a refund." */
const wishOf = (scenario: SimulatedScenario | null): string => {
  if (!scenario) return 'I have a question about your service.';
  const objective = withoutStop(scenario.objective);
  if (objective === '') return 'I have a question about your service.';
  return spokenStep(scenario.objective) ?? `I'd like to ${lowered(ownWords(objective))}.`;
};

/** The persona's facts (background sentences, user models) as they would say them: "Her order" is "My order". */
const factsOf = (persona: SimulatedPersona | null): string[] =>
  persona
    ? [...sentencesOf(persona.background), ...persona.user_models].map((fact) =>
        fact.replace(/^(her|his|their)\b/i, 'My'),
      )
    : [];

/** The fact sharing the most content words with `asked`. */
const answerFrom = (facts: string[], asked: string): string | undefined => {
  const wanted = contentWords(asked);
  const scored = facts
    .map((fact) => ({ fact, shared: [...contentWords(fact).keys()].filter((key) => wanted.has(key)).length }))
    .filter((candidate) => candidate.shared > 0)
    .sort((a, b) => b.shared - a.shared);
  return scored[0]?.fact;
};

/** Answers to a yes-or-no question, to another question, and what keeps a conversation going, each tried in turn. */
const GOING_ON = {
  yesOrNo: ['Yes, please.', 'Yes, that would help.', 'Sure, go ahead.'],
  open: ["I'm not sure. What would you suggest?", 'Whatever you think is best.', 'Could you give me an example?'],
  told: [
    'Okay. Could you tell me more?',
    'I see. What would you need from me?',
    'Thanks. What happens next?',
    'Alright. Is there anything else I should know?',
  ],
};

/**
 * With no scenario to pursue, what a caller says next to keep the conversation going where the
 * agent leads it: an answer to its question, else a follow-up; a line already said is said again
 * only once all of its kind are.
 */
const goingOn = (transcript: SimulatedUserLine[], lastAgent: string, asked: boolean): string => {
  const said = transcript.filter((line) => line.speaker === 'user').map((line) => line.text);
  const lastSentence =
    lastAgent
      .split(/[.!]\s+/)
      .at(-1)
      ?.trim() ?? '';
  const kind = !asked
    ? GOING_ON.told
    : /^(would|do|shall|can|should|may|is|are|will)\b/i.test(lastSentence)
      ? GOING_ON.yesOrNo
      : GOING_ON.open;
  return kind.find((line) => !said.includes(line)) ?? (kind[said.length % kind.length] as string);
};

/**
 * The simulated user of the built-in deterministic model. It is NOT a language model: it follows
 * fixed rules over the brief, so a whole simulation runs offline and the same conversation always
 * goes the same way. Its instructions are never said as they are written.
 *
 * - Its first message greets the agent (with the persona's name and role, when it has one) and
 *   says what it came for: the scenario's objective in its own words, or a question about the
 *   service when it has no scenario.
 * - Each later message answers the agent's question, when the agent asked one, with the persona's
 *   fact that shares the most words with it, then says the scenario's next line (`stepsOf`).
 * - Once the scenario's lines are all said, it thanks the agent, says goodbye and completes the
 *   conversation. Without a scenario it never completes it: it answers and asks on, from wherever
 *   the conversation is (a fork continues from where it forks).
 */
export const simulateUserByRules = ({ brief, transcript }: SimulatedUserPromptInput): SimulatedUserTurn => {
  const { persona, scenario } = brief;
  const spoken = transcript.filter((line: SimulatedUserLine) => line.speaker === 'user').length;
  const wish = wishOf(scenario);
  if (spoken === 0) {
    const greeting = persona
      ? `Hi, I'm ${persona.role === '' ? persona.name : `${persona.name}, ${persona.role}`}.`
      : 'Hi.';
    return { message: `${greeting} ${wish}`, conversation_completed: false };
  }
  const lastAgent = transcript.findLast((line) => line.speaker === 'agent')?.text ?? '';
  const asked = lastAgent.includes('?');
  const answer = asked ? answerFrom(factsOf(persona), lastAgent) : undefined;
  if (!scenario) return { message: answer ?? goingOn(transcript, lastAgent, asked), conversation_completed: false };
  // The opening said what it came for: a first line saying just that is not said again.
  const steps = stepsOf(scenario.instructions).filter((step, index) => index > 0 || !wish.includes(step));
  const step = steps[spoken - 1];
  if (step === undefined) {
    return { message: answer ? `${answer} ${FAREWELL}` : FAREWELL, conversation_completed: true };
  }
  return { message: answer ? `${answer} ${step}` : step, conversation_completed: false };
};

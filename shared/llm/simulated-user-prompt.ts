// The prompt and answer shape of a simulated user, shared by the simulation worker, which asks
// for the user's next turn, and by the deterministic model, which reads the same prompt back to
// answer by rules.
import { z } from 'zod';
import { jsonSection, readJsonSection } from './json-section';
import type { LlmMessage } from './provider';

/** A persona version: who the simulated user is. */
export interface SimulatedPersona {
  name: string;
  role: string;
  background: string;
  user_models: string[];
  /** ISO 639-3; null: the agent's language. */
  preferred_language: string | null;
  timezone: string | null;
}

/** A scenario version: what the simulated user came for. */
export interface SimulatedScenario {
  objective: string;
  instructions: string;
}

/**
 * Who the simulated user is and what they came for (a persona version and a scenario version).
 * Without a persona it is a plain user of the service; without a scenario it has no objective to
 * complete, and goes on with the conversation as the agent leads it.
 */
export interface SimulatedUserBrief {
  persona: SimulatedPersona | null;
  scenario: SimulatedScenario | null;
}

/** One message of the conversation so far, as the simulated user sees it. */
export interface SimulatedUserLine {
  speaker: 'user' | 'agent' | 'external-event';
  text: string;
}

export interface SimulatedUserPromptInput {
  brief: SimulatedUserBrief;
  transcript: SimulatedUserLine[];
}

/** Name of the structured answer (the forced tool of Bedrock, the response schema of OpenAI-compatible servers). */
export const SIMULATED_USER_SCHEMA_NAME = 'simulated_user_turn';

const BRIEF_HEADING = '## Brief';

/** The simulated user's turn: what they say, and whether they are done with the conversation. */
export const simulatedUserTurn = z.object({
  message: z.string().min(1),
  conversation_completed: z.boolean(),
});
export type SimulatedUserTurn = z.infer<typeof simulatedUserTurn>;

export const simulatedUserSchema: Record<string, unknown> = {
  type: 'object',
  properties: {
    message: { type: 'string', description: 'What you say next to the agent, in your own voice.' },
    conversation_completed: {
      type: 'boolean',
      description: 'True when your objective is met (or cannot be) and this message closes the conversation.',
    },
  },
  required: ['message', 'conversation_completed'],
  additionalProperties: false,
};

/**
 * The system prompt casts the model as the persona pursuing the scenario's objective, with the
 * brief as a JSON block (read back by {@link parseSimulatedUserPrompt}); the one user turn is
 * the conversation so far, a line per message: `speaker: text`.
 */
export const buildSimulatedUserPrompt = ({
  brief,
  transcript,
}: SimulatedUserPromptInput): { system: string; messages: LlmMessage[] } => ({
  system: [
    brief.persona
      ? 'You play a user talking to a conversational agent, to test the agent. Stay in character: speak as the persona ' +
        'below, from their background and what is known about them, in their preferred language when one is given.'
      : 'You play a user talking to a conversational agent, to test the agent: an ordinary user of its service, with no ' +
        'persona of their own.',
    brief.scenario
      ? "Pursue the scenario's objective and follow its instructions. Write only your next message. Set " +
        '`conversation_completed` to true when the objective is met or clearly cannot be, and say goodbye in that message.'
      : 'You came with no scenario: answer the agent as such a user would and go on with the conversation where it ' +
        'leads. Write only your next message, and leave `conversation_completed` false: you have no objective to complete.',
    '',
    ...jsonSection(BRIEF_HEADING, brief),
  ].join('\n'),
  messages: [
    {
      role: 'user',
      content:
        transcript.length === 0
          ? '(The conversation has not started: you speak first.)'
          : transcript.map((line) => `${line.speaker}: ${line.text.replace(/\s*\r?\n\s*/g, ' ')}`).join('\n'),
    },
  ],
});

const brief = z.object({
  persona: z
    .object({
      name: z.string(),
      role: z.string(),
      background: z.string(),
      user_models: z.array(z.string()),
      preferred_language: z.string().nullable(),
      timezone: z.string().nullable(),
    })
    .nullable(),
  scenario: z.object({ objective: z.string(), instructions: z.string() }).nullable(),
});
const transcriptLine = /^(user|agent|external-event): (.*)$/;

/** Reads back what {@link buildSimulatedUserPrompt} wrote; undefined when the prompt is not a simulated user's. */
export const parseSimulatedUserPrompt = (request: {
  system: string;
  messages: LlmMessage[];
}): SimulatedUserPromptInput | undefined => {
  const found = brief.safeParse(readJsonSection(request.system, BRIEF_HEADING));
  if (!found.success) return undefined;
  const transcript = (request.messages[0]?.content ?? '').split('\n').flatMap((line) => {
    const match = transcriptLine.exec(line);
    return match ? [{ speaker: match[1] as SimulatedUserLine['speaker'], text: match[2] as string }] : [];
  });
  return { brief: found.data, transcript };
};

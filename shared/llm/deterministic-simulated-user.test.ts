import { describe, expect, it } from 'vitest';
import { createDeterministicModel } from './deterministic-model';
import { simulateUserByRules } from './deterministic-simulated-user';
import {
  buildSimulatedUserPrompt,
  parseSimulatedUserPrompt,
  SIMULATED_USER_SCHEMA_NAME,
  type SimulatedUserBrief,
  type SimulatedUserLine,
  simulatedUserSchema,
} from './simulated-user-prompt';

const brief: SimulatedUserBrief = {
  persona: {
    name: 'Maria',
    role: 'a customer',
    background: 'Maria lives in Lisbon. Her order number is 4521.',
    user_models: ['Prefers short answers.'],
    preferred_language: 'por',
    timezone: 'Europe/Lisbon',
  },
  scenario: {
    objective: 'Get a refund for a broken lamp.',
    instructions: 'Say the lamp arrived broken. Ask for the refund to go to the card.',
  },
};

describe('simulated user prompt', () => {
  it('is read back as it was built, the conversation one line per message', () => {
    // Prepare
    const transcript: SimulatedUserLine[] = [
      { speaker: 'agent', text: 'Hello!\nHow can I help?' },
      { speaker: 'user', text: 'My lamp broke.' },
    ];

    // Act
    const parsed = parseSimulatedUserPrompt(buildSimulatedUserPrompt({ brief, transcript }));

    // Assess
    expect(parsed?.brief).toEqual(brief);
    expect(parsed?.transcript).toEqual([
      { speaker: 'agent', text: 'Hello! How can I help?' },
      { speaker: 'user', text: 'My lamp broke.' },
    ]);
  });

  it('is not mistaken for another prompt', () => {
    // Act / Assess
    expect(parseSimulatedUserPrompt({ system: 'You are a judge.', messages: [] })).toBeUndefined();
  });
});

describe('simulateUserByRules', () => {
  it('opens by introducing the persona and stating the objective', () => {
    // Act
    const turn = simulateUserByRules({ brief, transcript: [] });

    // Assess
    expect(turn).toEqual({
      message: "Hi, I'm Maria, a customer. Get a refund for a broken lamp.",
      conversation_completed: false,
    });
  });

  it("takes the instructions' sentences as its next steps, answering the agent's question from the persona", () => {
    // Prepare
    const transcript: SimulatedUserLine[] = [
      { speaker: 'user', text: "Hi, I'm Maria." },
      { speaker: 'agent', text: 'What is your order number?' },
    ];

    // Act
    const turn = simulateUserByRules({ brief, transcript });

    // Assess
    expect(turn.message).toBe('Her order number is 4521. Say the lamp arrived broken.');
    expect(turn.conversation_completed).toBe(false);
  });

  it('says goodbye and completes the conversation once the instructions are said', () => {
    // Prepare
    const transcript: SimulatedUserLine[] = ['opening', 'step one', 'step two'].flatMap((text) => [
      { speaker: 'user' as const, text },
      { speaker: 'agent' as const, text: 'Noted.' },
    ]);

    // Act
    const turn = simulateUserByRules({ brief, transcript });

    // Assess
    expect(turn).toEqual({ message: 'Thank you, that is everything I needed. Goodbye.', conversation_completed: true });
  });

  it('answers through the deterministic model as a structured object', async () => {
    // Prepare
    const model = createDeterministicModel();

    // Act
    const answer = await model.generateObject({
      model: 'deterministic',
      ...buildSimulatedUserPrompt({ brief, transcript: [] }),
      schemaName: SIMULATED_USER_SCHEMA_NAME,
      schemaDescription: 'The next turn.',
      schema: simulatedUserSchema,
    });

    // Assess
    expect(answer.value).toEqual(simulateUserByRules({ brief, transcript: [] }));
  });
});

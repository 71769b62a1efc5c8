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

  it('reads back a brief without a persona or a scenario', () => {
    // Act
    const parsed = parseSimulatedUserPrompt(
      buildSimulatedUserPrompt({ brief: { persona: null, scenario: null }, transcript: [] }),
    );

    // Assess
    expect(parsed).toEqual({ brief: { persona: null, scenario: null }, transcript: [] });
  });

  it('is not mistaken for another prompt', () => {
    // Act / Assess
    expect(parseSimulatedUserPrompt({ system: 'You are a judge.', messages: [] })).toBeUndefined();
  });
});

describe('simulateUserByRules', () => {
  const said = (...lines: string[]): SimulatedUserLine[] =>
    lines.flatMap((text) => [
      { speaker: 'user' as const, text },
      { speaker: 'agent' as const, text: 'Noted.' },
    ]);

  it('opens by introducing the persona and saying what it came for in its own words', () => {
    // Act
    const turn = simulateUserByRules({ brief, transcript: [] });

    // Assess
    expect(turn).toEqual({
      message: "Hi, I'm Maria, a customer. I'd like to get a refund for a broken lamp.",
      conversation_completed: false,
    });
  });

  it("says the instructions' lines in the caller's words, answering the agent's question from the persona", () => {
    // Prepare
    const transcript: SimulatedUserLine[] = [
      { speaker: 'user', text: "Hi, I'm Maria." },
      { speaker: 'agent', text: 'What is your order number?' },
    ];

    // Act
    const first = simulateUserByRules({ brief, transcript });
    const second = simulateUserByRules({ brief, transcript: said('opening', 'step one') });

    // Assess
    expect(first).toEqual({
      message: 'My order number is 4521. The lamp arrived broken.',
      conversation_completed: false,
    });
    expect(second.message).toBe('Could I get the refund to go to the card?');
  });

  it('never says an instruction on how to behave, and says each kind of instruction as a caller would', () => {
    // Prepare
    const scenario = {
      objective: 'Get the printer working again.',
      instructions:
        'Answer the agent briefly and go on with the conversation. Be impatient. Tell the agent that your printer jams daily. ' +
        'Ask why it jams. Ask the agent to send a technician. Ask about costs. Request a refund. “Is it under warranty?”',
    };

    // Act
    const lines = [1, 2, 3, 4, 5, 6].map(
      (n) => simulateUserByRules({ brief: { ...brief, scenario }, transcript: said(...Array(n).fill('…')) }).message,
    );

    // Assess
    expect(lines).toEqual([
      'My printer jams daily.',
      'Could you tell me why it jams?',
      'Could you send a technician?',
      'Could you tell me about costs?',
      "I'd like to request a refund.",
      'Is it under warranty?',
    ]);
  });

  it('says the lines listed under a heading as they stand, not repeating the one it opened with', () => {
    // Prepare: a scenario made from a conversation by rules (`from-conversation.ts`).
    const scenario = {
      objective: 'Get the agent to handle what this user asked: “My printer jams”',
      instructions: 'Say these one a turn, as the user did:\nMy printer jams\nI already cleaned the rollers',
    };

    // Act
    const opening = simulateUserByRules({ brief: { persona: null, scenario }, transcript: [] });
    const next = simulateUserByRules({ brief: { persona: null, scenario }, transcript: said(opening.message) });

    // Assess
    expect(opening.message).toBe('Hi. My printer jams');
    expect(next).toEqual({ message: 'I already cleaned the rollers', conversation_completed: false });
  });

  it('says goodbye and completes the conversation once the instructions are said', () => {
    // Act
    const turn = simulateUserByRules({ brief, transcript: said('opening', 'step one', 'step two') });

    // Assess
    expect(turn).toEqual({ message: 'Thank you, that is everything I needed. Goodbye.', conversation_completed: true });
  });

  it('without a persona, speaks as a plain caller of the scenario and ends only once the scenario is done', () => {
    // Prepare
    const plain = { persona: null, scenario: brief.scenario };

    // Act
    const lines = [0, 1, 2, 3].map((n) =>
      simulateUserByRules({ brief: plain, transcript: said(...Array(n).fill('…')) }),
    );

    // Assess
    expect(lines.map((line) => line.message)).toEqual([
      "Hi. I'd like to get a refund for a broken lamp.",
      'The lamp arrived broken.',
      'Could I get the refund to go to the card?',
      'Thank you, that is everything I needed. Goodbye.',
    ]);
    expect(lines.map((line) => line.conversation_completed)).toEqual([false, false, false, true]);
  });

  it('with neither persona nor scenario, goes on from wherever the conversation is and never ends it', () => {
    // Prepare: a fork after a few turns, the agent having asked, then having told.
    const plain = { persona: null, scenario: null };
    const asked: SimulatedUserLine[] = [
      ...said('My printer jams.', 'It happens daily.'),
      { speaker: 'agent', text: 'I can book a technician. Would you like me to book one?' },
    ];
    const told: SimulatedUserLine[] = [
      ...said('My printer jams.'),
      { speaker: 'agent', text: 'A technician visits on Tuesdays.' },
    ];

    // Act
    const opening = simulateUserByRules({ brief: plain, transcript: [{ speaker: 'agent', text: 'Hello!' }] });
    const answering = simulateUserByRules({ brief: plain, transcript: asked });
    const following = simulateUserByRules({ brief: plain, transcript: told });

    // Assess
    expect(opening).toEqual({ message: 'Hi. I have a question about your service.', conversation_completed: false });
    expect(answering).toEqual({ message: 'Yes, please.', conversation_completed: false });
    expect(following).toEqual({ message: 'Okay. Could you tell me more?', conversation_completed: false });
    const next = simulateUserByRules({
      brief: plain,
      transcript: [...told, ...said(following.message)],
    });
    expect(next.message).toBe('I see. What would you need from me?');
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

import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeterministicModel } from './deterministic-model';
import { buildSystemPrompt } from './prompt';
import type { LlmMessage, LlmOption, LlmRequest } from './provider';
import { collect, llmError, supportAgentPrompt } from './test-fixtures';

// Without the one-off instruction, which the last test covers.
const { dynamicInstruction, ...promptWithoutInstruction } = supportAgentPrompt;
const system = buildSystemPrompt(promptWithoutInstruction);
const request = (messages: LlmMessage[], extra: Partial<LlmRequest> = {}): LlmRequest => ({
  model: 'deterministic',
  system,
  messages,
  ...extra,
});
const user = (content: string): LlmMessage => ({ role: 'user', content });

const exitConditions: LlmOption[] = [
  { id: 'stay', description: 'Otherwise: the user is not yet done, continue in this state' },
  { id: 'order-found', description: 'The user gives an order number' },
  { id: 'leave', description: 'The user says goodbye or wants to end the conversation' },
];

describe('deterministic model', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives the same fragments for the same input, every time', async () => {
    // Prepare
    const model = createDeterministicModel();
    const turn = request([user('Hello'), { role: 'assistant', content: 'Hi!' }, user('My lamp has not arrived')]);

    // Act
    const first = await collect(model.streamText(turn));
    const second = await collect(createDeterministicModel().streamText(turn));

    // Assess
    expect(second).toEqual(first);
  });

  it.each([
    ['no messages', []],
    ['only an empty message', [user('')]],
  ])('greets by the agent name and takes one of the state actions on the first turn (%s)', async (_, messages) => {
    // Prepare
    const model = createDeterministicModel();

    // Act
    const reply = (await collect(model.streamText(request(messages)))).join('');

    // Assess
    expect(reply).toMatch(/^Hello, I'm Ava, customer support agent\./);
    expect(reply).toContain("Find the customer's order.");
    expect(supportAgentPrompt.state.actions.some((action) => reply.includes(action))).toBe(true);
  });

  it('acknowledges the user by quoting the start of the last message, then works towards the objective', async () => {
    // Prepare
    const model = createDeterministicModel();

    // Act
    const reply = (
      await collect(
        model.streamText(request([user('Where is my parcel? It was supposed to arrive yesterday morning.')])),
      )
    ).join('');

    // Assess
    expect(reply).toContain('"Where is my parcel? It was supposed to…"');
    expect(supportAgentPrompt.state.actions.some((action) => reply.includes(action))).toBe(true);
  });

  it('follows a one-off instruction visibly, in its last sentence', async () => {
    // Prepare
    const instructed = request([user('Where is my order?')], { system: buildSystemPrompt(supportAgentPrompt) });

    // Act
    const reply = (await collect(createDeterministicModel().streamText(instructed))).join('');

    // Assess
    expect(reply).toMatch(new RegExp(`As instructed: ${dynamicInstruction}$`));
    expect(reply.match(/[.!?](\s|$)/g)?.length).toBeLessThanOrEqual(3);
  });

  it('answers in one to three sentences', async () => {
    // Prepare
    const model = createDeterministicModel();
    const turns = [
      [],
      [user('hi')],
      [user('it is order 1234')],
      [user('the address is 5 Main Street')],
      [user('ok thanks')],
    ];

    // Act
    const replies = await Promise.all(
      turns.map(async (messages) => (await collect(model.streamText(request(messages)))).join('')),
    );

    // Assess
    for (const reply of replies) {
      const sentences = reply.match(/[.!?](\s|$)/g) ?? [];
      expect(sentences.length, reply).toBeGreaterThanOrEqual(1);
      expect(sentences.length, reply).toBeLessThanOrEqual(3);
    }
  });

  it('varies its wording from turn to turn', async () => {
    // Prepare
    const model = createDeterministicModel();
    const messages = ['I need help', 'It is order 1234', 'The address is 5 Main Street', 'Thanks', 'Can you check it?'];

    // Act
    const replies = await Promise.all(
      messages.map(async (message) => (await collect(model.streamText(request([user(message)])))).join('')),
    );

    // Assess
    const steps = new Set(replies.map((reply) => reply.replace(/^[^"]*"[^"]*"\.\s*/, '')));
    expect(steps.size).toBeGreaterThan(1);
  });

  it('streams groups of 3 to 6 words that concatenate to the full reply', async () => {
    // Prepare
    const model = createDeterministicModel();
    const turn = request([user('Could you look up my order please?')]);

    // Act
    const fragments = await collect(model.streamText(turn));
    const { text } = await model.callTools({ ...turn, tools: [] });

    // Assess
    expect(fragments.length).toBeGreaterThan(1);
    expect(fragments.join('')).toBe(text);
    for (const fragment of fragments.slice(0, -1)) {
      expect(fragment.trim().split(/\s+/).length).toBeGreaterThanOrEqual(3);
      expect(fragment.trim().split(/\s+/).length).toBeLessThanOrEqual(6);
    }
  });

  it('reports a token use estimated at four characters a token, labelled as estimated', async () => {
    // Prepare
    const model = createDeterministicModel();
    const reported: unknown[] = [];
    const turn = request([user('My lamp has not arrived')], { onUsage: (usage) => reported.push(usage) });

    // Act
    const text = (await collect(model.streamText(turn))).join('');
    await model.chooseOption({ ...turn, options: exitConditions });

    // Assess
    expect(reported).toHaveLength(2);
    expect(reported[0]).toEqual({
      inputTokens: Math.ceil((system.length + 'My lamp has not arrived'.length) / 4),
      outputTokens: Math.ceil(text.length / 4),
      estimated: true,
    });
    expect(reported[1]).toMatchObject({ estimated: true, outputTokens: expect.any(Number) });
  });

  it('waits fragmentDelayMs before each fragment', async () => {
    // Prepare
    vi.useFakeTimers();
    const model = createDeterministicModel({ fragmentDelayMs: 50 });
    const received: string[] = [];
    const done = (async () => {
      for await (const fragment of model.streamText(request([]))) received.push(fragment);
    })();

    // Act
    await vi.advanceTimersByTimeAsync(49);
    const beforeFirst = received.length;
    await vi.advanceTimersByTimeAsync(1);
    const atFirst = received.length;
    await vi.advanceTimersByTimeAsync(50);
    const atSecond = received.length;
    await vi.runAllTimersAsync();
    await done;

    // Assess
    expect([beforeFirst, atFirst, atSecond]).toEqual([0, 1, 2]);
    expect(received.length).toBeGreaterThan(2);
  });

  it('stops streaming with the abort reason when the signal aborts', async () => {
    // Prepare
    const controller = new AbortController();
    const model = createDeterministicModel({ fragmentDelayMs: 5 });
    const fragments = model.streamText(request([], { signal: controller.signal }))[Symbol.asyncIterator]();
    await fragments.next();

    // Act
    controller.abort(new Error('user left'));
    const next = fragments.next();

    // Assess
    await expect(next).rejects.toThrow('user left');
  });

  it("picks the exit condition that matches the user's words", async () => {
    // Prepare
    const model = createDeterministicModel();

    // Act
    const choice = await model.chooseOption({
      ...request([user('Sure, my order number is 4411')]),
      options: exitConditions,
    });

    // Assess
    expect(choice.id).toBe('order-found');
    expect(choice.reasoning).toContain('"order"');
    expect(choice.reasoning).toContain('"number"');
  });

  it.each([
    'Bye!',
    'goodbye',
    "That's all, thanks",
    'I am done',
    'We are finished here',
    'quit',
    'stop',
    'ok, the end',
  ])('picks the ending option when the user says "%s"', async (message) => {
    // Prepare
    const model = createDeterministicModel();

    // Act
    const choice = await model.chooseOption({
      ...request([user('Hi'), { role: 'assistant', content: 'Hello' }, user(message)]),
      options: exitConditions,
    });

    // Assess
    expect(choice.id).toBe('leave');
  });

  it.each(["I'm not done yet", 'Hmm, let me think'])(
    'stays in the state when nothing in "%s" matches',
    async (message) => {
      // Prepare
      const model = createDeterministicModel();

      // Act
      const choice = await model.chooseOption({ ...request([user(message)]), options: exitConditions });

      // Assess
      expect(choice.id).toBe('stay');
      expect(choice.reasoning).toContain('No option matches');
    },
  );

  it('takes the first option when nothing matches and no option is about continuing', async () => {
    // Prepare
    const model = createDeterministicModel();
    const options = exitConditions.filter((option) => option.id !== 'stay');

    // Act
    const choice = await model.chooseOption({ ...request([user('Hmm')]), options });

    // Assess
    expect(choice.id).toBe('order-found');
  });

  it('rejects a choice without options', async () => {
    // Prepare
    const model = createDeterministicModel();

    // Act
    const choice = model.chooseOption({ ...request([user('bye')]), options: [] });

    // Assess
    await expect(choice).rejects.toMatchObject(llmError(false));
  });

  it('calls the tools whose required parameters the latest message fills, and answers with its reply too', async () => {
    // Prepare
    const model = createDeterministicModel();
    const tools = [
      {
        name: 'lookup_order',
        description: 'Look up an order',
        inputSchema: { type: 'object', properties: { number: { type: 'integer' } }, required: ['number'] },
      },
      {
        name: 'find_store',
        description: 'Find a store',
        inputSchema: {
          type: 'object',
          properties: { open: { type: 'boolean' }, city: { type: 'string', enum: ['Paris', 'Oslo'] } },
        },
      },
      {
        name: 'needs_flag',
        description: 'Needs a date',
        inputSchema: { type: 'object', properties: { date: { type: 'object' } }, required: ['date'] },
      },
    ];

    // Act
    const result = await model.callTools({ ...request([user('Look up order 12 from Oslo')]), tools });

    // Assess
    expect(result.toolCalls).toEqual([
      { name: 'lookup_order', input: { number: 12 } },
      { name: 'find_store', input: { open: true, city: 'Oslo' } },
    ]);
    expect(result.text).toContain('"Look up order 12 from Oslo"');
  });
});

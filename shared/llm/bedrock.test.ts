import {
  type BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ConverseStreamOutput,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { describe, expect, it, vi } from 'vitest';
import { createBedrockProvider } from './bedrock';
import type { LlmRequest } from './provider';
import { collect, greetingRequest, llmError, stayOrLeaveOptions } from './test-fixtures';

// A thin adapter over the SDK: only `client.send` is mocked, the commands are the real ones.
const mockClient = (respond: (command: unknown) => unknown) => {
  const send = vi.fn(async (command: unknown, _options?: { abortSignal?: AbortSignal }) => respond(command));
  return { send, client: { send } as unknown as BedrockRuntimeClient };
};

async function* events(...items: ConverseStreamOutput[]): AsyncGenerator<ConverseStreamOutput> {
  yield* items;
}

const textDelta = (text: string): ConverseStreamOutput => ({
  contentBlockDelta: { contentBlockIndex: 0, delta: { text } },
});

/** A Converse answer of the assistant with these content blocks, and its token use when given. */
const answer = (content: object[], usage?: object) => ({
  output: { message: { role: 'assistant', content } },
  ...(usage ? { usage } : {}),
});

const toolUse = (name: string, input: object) => ({ toolUse: { toolUseId: 't1', name, input } });

const request = (extra: Partial<LlmRequest> = {}): LlmRequest =>
  greetingRequest('anthropic.claude-3-5-haiku-20241022-v1:0', extra);

describe('Bedrock provider', () => {
  it('streams the text deltas of ConverseStream', async () => {
    // Prepare
    const { client, send } = mockClient(() => ({
      stream: events({ messageStart: { role: 'assistant' } }, textDelta('Hello'), textDelta(', Bob.'), {
        messageStop: { stopReason: 'end_turn' },
      }),
    }));
    const provider = createBedrockProvider({ client });

    // Act
    const fragments = await collect(
      provider.streamText(request({ temperature: 0.3, topP: 0.8, topK: 50, maxTokens: 200 })),
    );

    // Assess
    expect(fragments).toEqual(['Hello', ', Bob.']);
    const command = send.mock.calls[0]?.[0];
    expect(command).toBeInstanceOf(ConverseStreamCommand);
    expect((command as ConverseStreamCommand).input).toEqual({
      modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      system: [{ text: 'You are Ava.' }],
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      inferenceConfig: { temperature: 0.3, topP: 0.8, maxTokens: 200 },
      additionalModelRequestFields: { top_k: 50 },
    });
  });

  it("reports the stream's token use from its metadata event", async () => {
    // Prepare
    const { client } = mockClient(() => ({
      stream: events(
        textDelta('Hello.'),
        { messageStop: { stopReason: 'end_turn' } },
        {
          metadata: { usage: { inputTokens: 57, outputTokens: 4, totalTokens: 61 }, metrics: { latencyMs: 300 } },
        },
      ),
    }));
    const provider = createBedrockProvider({ client });
    const reported: unknown[] = [];

    // Act
    const fragments = await collect(provider.streamText(request({ onUsage: (usage) => reported.push(usage) })));

    // Assess
    expect(fragments).toEqual(['Hello.']);
    expect(reported).toEqual([{ inputTokens: 57, outputTokens: 4 }]);
  });

  it('reports the token use of a tool-calling turn', async () => {
    // Prepare
    const { client } = mockClient(() =>
      answer([{ text: 'Done.' }], { inputTokens: 80, outputTokens: 2, totalTokens: 82 }),
    );
    const provider = createBedrockProvider({ client });
    const reported: unknown[] = [];

    // Act
    await provider.callTools({ ...request({ onUsage: (usage) => reported.push(usage) }), tools: [] });

    // Assess
    expect(reported).toEqual([{ inputTokens: 80, outputTokens: 2 }]);
  });

  it('reports why each answer stopped, streamed or not', async () => {
    // Prepare
    const { client } = mockClient((command) =>
      command instanceof ConverseStreamCommand
        ? { stream: events(textDelta('Hello.'), { messageStop: { stopReason: 'max_tokens' } }) }
        : { ...answer([toolUse('lookup', {})]), stopReason: 'tool_use' },
    );
    const provider = createBedrockProvider({ client });
    const reported: unknown[] = [];
    const onResponse = (response: unknown) => reported.push(response);

    // Act
    await collect(provider.streamText(request({ onResponse })));
    await provider.callTools({ ...request({ onResponse }), tools: [] });

    // Assess
    expect(reported).toEqual([{ finishReasons: ['max_tokens'] }, { finishReasons: ['tool_use'] }]);
  });

  it('opens with a user turn and merges blank and repeated turns, as Converse requires', async () => {
    // Prepare
    const { client, send } = mockClient(() => ({ stream: events() }));
    const provider = createBedrockProvider({ client });
    const messages: LlmRequest['messages'] = [
      { role: 'user', content: '' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'My order' },
      { role: 'user', content: 'is late' },
    ];

    // Act
    await collect(provider.streamText(request({ messages })));

    // Assess
    expect((send.mock.calls.at(0)?.[0] as ConverseStreamCommand | undefined)?.input.messages).toEqual([
      { role: 'user', content: [{ text: '(The conversation begins.)' }] },
      { role: 'assistant', content: [{ text: 'Hello!' }] },
      { role: 'user', content: [{ text: 'My order' }, { text: 'is late' }] },
    ]);
  });

  it('forces the choose_option tool and returns its input as the choice', async () => {
    // Prepare
    const { client, send } = mockClient(() =>
      answer([toolUse('choose_option', { id: 'leave', reasoning: 'The user said bye.' })]),
    );
    const provider = createBedrockProvider({ client });

    // Act
    const choice = await provider.chooseOption({
      ...request({ messages: [{ role: 'user', content: 'bye' }] }),
      options: stayOrLeaveOptions,
    });

    // Assess
    expect(choice).toEqual({ id: 'leave', reasoning: 'The user said bye.' });
    const command = send.mock.calls[0]?.[0] as ConverseCommand;
    expect(command).toBeInstanceOf(ConverseCommand);
    expect(command.input.toolConfig?.toolChoice).toEqual({ tool: { name: 'choose_option' } });
    expect(command.input.toolConfig?.tools?.[0]?.toolSpec?.inputSchema?.json).toMatchObject({
      properties: { id: { enum: ['stay', 'leave'] } },
    });
    expect(command.input.system?.[0]?.text).toContain('- leave: The user says goodbye');
  });

  it('rejects a choice outside the options as a non-retryable LlmError', async () => {
    // Prepare
    const { client } = mockClient(() => answer([toolUse('choose_option', { id: 'elsewhere', reasoning: '' })]));
    const provider = createBedrockProvider({ client });

    // Act
    const choice = provider.chooseOption({ ...request(), options: stayOrLeaveOptions });

    // Assess
    await expect(choice).rejects.toMatchObject(llmError(false));
  });

  it('offers the tools and returns the text and tool calls of the answer', async () => {
    // Prepare
    const { client, send } = mockClient(() =>
      answer([{ text: 'Let me check.' }, toolUse('lookup_order', { orderId: 'A-12' })]),
    );
    const provider = createBedrockProvider({ client });
    const tools = [{ name: 'lookup_order', description: 'Look up an order', inputSchema: { type: 'object' } }];

    // Act
    const result = await provider.callTools({ ...request(), tools });

    // Assess
    expect(result).toEqual({
      text: 'Let me check.',
      toolCalls: [{ name: 'lookup_order', input: { orderId: 'A-12' } }],
    });
    expect((send.mock.calls.at(0)?.[0] as ConverseCommand | undefined)?.input.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'lookup_order',
            description: 'Look up an order',
            inputSchema: { json: { type: 'object' } },
          },
        },
      ],
      toolChoice: { auto: {} },
    });
  });

  it.each([
    [
      'ThrottlingException',
      new ThrottlingException({ message: 'slow down', $metadata: { httpStatusCode: 429 } }),
      true,
    ],
    [
      'ValidationException',
      new ValidationException({ message: 'bad model id', $metadata: { httpStatusCode: 400 } }),
      false,
    ],
  ])('maps a thrown %s to an LlmError with retryable %s', async (name, error, retryable) => {
    // Prepare
    const { client } = mockClient(() => Promise.reject(error));
    const provider = createBedrockProvider({ client });

    // Act
    const streamed = collect(provider.streamText(request()));
    const chosen = provider.chooseOption({ ...request(), options: stayOrLeaveOptions });

    // Assess
    for (const call of [streamed, chosen]) {
      await expect(call).rejects.toMatchObject({ ...llmError(retryable, name), cause: error });
    }
  });

  it('maps an exception event inside the stream to a retryable LlmError', async () => {
    // Prepare
    const exception = new ThrottlingException({ message: 'too many tokens', $metadata: {} });
    const { client } = mockClient(() => ({ stream: events(textDelta('Hel'), { throttlingException: exception }) }));
    const provider = createBedrockProvider({ client });

    // Act
    const streamed = collect(provider.streamText(request()));

    // Assess
    await expect(streamed).rejects.toMatchObject(llmError(true, 'too many tokens'));
  });

  it('passes the abort signal to the SDK and rejects with its reason', async () => {
    // Prepare
    const controller = new AbortController();
    const { client, send } = mockClient(() => {
      controller.abort(new Error('user left'));
      return Promise.reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }));
    });
    const provider = createBedrockProvider({ client });

    // Act
    const streamed = collect(provider.streamText(request({ signal: controller.signal })));

    // Assess
    await expect(streamed).rejects.toThrow('user left');
    expect(send.mock.calls[0]?.[1]).toEqual({ abortSignal: controller.signal });
  });

  it('answers a structured request through a forced tool call, with the token use', async () => {
    // Prepare
    const { client, send } = mockClient(() =>
      answer([toolUse('judge_metric', { value: 4, references: ['m1'], justification: 'ok' })], {
        inputTokens: 200,
        outputTokens: 30,
        totalTokens: 230,
      }),
    );
    const provider = createBedrockProvider({ client });
    const schema = { type: 'object', properties: { value: { type: 'number' } }, required: ['value'] };

    // Act
    const result = await provider.generateObject({
      ...request(),
      schemaName: 'judge_metric',
      schemaDescription: 'A judgement.',
      schema,
    });

    // Assess
    expect(result).toEqual({
      value: { value: 4, references: ['m1'], justification: 'ok' },
      usage: { inputTokens: 200, outputTokens: 30 },
    });
    const command = send.mock.calls[0]?.[0] as ConverseCommand;
    expect(command).toBeInstanceOf(ConverseCommand);
    expect(command.input.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'judge_metric', description: 'A judgement.', inputSchema: { json: schema } } }],
      toolChoice: { tool: { name: 'judge_metric' } },
    });
  });

  it('refuses an answer without the structured tool call, for the caller to ask again', async () => {
    // Prepare
    const { client } = mockClient(() => answer([{ text: 'I think yes.' }]));
    const provider = createBedrockProvider({ client });

    // Act / Assess
    await expect(
      provider.generateObject({ ...request(), schemaName: 'judge_metric', schemaDescription: '', schema: {} }),
    ).rejects.toMatchObject(llmError(false));
  });
});

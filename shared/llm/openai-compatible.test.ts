import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpenAiCompatibleProvider } from './openai-compatible';
import type { LlmRequest } from './provider';
import { collect, greetingRequest, llmError, stayOrLeaveOptions } from './test-fixtures';

interface ReceivedRequest {
  path: string | undefined;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

const servers: Server[] = [];

// A real local HTTP server on a free port; the handler writes the response by hand.
const startServer = async (handler: (response: ServerResponse) => void | Promise<void>) => {
  const requests: ReceivedRequest[] = [];
  const server = createServer(async (request, response) => {
    let raw = '';
    for await (const chunk of request) raw += chunk;
    requests.push({ path: request.url, headers: request.headers, body: JSON.parse(raw) as Record<string, unknown> });
    await handler(response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests, server };
};

const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

afterEach(async () => {
  await Promise.all(servers.splice(0).map(closeServer));
});

const event = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;
const delta = (content: string): string => event({ choices: [{ index: 0, delta: { content } }] });
const startStream = (response: ServerResponse): void => {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
};
const completion = (message: Record<string, unknown>) => (response: ServerResponse) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ id: 'cmpl-1', choices: [{ index: 0, message: { role: 'assistant', ...message } }] }));
};

const request = (extra: Partial<LlmRequest> = {}): LlmRequest => greetingRequest('llama3.1', extra);

describe('OpenAI-compatible provider', () => {
  it('streams the content of each server-sent event until [DONE]', async () => {
    // Prepare
    const { baseUrl } = await startServer((response) => {
      startStream(response);
      response.write(event({ choices: [{ index: 0, delta: { role: 'assistant' } }] }));
      response.write(': keep-alive comment\n\n');
      response.write(delta('Hello'));
      const split = delta(', I am');
      response.write(split.slice(0, 20));
      response.write(split.slice(20).replace('\n\n', '\r\n\r\n'));
      response.write(event({ choices: [] }));
      response.write(delta(' Ava.'));
      response.write('data: [DONE]\n\n');
      response.end(delta(' never read'));
    });
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const fragments = await collect(provider.streamText(request()));

    // Assess
    expect(fragments).toEqual(['Hello', ', I am', ' Ava.']);
  });

  it('yields each fragment as it arrives, before the server sends the next', { timeout: 5_000 }, async () => {
    // Prepare
    let releaseSecond = (): void => undefined;
    const secondMayGo = new Promise<void>((resolve) => {
      releaseSecond = resolve;
    });
    let secondSent = false;
    const { baseUrl } = await startServer(async (response) => {
      startStream(response);
      response.write(delta('first'));
      await secondMayGo;
      secondSent = true;
      response.write(delta(' second'));
      response.end('data: [DONE]\n\n');
    });
    const fragments = createOpenAiCompatibleProvider({ baseUrl }).streamText(request())[Symbol.asyncIterator]();

    // Act
    const first = await fragments.next();
    const sentBeforeFirstSeen = secondSent;
    releaseSecond();
    const second = await fragments.next();
    const end = await fragments.next();

    // Assess
    expect(first.value).toBe('first');
    expect(sentBeforeFirstSeen).toBe(false);
    expect(second.value).toBe(' second');
    expect(end.done).toBe(true);
  });

  it('sends the model, system prompt, turns, sampling settings and API key', async () => {
    // Prepare
    const { baseUrl, requests } = await startServer((response) => {
      startStream(response);
      response.end('data: [DONE]\n\n');
    });
    const provider = createOpenAiCompatibleProvider({ baseUrl: `${baseUrl}/`, apiKey: 'sk-test' });

    // Act
    await collect(provider.streamText(request({ temperature: 0.2, topP: 0.9, topK: 40, maxTokens: 300 })));

    // Assess
    expect(requests[0]?.path).toBe('/v1/chat/completions');
    expect(requests[0]?.headers.authorization).toBe('Bearer sk-test');
    expect(requests[0]?.body).toEqual({
      model: 'llama3.1',
      messages: [
        { role: 'system', content: 'You are Ava.' },
        { role: 'user', content: 'Hi' },
      ],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      max_tokens: 300,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("reports the stream's token use from its closing usage chunk", async () => {
    // Prepare
    const { baseUrl } = await startServer((response) => {
      startStream(response);
      response.write(delta('Hello.'));
      response.write(event({ choices: [], usage: { prompt_tokens: 42, completion_tokens: 3, total_tokens: 45 } }));
      response.end('data: [DONE]\n\n');
    });
    const provider = createOpenAiCompatibleProvider({ baseUrl });
    const reported: unknown[] = [];

    // Act
    const fragments = await collect(provider.streamText(request({ onUsage: (usage) => reported.push(usage) })));

    // Assess
    expect(fragments).toEqual(['Hello.']);
    expect(reported).toEqual([{ inputTokens: 42, outputTokens: 3 }]);
  });

  it('reports the answering model and why each answer stopped, streamed or not', async () => {
    // Prepare
    const { baseUrl } = await startServer((response) => {
      startStream(response);
      response.write(event({ model: 'llama3.1:8b', choices: [{ index: 0, delta: { content: 'Hello.' } }] }));
      response.write(event({ model: 'llama3.1:8b', choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }));
      response.end('data: [DONE]\n\n');
    });
    const { baseUrl: completing } = await startServer((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          model: 'llama3.1:8b',
          choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: '' } }],
        }),
      );
    });
    const reported: unknown[] = [];
    const onResponse = (response: unknown) => reported.push(response);

    // Act
    await collect(createOpenAiCompatibleProvider({ baseUrl }).streamText(request({ onResponse })));
    await createOpenAiCompatibleProvider({ baseUrl: completing }).callTools({ ...request({ onResponse }), tools: [] });

    // Assess
    expect(reported).toEqual([
      { model: 'llama3.1:8b', finishReasons: ['length'] },
      { model: 'llama3.1:8b', finishReasons: ['tool_calls'] },
    ]);
  });

  it.each([
    [429, true],
    [500, true],
    [503, true],
    [400, false],
    [401, false],
  ])('reports HTTP %i as an LlmError with retryable %s', async (status, retryable) => {
    // Prepare
    const { baseUrl } = await startServer((response) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end('{"error":{"message":"nope"}}');
    });
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const streamed = collect(provider.streamText(request()));
    const chosen = provider.chooseOption({ ...request(), options: stayOrLeaveOptions });

    // Assess
    for (const call of [streamed, chosen]) {
      await expect(call).rejects.toMatchObject(llmError(retryable, `HTTP ${status}`));
    }
  });

  it('reports a refused connection as a retryable LlmError', async () => {
    // Prepare
    const { baseUrl, server } = await startServer(() => undefined);
    await closeServer(server);
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const streamed = collect(provider.streamText(request()));

    // Assess
    await expect(streamed).rejects.toMatchObject(llmError(true));
  });

  it('reports an error event inside the stream as a retryable LlmError', async () => {
    // Prepare
    const { baseUrl } = await startServer((response) => {
      startStream(response);
      response.write(delta('Hel'));
      response.end(event({ error: { message: 'model overloaded' } }));
    });
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const streamed = collect(provider.streamText(request()));

    // Assess
    await expect(streamed).rejects.toMatchObject(llmError(true, 'model overloaded'));
  });

  it('reports a malformed stream event as a non-retryable LlmError', async () => {
    // Prepare
    const { baseUrl } = await startServer((response) => {
      startStream(response);
      response.end('data: {not json\n\n');
    });
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const streamed = collect(provider.streamText(request()));

    // Assess
    await expect(streamed).rejects.toMatchObject(llmError(false));
  });

  it('stops with the abort reason when the signal aborts mid-stream', { timeout: 5_000 }, async () => {
    // Prepare
    const { baseUrl } = await startServer((response) => {
      startStream(response);
      response.write(delta('Hel'));
    });
    const controller = new AbortController();
    const fragments = createOpenAiCompatibleProvider({ baseUrl })
      .streamText(request({ signal: controller.signal }))
      [Symbol.asyncIterator]();
    await fragments.next();

    // Act
    controller.abort(new Error('user left'));
    const next = fragments.next();

    // Assess
    await expect(next).rejects.toThrow('user left');
  });

  it('asks for a JSON-schema choice restricted to the option ids', async () => {
    // Prepare
    const { baseUrl, requests } = await startServer(
      completion({ content: '{"id":"leave","reasoning":"The user said bye."}' }),
    );
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const choice = await provider.chooseOption({
      ...request({ messages: [{ role: 'user', content: 'bye' }] }),
      options: stayOrLeaveOptions,
    });

    // Assess
    expect(choice).toEqual({ id: 'leave', reasoning: 'The user said bye.' });
    const body = requests[0]?.body;
    expect(body?.stream).toBeUndefined();
    expect(body?.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'choose_option', strict: true, schema: { properties: { id: { enum: ['stay', 'leave'] } } } },
    });
    expect(body?.messages).toEqual([
      {
        role: 'system',
        content: expect.stringMatching(
          /^You are Ava\.\n\n## Choice\n.*\n- stay: Continue in this state\n- leave: The user says goodbye$/s,
        ),
      },
      { role: 'user', content: 'bye' },
    ]);
  });

  it('falls back to the JSON inside a prose answer when the server ignores the schema', async () => {
    // Prepare
    const { baseUrl } = await startServer(
      completion({ content: 'Here you go:\n```json\n{"id": "stay", "reasoning": "More to do."}\n```' }),
    );
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const choice = await provider.chooseOption({ ...request(), options: stayOrLeaveOptions });

    // Assess
    expect(choice).toEqual({ id: 'stay', reasoning: 'More to do.' });
  });

  it.each([
    ['an id that is not an option', '{"id":"elsewhere","reasoning":"?"}'],
    ['no JSON at all', 'I think we should leave.'],
  ])('rejects a choice with %s as a non-retryable LlmError', async (_, content) => {
    // Prepare
    const { baseUrl } = await startServer(completion({ content }));
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const choice = provider.chooseOption({ ...request(), options: stayOrLeaveOptions });

    // Assess
    await expect(choice).rejects.toMatchObject(llmError(false));
  });

  it('offers the tools and returns the tool calls the model makes', async () => {
    // Prepare
    const { baseUrl, requests } = await startServer(
      completion({
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"orderId":"A-12"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      }),
    );
    const provider = createOpenAiCompatibleProvider({ baseUrl });
    const tools = [
      {
        name: 'lookup_order',
        description: 'Look up an order',
        inputSchema: { type: 'object', properties: { orderId: { type: 'string' } } },
      },
    ];

    // Act
    const result = await provider.callTools({ ...request(), tools });

    // Assess
    expect(result).toEqual({
      text: '',
      toolCalls: [
        { name: 'lookup_order', input: { orderId: 'A-12' } },
        { name: 'get_time', input: {} },
      ],
    });
    expect(requests[0]?.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'lookup_order', description: 'Look up an order', parameters: tools[0]?.inputSchema },
      },
    ]);
  });

  it('asks for a JSON-schema answer and returns the object with the token use', async () => {
    // Prepare
    const { baseUrl, requests } = await startServer((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: '{"value":true,"references":[],"justification":"ok"}' },
            },
          ],
          usage: { prompt_tokens: 120, completion_tokens: 15, total_tokens: 135 },
        }),
      );
    });
    const provider = createOpenAiCompatibleProvider({ baseUrl });
    const schema = {
      type: 'object',
      properties: { value: { type: 'boolean' } },
      required: ['value'],
      additionalProperties: false,
    };

    const reported: unknown[] = [];

    // Act
    const result = await provider.generateObject({
      ...request({ onUsage: (usage) => reported.push(usage) }),
      schemaName: 'judge_metric',
      schemaDescription: 'A judgement.',
      schema,
    });

    // Assess
    expect(result).toEqual({
      value: { value: true, references: [], justification: 'ok' },
      usage: { inputTokens: 120, outputTokens: 15 },
    });
    expect(reported).toEqual([{ inputTokens: 120, outputTokens: 15 }]);
    expect(requests[0]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'judge_metric', description: 'A judgement.', strict: true, schema },
    });
  });

  it('leaves the token use out when the server reports none', async () => {
    // Prepare
    const { baseUrl } = await startServer(completion({ content: '```json\n{"value": 3}\n```' }));
    const provider = createOpenAiCompatibleProvider({ baseUrl });

    // Act
    const result = await provider.generateObject({
      ...request(),
      schemaName: 'judge_metric',
      schemaDescription: '',
      schema: {},
    });

    // Assess
    expect(result).toEqual({ value: { value: 3 } });
  });
});

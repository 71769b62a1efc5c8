import { z } from 'zod';
import {
  type CallToolsResult,
  type GenerateObjectResult,
  LlmError,
  type LlmProvider,
  type LlmRequest,
} from './provider';
import {
  CHOICE_NAME,
  choiceSchema,
  choiceSystemPrompt,
  parseChoice,
  parseToolInput,
  requireOptions,
} from './structured-output';

export interface OpenAiCompatibleOptions {
  /** The API root including its version segment, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** Sent as a bearer token; local servers (Ollama, llama.cpp, vLLM) usually need none. */
  apiKey?: string;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

const NAME = 'openai-compatible';

const usageSchema = z
  .object({ prompt_tokens: z.number(), completion_tokens: z.number() })
  .nullish()
  .transform((usage) =>
    usage ? { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens } : undefined,
  );

const streamChunkSchema = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({ delta: z.object({ content: z.string().nullish() }).nullish(), finish_reason: z.string().nullish() }),
    )
    .nullish(),
  /** Sent in a last chunk (with no choices) when asked for by `stream_options.include_usage`. */
  usage: usageSchema,
  error: z.unknown().optional(),
});

const completionSchema = z.object({
  model: z.string().nullish(),
  choices: z
    .array(
      z.object({
        finish_reason: z.string().nullish(),
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(z.object({ function: z.object({ name: z.string(), arguments: z.string() }) })).nullish(),
        }),
      }),
    )
    .min(1),
  usage: usageSchema,
});

// An abort is the caller's own doing, so it surfaces as the signal's reason rather than as a provider failure.
const transportFailure = (error: unknown, signal: AbortSignal | undefined, what: string): unknown =>
  signal?.aborted ? signal.reason : new LlmError(`${NAME}: ${what}`, { retryable: true, cause: error });

const parseJson = (text: string, what: string): unknown => {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LlmError(`${NAME}: malformed ${what}`, { retryable: false, cause: error });
  }
};

// Servers that ignore `response_format` tend to wrap the JSON in prose or a code fence.
const jsonFromText = (text: string, what: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    return parseJson(
      start >= 0 && end > start ? text.slice(start, end + 1) : text,
      `${what} (no JSON object in the answer)`,
    );
  }
};

// The `data` payload of each server-sent event, as soon as the event is complete.
async function* sseData(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal | undefined,
): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for (;;) {
    const chunk = await reader.read().catch((error: unknown) => {
      throw transportFailure(error, signal, 'stream interrupted');
    });
    buffer += decoder.decode(chunk.value, { stream: !chunk.done });
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = chunk.done ? '' : (lines.pop() ?? '');
    for (const line of lines) {
      if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      else if (line === '' && data.length > 0) {
        yield data.join('\n');
        data = [];
      }
    }
    if (chunk.done) {
      if (data.length > 0) yield data.join('\n');
      return;
    }
  }
}

/**
 * A provider for any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama,
 * llama.cpp server). `streamText` streams over server-sent events and yields each content
 * fragment as it arrives; `chooseOption` asks for a JSON-schema answer and validates it;
 * `callTools` uses the `tools` parameter; `generateObject` asks for a strict JSON-schema answer and
 * returns the `usage` the server gives. Every call reports that usage to `onUsage` (a stream asks
 * for it with `stream_options.include_usage`; servers that ignore it report none). `topK` is sent as `top_k` only when set (OpenAI itself
 * rejects it; the local servers accept it). HTTP 429 and 5xx and dropped connections are
 * retryable {@link LlmError}s, other failures are not.
 */
export const createOpenAiCompatibleProvider = (options: OpenAiCompatibleOptions): LlmProvider => {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const fetchImpl = options.fetch ?? fetch;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  };

  const post = async (request: LlmRequest, extra: Record<string, unknown>): Promise<Response> => {
    const body = {
      model: request.model,
      messages: [...(request.system === '' ? [] : [{ role: 'system', content: request.system }]), ...request.messages],
      temperature: request.temperature,
      top_p: request.topP,
      top_k: request.topK,
      max_tokens: request.maxTokens,
      ...extra,
    };
    const response = await fetchImpl(url, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: request.signal,
    }).catch((error: unknown) => {
      throw transportFailure(error, request.signal, 'request failed');
    });
    if (!response.ok) {
      const detail = await response.text().catch(() => '');
      throw new LlmError(`${NAME}: HTTP ${response.status}${detail === '' ? '' : ` ${detail.slice(0, 500)}`}`, {
        retryable: response.status === 429 || response.status >= 500,
      });
    }
    return response;
  };

  const completeWithUsage = async (request: LlmRequest, extra: Record<string, unknown>) => {
    const response = await post(request, extra);
    const text = await response.text().catch((error: unknown) => {
      throw transportFailure(error, request.signal, 'response interrupted');
    });
    const parsed = completionSchema.safeParse(parseJson(text, 'response'));
    if (!parsed.success)
      throw new LlmError(`${NAME}: unexpected response shape`, { retryable: false, cause: parsed.error });
    const { usage, model, choices } = parsed.data;
    if (usage) request.onUsage?.(usage);
    request.onResponse?.({
      model: model ?? undefined,
      finishReasons: choices.flatMap((choice) => choice.finish_reason ?? []),
    });
    return { message: parsed.data.choices[0]?.message ?? {}, usage };
  };
  const complete = async (request: LlmRequest, extra: Record<string, unknown>) =>
    (await completeWithUsage(request, extra)).message;

  return {
    name: NAME,
    async *streamText(request: LlmRequest): AsyncIterable<string> {
      const response = await post(request, { stream: true, stream_options: { include_usage: true } });
      if (response.body === null) throw new LlmError(`${NAME}: response has no body`, { retryable: true });
      const reader = response.body.getReader();
      let model: string | undefined;
      const finishReasons: string[] = [];
      const finished = () => request.onResponse?.({ model, finishReasons });
      try {
        for await (const data of sseData(reader, request.signal)) {
          if (data === '[DONE]') return finished();
          const chunk = streamChunkSchema.safeParse(parseJson(data, 'stream event'));
          if (!chunk.success)
            throw new LlmError(`${NAME}: unexpected stream event`, { retryable: false, cause: chunk.error });
          // The server accepted the request, so an error reported mid-stream is on its side.
          if (chunk.data.error !== undefined) {
            throw new LlmError(`${NAME}: error in stream: ${JSON.stringify(chunk.data.error)}`, { retryable: true });
          }
          model ??= chunk.data.model ?? undefined;
          const reason = chunk.data.choices?.[0]?.finish_reason;
          if (reason) finishReasons.push(reason);
          const content = chunk.data.choices?.[0]?.delta?.content;
          if (content) yield content;
          if (chunk.data.usage) request.onUsage?.(chunk.data.usage);
        }
        finished();
      } finally {
        // Frees the connection when the consumer stops early; cancelling a finished stream is a no-op.
        await reader.cancel().catch(() => undefined);
      }
    },

    chooseOption: async (request) => {
      requireOptions(request.options);
      const message = await complete(
        { ...request, system: choiceSystemPrompt(request.system, request.options) },
        {
          response_format: {
            type: 'json_schema',
            json_schema: { name: CHOICE_NAME, strict: true, schema: choiceSchema(request.options) },
          },
        },
      );
      return parseChoice(jsonFromText(message.content ?? '', 'choice'), request.options);
    },

    callTools: async (request): Promise<CallToolsResult> => {
      const tools = request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
      }));
      // An empty `tools` array is rejected by OpenAI, so it is left out instead.
      const message = await complete(request, tools.length > 0 ? { tools } : {});
      const toolCalls = (message.tool_calls ?? []).map(({ function: call }) => ({
        name: call.name,
        // Some servers send empty arguments for tools without parameters.
        input: parseToolInput(
          call.arguments.trim() === '' ? {} : parseJson(call.arguments, 'tool arguments'),
          call.name,
        ),
      }));
      return { text: message.content ?? '', toolCalls };
    },

    generateObject: async (request): Promise<GenerateObjectResult> => {
      const { message, usage } = await completeWithUsage(request, {
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: request.schemaName,
            description: request.schemaDescription,
            strict: true,
            schema: request.schema,
          },
        },
      });
      return {
        value: parseToolInput(jsonFromText(message.content ?? '', request.schemaName), request.schemaName),
        ...(usage ? { usage } : {}),
      };
    },
  };
};

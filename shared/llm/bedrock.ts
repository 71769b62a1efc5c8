import {
  type BedrockRuntimeClient,
  BedrockRuntimeServiceException,
  type ContentBlock,
  ConverseCommand,
  type ConverseCommandInput,
  ConverseStreamCommand,
  type Message,
  type TokenUsage,
  type Tool,
  type ToolInputSchema,
} from '@aws-sdk/client-bedrock-runtime';
import {
  type CallToolsResult,
  type GenerateObjectResult,
  LlmError,
  type LlmMessage,
  type LlmProvider,
  type LlmRequest,
  type LlmTool,
  type LlmUsage,
} from './provider';
import {
  CHOICE_NAME,
  choiceSchema,
  choiceSystemPrompt,
  parseChoice,
  parseToolInput,
  requireOptions,
} from './structured-output';

export interface BedrockProviderOptions {
  /** Created once per process by the caller and shared by every call. */
  client: BedrockRuntimeClient;
}

type DocumentType = ToolInputSchema.JsonMember['json'];

const NAME = 'bedrock';

// Capacity and transient service faults; everything else (validation, access, quota) fails the same way again.
const RETRYABLE = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelTimeoutException',
  'ModelNotReadyException',
  'ModelStreamErrorException',
]);

// Exceptions that ConverseStream can report as events inside an accepted stream.
const STREAM_EXCEPTIONS = [
  'internalServerException',
  'modelStreamErrorException',
  'serviceUnavailableException',
  'throttlingException',
  'validationException',
] as const;

// Converse wants blank-free turns that alternate and open with the user; the first turn of a
// conversation has no user message yet, so one stands in for it.
const CONVERSATION_START = '(The conversation begins.)';

const failure = (name: string, message: string, cause: unknown, status?: number): LlmError =>
  new LlmError(`${NAME}: ${name}: ${message}`, {
    retryable: RETRYABLE.has(name) || status === 429 || (status !== undefined && status >= 500),
    cause,
  });

// An abort is the caller's own doing, so it surfaces as the signal's reason rather than as a provider failure.
const toFailure = (error: unknown, signal: AbortSignal | undefined): unknown => {
  if (signal?.aborted) return signal.reason;
  if (error instanceof LlmError) return error;
  if (error instanceof BedrockRuntimeServiceException) {
    return failure(error.name, error.message, error, error.$metadata.httpStatusCode);
  }
  return error instanceof Error ? failure(error.name, error.message, error) : failure('Error', String(error), error);
};

const toMessages = (messages: LlmMessage[]): Message[] => {
  const turns: Message[] = [];
  for (const { role, content } of messages) {
    if (content.trim() === '') continue;
    const last = turns.at(-1);
    if (last?.role === role) last.content?.push({ text: content });
    else turns.push({ role, content: [{ text: content }] });
  }
  if (turns[0]?.role !== 'user') turns.unshift({ role: 'user', content: [{ text: CONVERSATION_START }] });
  return turns;
};

const baseInput = (request: LlmRequest): ConverseCommandInput => ({
  modelId: request.model,
  system: request.system === '' ? undefined : [{ text: request.system }],
  messages: toMessages(request.messages),
  inferenceConfig: { temperature: request.temperature, topP: request.topP, maxTokens: request.maxTokens },
  // top_k is no common Converse parameter; Anthropic models take it as an extra field.
  additionalModelRequestFields: request.topK === undefined ? undefined : { top_k: request.topK },
});

const usageOf = (usage: TokenUsage | undefined): LlmUsage | undefined =>
  usage?.inputTokens === undefined || usage.outputTokens === undefined
    ? undefined
    : { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };

const toolSpec = (tool: LlmTool): Tool => ({
  toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.inputSchema as DocumentType } },
});

/**
 * A provider for Amazon Bedrock through the Converse API: `streamText` uses ConverseStream and
 * yields each text delta; `chooseOption` forces a `choose_option` tool call whose input is the
 * choice; `callTools` offers the tools with automatic tool choice; `generateObject` forces a tool
 * named after the schema and returns its input with the call's token use. Every call reports
 * Converse's token use to `onUsage` (a stream's from its closing `metadata` event). Throttling and service faults
 * are retryable {@link LlmError}s (the SDK has already retried network failures by then).
 */
export const createBedrockProvider = ({ client }: BedrockProviderOptions): LlmProvider => {
  const converseWithUsage = async (
    input: ConverseCommandInput,
    { signal, onUsage, onResponse }: Pick<LlmRequest, 'signal' | 'onUsage' | 'onResponse'>,
  ) => {
    const response = await client.send(new ConverseCommand(input), { abortSignal: signal }).catch((error: unknown) => {
      throw toFailure(error, signal);
    });
    const usage = usageOf(response.usage);
    if (usage) onUsage?.(usage);
    onResponse?.({ finishReasons: response.stopReason ? [response.stopReason] : [] });
    return { content: response.output?.message?.content ?? [], usage };
  };
  const converse = async (input: ConverseCommandInput, request: LlmRequest): Promise<ContentBlock[]> =>
    (await converseWithUsage(input, request)).content;

  return {
    name: NAME,
    async *streamText(request: LlmRequest): AsyncIterable<string> {
      try {
        const response = await client.send(new ConverseStreamCommand(baseInput(request)), {
          abortSignal: request.signal,
        });
        const finishReasons: string[] = [];
        for await (const event of response.stream ?? []) {
          for (const key of STREAM_EXCEPTIONS) {
            const exception = event[key];
            if (exception) throw failure(key.charAt(0).toUpperCase() + key.slice(1), exception.message, exception);
          }
          const text = event.contentBlockDelta?.delta?.text;
          if (text) yield text;
          if (event.messageStop?.stopReason) finishReasons.push(event.messageStop.stopReason);
          // The stream's last event carries the call's token use.
          const usage = usageOf(event.metadata?.usage);
          if (usage) request.onUsage?.(usage);
        }
        request.onResponse?.({ finishReasons });
      } catch (error) {
        throw toFailure(error, request.signal);
      }
    },

    chooseOption: async (request) => {
      requireOptions(request.options);
      const content = await converse(
        {
          ...baseInput({ ...request, system: choiceSystemPrompt(request.system, request.options) }),
          toolConfig: {
            tools: [
              toolSpec({
                name: CHOICE_NAME,
                description: 'Report which option fits the conversation and why.',
                inputSchema: choiceSchema(request.options),
              }),
            ],
            toolChoice: { tool: { name: CHOICE_NAME } },
          },
        },
        request,
      );
      const choice = content.find((block) => block.toolUse?.name === CHOICE_NAME)?.toolUse;
      if (choice === undefined) throw new LlmError(`${NAME}: the model did not report a choice`, { retryable: false });
      return parseChoice(choice.input, request.options);
    },

    callTools: async (request): Promise<CallToolsResult> => {
      const content = await converse(
        {
          ...baseInput(request),
          // Converse rejects an empty tool list, so it is left out instead.
          toolConfig:
            request.tools.length === 0 ? undefined : { tools: request.tools.map(toolSpec), toolChoice: { auto: {} } },
        },
        request,
      );
      return {
        text: content.map((block) => block.text ?? '').join(''),
        toolCalls: content.flatMap(({ toolUse }) =>
          toolUse === undefined
            ? []
            : [{ name: toolUse.name ?? '', input: parseToolInput(toolUse.input, toolUse.name ?? '') }],
        ),
      };
    },

    generateObject: async (request): Promise<GenerateObjectResult> => {
      const { content, usage } = await converseWithUsage(
        {
          ...baseInput(request),
          toolConfig: {
            tools: [
              toolSpec({
                name: request.schemaName,
                description: request.schemaDescription,
                inputSchema: request.schema,
              }),
            ],
            toolChoice: { tool: { name: request.schemaName } },
          },
        },
        request,
      );
      const answer = content.find((block) => block.toolUse?.name === request.schemaName)?.toolUse;
      if (answer === undefined)
        throw new LlmError(`${NAME}: the model did not answer with ${request.schemaName}`, { retryable: false });
      return { value: parseToolInput(answer.input, request.schemaName), ...(usage ? { usage } : {}) };
    },
  };
};

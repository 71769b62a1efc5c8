import { genAi } from '../telemetry/gen-ai';
import { captureMessageContent, type SpanAttributes, startSpan, type TraceSpan, tracingOn } from '../telemetry/tracing';
import type { LlmProvider, LlmRequest } from './provider';

/** Each adapter's `gen_ai.provider.name` (the built-in stand-in keeps its own name). */
const conventionNames: Record<string, string> = { 'openai-compatible': 'openai', bedrock: 'aws.bedrock' };

/** Where a remote provider is reached (`server.address`, `server.port`), when known. */
export interface ProviderServer {
  address: string;
  port: number;
}

const serverOf = (baseUrl: string | undefined): ProviderServer | undefined => {
  if (!baseUrl) return undefined;
  const url = new URL(baseUrl);
  return { address: url.hostname, port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80) };
};

/** The GenAI conventions' message shape: one text part per message, as JSON text (span attributes hold no objects). */
const textMessages = (messages: { role: string; content: string }[]) =>
  JSON.stringify(messages.map(({ role, content }) => ({ role, parts: [{ type: 'text', content }] })));

/**
 * `provider` with each call a `chat {model}` span in the GenAI conventions (`shared/telemetry/`):
 * the provider, the request's model and sampling, the answering model, token usage and finish
 * reasons, and for a stream the time to its first piece. What was said is added only where the
 * deployment captures message content. Wraps every provider the registry makes; off, the provider
 * itself.
 */
export const tracedProvider = (provider: LlmProvider, baseUrl?: string): LlmProvider => {
  if (!tracingOn) return provider;
  const providerName = conventionNames[provider.name] ?? provider.name;
  const server = provider.name === 'openai-compatible' ? serverOf(baseUrl) : undefined;

  const start = <R extends LlmRequest>(request: R, attributes: SpanAttributes): { span: TraceSpan; traced: R } => {
    const span = startSpan(`chat ${request.model}`, {
      kind: 'client',
      attributes: {
        [genAi.operationName]: 'chat',
        [genAi.providerName]: providerName,
        [genAi.requestModel]: request.model,
        [genAi.requestTemperature]: request.temperature,
        [genAi.requestTopP]: request.topP,
        [genAi.requestTopK]: request.topK,
        [genAi.requestMaxTokens]: request.maxTokens,
        'server.address': server?.address,
        'server.port': server?.port,
        ...attributes,
        ...(captureMessageContent
          ? {
              [genAi.systemInstructions]: JSON.stringify([{ type: 'text', content: request.system }]),
              [genAi.inputMessages]: textMessages(request.messages),
            }
          : {}),
      },
    });
    const traced: R = {
      ...request,
      onUsage: (usage) => {
        span.set({ [genAi.inputTokens]: usage.inputTokens, [genAi.outputTokens]: usage.outputTokens });
        request.onUsage?.(usage);
      },
      onResponse: (response) => {
        span.set({
          [genAi.responseModel]: response.model ?? request.model,
          [genAi.responseFinishReasons]: response.finishReasons,
        });
        request.onResponse?.(response);
      },
    };
    return { span, traced };
  };

  const call = async <R extends LlmRequest, T>(
    request: R,
    attributes: SpanAttributes,
    invoke: (traced: R) => Promise<T>,
    answer: (result: T) => string,
  ): Promise<T> => {
    const { span, traced } = start(request, attributes);
    try {
      const result = await span.run(() => invoke(traced));
      if (captureMessageContent) span.set({ [genAi.outputMessages]: textMessages([answerMessage(answer(result))]) });
      span.end();
      return result;
    } catch (error) {
      span.end(error);
      throw error;
    }
  };
  const answerMessage = (content: string) => ({ role: 'assistant', content });

  return {
    name: provider.name,
    async *streamText(request) {
      const { span, traced } = start(request, { [genAi.requestStream]: true });
      const began = performance.now();
      const fragments = span.run(() => provider.streamText(traced)[Symbol.asyncIterator]());
      let answered = '';
      let first = true;
      let failed = false;
      try {
        for (;;) {
          // The provider's work for each piece is inside the span (its HTTP or SDK calls are children).
          const step = await span.run(() => fragments.next());
          if (step.done) break;
          if (first) span.set({ [genAi.timeToFirstChunk]: (performance.now() - began) / 1000 });
          first = false;
          if (captureMessageContent) answered += step.value;
          yield step.value;
        }
        if (captureMessageContent) span.set({ [genAi.outputMessages]: textMessages([answerMessage(answered)]) });
      } catch (error) {
        failed = true;
        span.end(error);
        throw error;
      } finally {
        // A reader that stops early (the turn was interrupted) stops the provider's stream too.
        await fragments.return?.();
        if (!failed) span.end();
      }
    },
    chooseOption: (request) =>
      call(
        request,
        { [genAi.outputType]: 'json' },
        (traced) => provider.chooseOption(traced),
        (choice) => JSON.stringify(choice),
      ),
    callTools: (request) =>
      call(
        request,
        {},
        (traced) => provider.callTools(traced),
        ({ text, toolCalls }) => JSON.stringify({ text, tool_calls: toolCalls }),
      ),
    generateObject: (request) =>
      call(
        request,
        { [genAi.outputType]: 'json' },
        (traced) => provider.generateObject(traced),
        ({ value }) => JSON.stringify(value),
      ),
  };
};

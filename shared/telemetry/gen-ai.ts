import type { AsyncLocalStorage } from 'node:async_hooks';
import { flushTraces, type SpanAttributes, type SpanOptions, startSpan, type TraceSpan, tracingOn } from './tracing';

/**
 * The spans of conversations, in the OpenTelemetry semantic conventions for generative AI as
 * released in semantic-conventions v1.41.0 (still marked in development there, so pinned: the
 * attribute list and what differs are in docs/observability.md). Names only the platform defines
 * are under `classic_api.`.
 */
export const genAiConventions = 'https://opentelemetry.io/schemas/1.41.0';

/** The GenAI attributes this platform sets. */
export const genAi = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  conversationId: 'gen_ai.conversation.id',
  agentId: 'gen_ai.agent.id',
  agentName: 'gen_ai.agent.name',
  agentVersion: 'gen_ai.agent.version',
  requestModel: 'gen_ai.request.model',
  requestStream: 'gen_ai.request.stream',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestTopK: 'gen_ai.request.top_k',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  outputType: 'gen_ai.output.type',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  timeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolType: 'gen_ai.tool.type',
  toolDescription: 'gen_ai.tool.description',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
} as const;

/** What the platform adds: where a turn belongs, and the speech stages. */
export const platformAttributes = {
  organizationId: 'classic_api.organization.id',
  serviceId: 'classic_api.service.id',
  versionSetName: 'classic_api.version_set.name',
  interactionId: 'classic_api.interaction.id',
  stateMachineId: 'classic_api.state_machine.id',
  stateMachineVersion: 'classic_api.state_machine.version',
  modelPurpose: 'classic_api.model.purpose',
  toolId: 'classic_api.tool.id',
  toolVersion: 'classic_api.tool.version',
  toolMocked: 'classic_api.tool.mocked',
  speechVoice: 'classic_api.speech.voice',
  speechLanguage: 'classic_api.speech.language',
  speechCharacters: 'classic_api.speech.characters',
  speechAudioMs: 'classic_api.speech.audio_ms',
  speechText: 'classic_api.speech.text',
} as const;

/** A live voice session's span, for the turns it runs (set by {@link traceVoiceSession}). */
let sessionOfTurn: AsyncLocalStorage<TraceSpan> | undefined;

/**
 * A conversation turn's operation (`startConversation`, `interactWithConversation`) whose every
 * call is an `invoke_agent` span: the turn's model calls, tool calls, speech stages and storage
 * calls are its descendants. It ends once the turn has settled (its stream's work done, read or
 * not), failed if the operation threw; `describe` names what the call says, and the turn adds the
 * agent when it is known (`currentSpan().set`). Off, `run` itself.
 */
export const tracedAgentTurn = <A extends unknown[], T extends { settled: Promise<void> }>(
  run: (...args: A) => Promise<T>,
  describe: (...args: A) => SpanAttributes,
): ((...args: A) => Promise<T>) =>
  tracingOn
    ? async (...args) => {
        const session = sessionOfTurn?.getStore();
        const options: SpanOptions = {
          attributes: { [genAi.operationName]: 'invoke_agent', ...describe(...args) },
          // A live session's turn is a trace of its own, linked to the session's.
          ...(session ? { newTrace: true, links: [session] } : {}),
        };
        const span = startSpan('invoke_agent', options);
        const ended = (error?: unknown) => {
          span.end(error);
          // A socket server is no Lambda: nothing flushes at an invocation's end.
          if (session) void flushTraces();
        };
        try {
          const turn = await span.run(() => run(...args));
          turn.settled.then(() => ended());
          return turn;
        } catch (error) {
          ended(error);
          throw error;
        }
      }
    : run;

/** A live voice session as traces: its own span for the session, and a trace per turn linked to it. */
export interface VoiceSessionTrace {
  /** Runs a turn of the session (the call of `interactWithConversation`): its `invoke_agent` is a trace of its own, linked to the session. */
  turn<T>(run: () => Promise<T>): Promise<T>;
  /** Says more of the session once known (the conversation a session's opening turn created). */
  set(attributes: SpanAttributes): void;
  /** The session closed (failed, with the error that closed it). */
  end(error?: unknown): void;
}

const untracedSession: VoiceSessionTrace = { turn: (run) => run(), set: () => undefined, end: () => undefined };

/**
 * The span of a live voice session (a browser's or a phone call's socket), from its opening to its
 * close. Its turns are not its children, which would make one trace of an hour's call, exported
 * only at its end: each is an `invoke_agent` trace of its own with a link to the session.
 */
export const traceVoiceSession = (attributes: SpanAttributes): VoiceSessionTrace => {
  if (!tracingOn) return untracedSession;
  const span = startSpan('voice_session', { kind: 'server', attributes });
  return {
    turn: async (run) => {
      sessionOfTurn ??= new (await import('node:async_hooks')).AsyncLocalStorage<TraceSpan>();
      return sessionOfTurn.run(span, run);
    },
    set: (more) => span.set(more),
    end: (error) => {
      span.end(error);
      void flushTraces();
    },
  };
};

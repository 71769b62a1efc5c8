import type { ModelCallUsage, TurnTimings, TurnUsage } from '../../events/stream-events';
import { measuredProvider } from '../llm/measured-provider';
import { callCost, configuredPrices, type PriceTable } from '../llm/pricing';
import type { LlmProvider } from '../llm/provider';
import { currentSpan } from '../telemetry/tracing';
import type { ModelPurpose } from './engine/contracts';

/** A turn's figures: where its time went and what its model calls consumed. */
export interface TurnFigures {
  timings: TurnTimings;
  usage: TurnUsage;
}

/**
 * Measures one turn from its request on: each model call (through the providers it hands out),
 * each tool call and the speech work. `figures()` reads them, the total up to that moment.
 */
export interface TurnMeter {
  /** The model with its calls timed and their tokens counted under `purpose`. */
  model<M extends { provider: LlmProvider; model: string }>(purpose: ModelPurpose, model: M): M;
  /** Runs a tool call, timed under the tool's name. */
  tool<T>(name: string, call: () => Promise<T>): Promise<T>;
  /** Runs speech work (transcribing the user, speaking the agent), timed. */
  speech<T>(stage: 'recognition' | 'synthesis', work: () => Promise<T>): Promise<T>;
  /** Speech recognized before the turn (a live session's, while it was spoken): the time after its end. */
  recognized(milliseconds: number): void;
  /** The agent's first clause is ready to speak (a voice answer); only the first call counts. */
  firstClause(): void;
  /** The agent's first audio is ready to send (a voice answer); only the first call counts. */
  firstAudio(): void;
  figures(): TurnFigures;
}

const whole = (milliseconds: number): number => Math.round(milliseconds);

/** `started`: the turn's origin (`performance.now()`), its request, or the end of the speech it answers. */
export const startTurnMeter = (prices: PriceTable = configuredPrices(), started = performance.now()): TurnMeter => {
  let modelMs = 0;
  let firstTokenMs: number | undefined;
  let firstTokenAtMs: number | undefined;
  let firstClauseMs: number | undefined;
  let firstAudioMs: number | undefined;
  const calls: ModelCallUsage[] = [];
  const toolCalls: TurnTimings['tool_calls'] = [];
  const speechMs: Partial<Record<'recognition' | 'synthesis', number>> = {};

  const timed = async <T>(work: () => Promise<T>, record: (milliseconds: number) => void): Promise<T> => {
    const begun = performance.now();
    try {
      return await work();
    } finally {
      record(performance.now() - begun);
    }
  };

  return {
    model: (purpose, model) => ({
      ...model,
      provider: measuredProvider(model.provider, () => {
        const calledAtMs = performance.now() - started;
        return ({ durationMs, firstFragmentMs, usage }) => {
          modelMs += durationMs;
          // The agent's message is what the user waits for; other streams (reflections) are not.
          if (purpose === 'engage_user' && firstFragmentMs !== undefined && firstTokenMs === undefined) {
            firstTokenMs = firstFragmentMs;
            firstTokenAtMs = calledAtMs + firstFragmentMs;
          }
          calls.push({
            model: model.model,
            purpose,
            input_tokens: usage?.inputTokens ?? null,
            output_tokens: usage?.outputTokens ?? null,
            tokens_estimated: usage?.estimated === true,
            cost_usd: callCost({ provider: model.provider.name, model: model.model, usage }, prices),
          });
        };
      }),
    }),
    tool: (name, call) => {
      const atMs = whole(performance.now() - started);
      return timed(call, (milliseconds) => toolCalls.push({ name, ms: whole(milliseconds), at_ms: atMs }));
    },
    speech: (stage, work) =>
      timed(work, (milliseconds) => {
        speechMs[stage] = (speechMs[stage] ?? 0) + milliseconds;
      }),
    recognized: (milliseconds) => {
      speechMs.recognition = (speechMs.recognition ?? 0) + milliseconds;
    },
    firstClause: () => {
      firstClauseMs ??= performance.now() - started;
    },
    firstAudio: () => {
      firstAudioMs ??= performance.now() - started;
    },
    figures: () => {
      const costs = calls.map((call) => call.cost_usd);
      // Read inside the turn's span (`tracedAgentTurn`): the trace its spans are exported in.
      const { traceId } = currentSpan();
      return {
        timings: {
          total_ms: whole(performance.now() - started),
          ...(speechMs.recognition === undefined ? {} : { speech_recognition_ms: whole(speechMs.recognition) }),
          model_first_token_ms: firstTokenMs === undefined ? null : whole(firstTokenMs),
          ...(firstTokenAtMs === undefined ? {} : { first_token_ms: whole(firstTokenAtMs) }),
          ...(firstClauseMs === undefined ? {} : { first_clause_ms: whole(firstClauseMs) }),
          model_total_ms: whole(modelMs),
          tool_calls: [...toolCalls],
          ...(speechMs.synthesis === undefined ? {} : { speech_synthesis_ms: whole(speechMs.synthesis) }),
          ...(firstAudioMs === undefined ? {} : { first_audio_ms: whole(firstAudioMs) }),
          ...(traceId === undefined ? {} : { trace_id: traceId }),
        },
        usage: {
          model_calls: [...calls],
          input_tokens: calls.reduce((sum, call) => sum + (call.input_tokens ?? 0), 0),
          output_tokens: calls.reduce((sum, call) => sum + (call.output_tokens ?? 0), 0),
          cost_usd: costs.some((cost) => cost === null)
            ? null
            : costs.reduce<number>((sum, cost) => sum + (cost ?? 0), 0),
        },
      };
    },
  };
};

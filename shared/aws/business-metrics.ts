import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { TurnTimings, TurnUsage } from '../../events/stream-events';
import { metrics } from './observability';

/**
 * The platform's business metrics, published as CloudWatch EMF in the functions' metrics
 * namespace with the emitting function's `service` dimension. The dashboard
 * (`infra/constructs/observability.ts`) graphs them by these names.
 */
export const businessMetric = {
  conversationsStarted: 'ConversationsStarted',
  interactions: 'Interactions',
  analysesCompleted: 'AnalysesCompleted',
  toolCalls: 'ToolCalls',
  /** Version set promotions that ended (promoted, rejected or failed). */
  promotionsEnded: 'VersionSetPromotionsEnded',
  /** Webhook attempts, by `outcome` (`delivered`, `retrying`, `failed`). */
  webhookAttempts: 'WebhookAttempts',
  /** Milliseconds from a webhook event's delivery record to the destination's 2xx, over every attempt. */
  webhookDeliveryLatency: 'WebhookDeliveryLatency',
  /** Every error response, with dimensions `error` (the error class) and `status`. */
  errorResponses: 'ErrorResponses',
  /** 5xx responses alone, without the per-kind dimensions, to graph and alarm on directly. */
  serverErrorResponses: 'ServerErrorResponses',
} as const;

/**
 * What each conversation turn measured (`interaction-complete`'s `timings` and `usage`), with the
 * dimension `service_id` (the conversation's service) beside the function's `service`.
 */
export const turnMetric = {
  totalMs: 'TurnTotalMs',
  modelFirstTokenMs: 'ModelFirstTokenMs',
  modelTotalMs: 'ModelTotalMs',
  /** One value per tool call. */
  toolCallMs: 'ToolCallMs',
  speechRecognitionMs: 'SpeechRecognitionMs',
  speechSynthesisMs: 'SpeechSynthesisMs',
  /** Voice answers only: from the request to the first audio piece. */
  firstAudioMs: 'FirstAudioMs',
  inputTokens: 'InputTokens',
  outputTokens: 'OutputTokens',
  /** USD; only for turns whose every model call has a price. */
  cost: 'TurnCost',
} as const;

/**
 * Operators (see the README's Operators): escalations by `trigger` (`user`, `agent`, `operator`),
 * those that expired unclaimed, and how long conversations waited for an operator and were held.
 */
export const operatorMetric = {
  escalations: 'Escalations',
  escalationsExpired: 'EscalationsExpired',
  /** From the escalation to an operator taking the conversation over. */
  takeOverWaitMs: 'OperatorTakeOverWaitMs',
  /** From an operator taking the conversation over to its handback. */
  heldMs: 'OperatorHeldMs',
} as const;

/**
 * Live voice sessions (the browser socket and Twilio's media stream), by `transport`: sessions
 * opened, end of the caller's speech to the agent's first audio, and barge-ins (the caller
 * speaking over an answer being produced or played).
 */
export const voiceSessionMetric = {
  sessions: 'VoiceSessions',
  endOfSpeechToFirstAudioMs: 'VoiceEndOfSpeechToFirstAudioMs',
  bargeIns: 'VoiceBargeIns',
} as const;

/** Dimension values of `VoiceSessions`' `transport`. */
export const voiceSessionTransports = ['browser', 'twilio'] as const;
export type VoiceSessionTransport = (typeof voiceSessionTransports)[number];

/** Dimension values of `Escalations`. */
export const escalationTriggerValues = ['user', 'agent', 'operator'] as const;

/** The turn metrics graphed as latency percentiles. */
export const turnLatencyMetrics = [
  turnMetric.totalMs,
  turnMetric.modelFirstTokenMs,
  turnMetric.modelTotalMs,
  turnMetric.toolCallMs,
  turnMetric.speechRecognitionMs,
  turnMetric.speechSynthesisMs,
  turnMetric.firstAudioMs,
] as const;

/** The dimension naming a turn's conversation service. */
export const serviceIdDimension = 'service_id';

/** Dimension names of `ErrorResponses`. */
export const errorDimensions = ['error', 'status'] as const;

/**
 * Each count is published at once as its own EMF record rather than buffered until a
 * middleware flushes: a streaming response goes on after its handler returned, and per-metric
 * dimensions would otherwise apply to everything in the buffer. With nothing ever buffered,
 * the handlers carry no flushing middleware (it would only warn that the buffer is empty).
 */
const count = (name: string, dimensions: Record<string, string> = {}): void => {
  const single = metrics.singleMetric();
  for (const [dimension, value] of Object.entries(dimensions)) single.addDimension(dimension, value);
  single.addMetric(name, MetricUnit.Count, 1);
};

/** A version set promotion ended, whatever its outcome. */
export const countPromotionEnded = (): void => count(businessMetric.promotionsEnded);

/** A conversation was stored (its opening turn follows). */
export const countConversationStarted = (): void => count(businessMetric.conversationsStarted);

/** A turn of a conversation was committed, the opening one included. */
export const countInteraction = (): void => count(businessMetric.interactions);

/** The post-conversation analysis of a conversation completed (counted once per conversation). */
export const countAnalysisCompleted = (): void => count(businessMetric.analysesCompleted);

/** A tool was called; the `callTool` extension of the engine (`EngineExtensions`) counts each call it makes. */
export const countToolCall = (): void => count(businessMetric.toolCalls);

/** An error response of the HTTP API, by error class and status; 5xx are also counted on their own. */
export const countErrorResponse = (error: string, status: number): void => {
  count(businessMetric.errorResponses, { error, status: String(status) });
  if (status >= 500) count(businessMetric.serverErrorResponses);
};

/** Dimension values of `WebhookAttempts`. */
export const webhookAttemptOutcomes = ['delivered', 'retrying', 'failed'] as const;

/** A webhook attempt ended: delivered (2xx), retrying (another attempt is queued) or failed (the last one). */
export const countWebhookAttempt = (outcome: (typeof webhookAttemptOutcomes)[number]): void =>
  count(businessMetric.webhookAttempts, { outcome });

/** What a turn measured (see {@link turnMetric}); absent figures (no voice, no price) are not published. */
export const recordTurnMetrics = (
  serviceId: string,
  { timings, usage }: { timings: TurnTimings; usage: TurnUsage },
): void => {
  const publish = (
    name: string,
    unit: (typeof MetricUnit)[keyof typeof MetricUnit],
    value: number | null | undefined,
  ): void => {
    if (value === null || value === undefined) return;
    const single = metrics.singleMetric();
    single.addDimension(serviceIdDimension, serviceId);
    single.addMetric(name, unit, value);
  };
  publish(turnMetric.totalMs, MetricUnit.Milliseconds, timings.total_ms);
  publish(turnMetric.modelFirstTokenMs, MetricUnit.Milliseconds, timings.model_first_token_ms);
  publish(turnMetric.modelTotalMs, MetricUnit.Milliseconds, timings.model_total_ms);
  for (const call of timings.tool_calls) publish(turnMetric.toolCallMs, MetricUnit.Milliseconds, call.ms);
  publish(turnMetric.speechRecognitionMs, MetricUnit.Milliseconds, timings.speech_recognition_ms);
  publish(turnMetric.speechSynthesisMs, MetricUnit.Milliseconds, timings.speech_synthesis_ms);
  publish(turnMetric.firstAudioMs, MetricUnit.Milliseconds, timings.first_audio_ms);
  publish(turnMetric.inputTokens, MetricUnit.Count, usage.input_tokens);
  publish(turnMetric.outputTokens, MetricUnit.Count, usage.output_tokens);
  publish(turnMetric.cost, MetricUnit.NoUnit, usage.cost_usd);
};

/** A voice session opened on a transport. */
export const countVoiceSession = (transport: VoiceSessionTransport): void =>
  count(voiceSessionMetric.sessions, { transport });

/** The caller spoke over the agent's answer. */
export const countBargeIn = (transport: VoiceSessionTransport): void =>
  count(voiceSessionMetric.bargeIns, { transport });

/** From the end of the caller's speech to the agent's first audio of the answer. */
export const recordEndOfSpeechToFirstAudio = (milliseconds: number): void => {
  const single = metrics.singleMetric();
  single.addMetric(voiceSessionMetric.endOfSpeechToFirstAudioMs, MetricUnit.Milliseconds, Math.max(0, milliseconds));
};

/** How long a delivered webhook took from its event's fan-out to the destination's 2xx. */
export const recordWebhookDeliveryLatency = (milliseconds: number): void => {
  const single = metrics.singleMetric();
  single.addMetric(businessMetric.webhookDeliveryLatency, MetricUnit.Milliseconds, milliseconds);
};

/** A conversation was escalated to an operator, by whom. */
export const countEscalation = (trigger: (typeof escalationTriggerValues)[number]): void =>
  count(operatorMetric.escalations, { trigger });

/** An escalation nobody took returned its conversation to the agent. */
export const countEscalationExpired = (): void => count(operatorMetric.escalationsExpired);

/** How long the conversation waited for an operator (`takeOverWaitMs`) or was held by one (`heldMs`). */
export const recordOperatorTime = (
  name: typeof operatorMetric.takeOverWaitMs | typeof operatorMetric.heldMs,
  milliseconds: number,
): void => {
  const single = metrics.singleMetric();
  single.addMetric(name, MetricUnit.Milliseconds, Math.max(0, milliseconds));
};

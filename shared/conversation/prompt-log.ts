import { writeObject } from '../aws/bucket';
import { logger } from '../aws/observability';
import { type ModelCallMeasurement, measuredProvider } from '../llm/measured-provider';
import { callCost, configuredPrices } from '../llm/pricing';
import type { LlmProvider, LlmRequest } from '../llm/provider';
import { choiceSystemPrompt } from '../llm/structured-output';

/**
 * Every model call leaves a prompt log in the artifact bucket: `{key}-system` (the system
 * prompt as sent), `{key}-history` (the turns, separated by a line of three hyphens) and, once
 * the call has ended, `{key}-metrics` (JSON: its milliseconds, first token, tokens and cost). Keys
 * are hierarchical from the organization down, so a prefix selects a subtree
 * (`get-prompt-logs`):
 *
 *     prompt-logs/{org_id}/{service_id}/{conversation_id}/{interaction_id}/{call}   a turn (`1`, `2`, ...; `recommend-1` for recommended responses)
 *     prompt-logs/{org_id}/{service_id}/{conversation_id}/analysis/{call}           post-conversation analysis
 *     prompt-logs/{org_id}/{service_id}/starters/{request_id}/{call}                conversation starters
 *
 * Other capabilities (metrics, simulations, dynamic behaviors) log under their own scope with
 * `createPromptLogger`, naming the record whose permission guards the log (`PromptLogScope.guard`).
 */
export interface PromptLogScope {
  orgId: string;
  /** Path segments below the organization, most general first (e.g. service, conversation, interaction). */
  segments: readonly string[];
  /** Tells apart calls made for other purposes in the same scope (e.g. `recommend-`). */
  callPrefix?: string;
}

export const promptLogRoot = (orgId: string): string => `prompt-logs/${orgId}/`;

/** `prompt-logs/{org}/{segments…}/{call prefix}`: what every call of the scope is logged under. */
export const promptLogPrefix = (scope: PromptLogScope): string =>
  `${promptLogRoot(scope.orgId)}${scope.segments.join('/')}/${scope.callPrefix ?? ''}`;

/** The log of the `callNumber`th call in the scope; `-system` and `-history` are appended. */
export const promptLogKey = (scope: PromptLogScope, callNumber: number): string =>
  `${promptLogPrefix(scope)}${callNumber}`;

export const interactionLogScope = (
  conversation: { org_id: string; service_id: string; id: string },
  interactionId: string,
  callPrefix?: string,
): PromptLogScope => ({
  orgId: conversation.org_id,
  segments: [conversation.service_id, conversation.id, interactionId],
  callPrefix,
});

export const analysisLogScope = (conversation: { org_id: string; service_id: string; id: string }): PromptLogScope => ({
  orgId: conversation.org_id,
  segments: [conversation.service_id, conversation.id, 'analysis'],
});

export const starterLogScope = (orgId: string, serviceId: string, requestId: string): PromptLogScope => ({
  orgId,
  segments: [serviceId, 'starters', requestId],
});

/** What guards a log, read back from its key: the conversation it is about, or the service. */
export type PromptLogGuard =
  | { kind: 'conversation'; serviceId: string; conversationId: string }
  | { kind: 'service'; serviceId: string };

export const promptLogGuard = (orgId: string, key: string): PromptLogGuard | undefined => {
  if (!key.startsWith(promptLogRoot(orgId))) return undefined;
  const [serviceId, second] = key.slice(promptLogRoot(orgId).length).split('/');
  if (!serviceId || !second) return undefined;
  if (second === 'starters') return { kind: 'service', serviceId };
  return /^[a-f0-9]{24}$/.test(second) ? { kind: 'conversation', serviceId, conversationId: second } : undefined;
};

/** The history prompts of a call, one per message, separated by a line of three hyphens. */
export const historyLog = (request: Pick<LlmRequest, 'messages'>): string =>
  request.messages.map((message) => `${message.role}: ${message.content}`).join('\n---\n');

/** A call's `-metrics` log: its time and tokens, in the units of the turn's `timings` and `usage`. */
export const callMetrics = (provider: string, model: string, measurement: ModelCallMeasurement) => ({
  model,
  duration_ms: Math.round(measurement.durationMs),
  first_token_ms: measurement.firstFragmentMs === undefined ? null : Math.round(measurement.firstFragmentMs),
  input_tokens: measurement.usage?.inputTokens ?? null,
  output_tokens: measurement.usage?.outputTokens ?? null,
  tokens_estimated: measurement.usage?.estimated === true,
  cost_usd: callCost({ provider, model, usage: measurement.usage }, configuredPrices()),
});

export interface PromptLogger {
  /** The provider with every call's system prompt and history logged (calls numbered from 1). */
  wrap(provider: LlmProvider): LlmProvider;
  /** The key prefix of this logger's calls (the admin prompt-log download's `prompt_log_prefix`). */
  readonly prefix: string;
  /** Waits for the logs written so far; a failed write is logged, never thrown. */
  flush(): Promise<void>;
}

/**
 * Logs each model call of an interaction to the artifact bucket. Writing does not hold up
 * the call (the first piece of a streamed answer must not wait for S3); `flush` before the
 * function returns makes sure every log is stored.
 */
export const createPromptLogger = (scope: PromptLogScope): PromptLogger => {
  let calls = 0;
  const pending: Promise<void>[] = [];
  const put = (key: string, body: string) => writeObject(key, Buffer.from(body, 'utf8'), 'text/plain; charset=utf-8');
  const write = (key: string, parts: [suffix: string, body: string][]): void => {
    pending.push(
      Promise.all(parts.map(([suffix, body]) => put(`${key}-${suffix}`, body))).then(
        () => undefined,
        (error: unknown) => logger.warn('prompt log not written', { key, error: error as Error }),
      ),
    );
  };
  return {
    prefix: promptLogPrefix(scope),
    wrap: (provider) =>
      measuredProvider(provider, (request) => {
        calls += 1;
        const key = promptLogKey(scope, calls);
        // The provider adds a choice's options to the system prompt; the log shows the prompt as sent.
        const system = request.options ? choiceSystemPrompt(request.system, request.options) : request.system;
        write(key, [
          ['system', system],
          ['history', historyLog(request)],
        ]);
        return (measurement) =>
          write(key, [['metrics', JSON.stringify(callMetrics(provider.name, request.model, measurement))]]);
      }),
    flush: async () => {
      await Promise.all(pending.splice(0));
    },
  };
};

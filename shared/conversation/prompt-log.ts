import { writeObject } from '../aws/bucket';
import { logger } from '../aws/observability';
import { type ModelCallMeasurement, measuredProvider } from '../llm/measured-provider';
import { callCost, configuredPrices } from '../llm/pricing';
import type { LlmProvider, LlmRequest } from '../llm/provider';
import { choiceSystemPrompt } from '../llm/structured-output';
import { retentionTags } from './retention';

/**
 * Every model call leaves a prompt log in the artifact bucket: its system prompt as sent, its
 * history (the turns, separated by a line of three hyphens) and, once the call has ended, its
 * metrics (JSON: its milliseconds, first token, tokens and cost). The calls of one scope (a
 * turn, an analysis step, a starter request) are stored together, as one object written when the
 * scope's logger flushes (`{prefix}calls.json`, {@link PromptLogBundle}): one PUT per turn instead
 * of three per call. The download (`get-prompt-logs`) gives each call as `{log_key}-system`,
 * `{log_key}-history` and `{log_key}-metrics`, as when each was an object of its own (logs written
 * before are still read so). Log keys are hierarchical from the organization down, so a prefix
 * selects a subtree:
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
  /** The conversation's retention tag, if it has one (`retentionTags`). */
  tags?: Record<string, string>;
}

export const promptLogRoot = (orgId: string): string => `prompt-logs/${orgId}/`;

/** `prompt-logs/{org}/{segments…}/{call prefix}`: what every call of the scope is logged under. */
export const promptLogPrefix = (scope: PromptLogScope): string =>
  `${promptLogRoot(scope.orgId)}${scope.segments.join('/')}/${scope.callPrefix ?? ''}`;

/** The log of the `callNumber`th call in the scope; `-system` and `-history` are appended. */
export const promptLogKey = (scope: PromptLogScope, callNumber: number): string =>
  `${promptLogPrefix(scope)}${callNumber}`;

type LoggedConversation = { org_id: string; service_id: string; id: string; retention_days?: number };

export const interactionLogScope = (
  conversation: LoggedConversation,
  interactionId: string,
  callPrefix?: string,
): PromptLogScope => ({
  orgId: conversation.org_id,
  segments: [conversation.service_id, conversation.id, interactionId],
  callPrefix,
  tags: retentionTags(conversation),
});

export const analysisLogScope = (conversation: LoggedConversation): PromptLogScope => ({
  orgId: conversation.org_id,
  segments: [conversation.service_id, conversation.id, 'analysis'],
  tags: retentionTags(conversation),
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

/** One model call's log: what the download gives as `{key}-system`, `{key}-history` and `{key}-metrics`. */
export interface PromptLogCall {
  key: string;
  system: string;
  history: string;
  /** The `-metrics` log (JSON text), once the call has ended. */
  metrics?: string;
}

/** The calls of one scope, stored as one object. */
export interface PromptLogBundle {
  calls: PromptLogCall[];
}

const bundleName = 'calls.json';

/** Where a scope's calls are stored together. */
export const promptLogBundleKey = (scope: PromptLogScope): string => `${promptLogPrefix(scope)}${bundleName}`;

/** The prefix of the log keys a bundle holds, or undefined for a key that is not a bundle's. */
export const bundleLogPrefix = (objectKey: string): string | undefined =>
  objectKey.endsWith(bundleName) ? objectKey.slice(0, -bundleName.length) : undefined;

export const parsePromptLogBundle = (bytes: Buffer): PromptLogBundle => {
  const bundle = JSON.parse(bytes.toString('utf8')) as PromptLogBundle;
  if (!Array.isArray(bundle.calls)) throw new Error('not a prompt-log bundle');
  return bundle;
};

export interface PromptLogger {
  /** The provider with every call's system prompt and history logged (calls numbered from 1). */
  wrap(provider: LlmProvider): LlmProvider;
  /** The key prefix of this logger's calls (the admin prompt-log download's `prompt_log_prefix`). */
  readonly prefix: string;
  /** Stores the calls logged so far (one object for the scope); a failed write is logged, never thrown. */
  flush(): Promise<void>;
}

/**
 * Logs each model call of a scope, in memory until `flush` stores them all as one object in the
 * artifact bucket: the first piece of a streamed answer never waits for S3, and a turn costs one
 * PUT. `flush` before the function returns; a second flush stores the calls again, with those
 * made since (the same key).
 */
export const createPromptLogger = (scope: PromptLogScope): PromptLogger => {
  const calls: PromptLogCall[] = [];
  let stored = JSON.stringify({ calls });
  let writing: Promise<void> = Promise.resolve();
  return {
    prefix: promptLogPrefix(scope),
    wrap: (provider) =>
      measuredProvider(provider, (request) => {
        const call: PromptLogCall = {
          key: promptLogKey(scope, calls.length + 1),
          // The provider adds a choice's options to the system prompt; the log shows the prompt as sent.
          system: request.options ? choiceSystemPrompt(request.system, request.options) : request.system,
          history: historyLog(request),
        };
        calls.push(call);
        return (measurement) => {
          call.metrics = JSON.stringify(callMetrics(provider.name, request.model, measurement));
        };
      }),
    flush: () => {
      const body = JSON.stringify({ calls } satisfies PromptLogBundle);
      if (body === stored) return writing;
      stored = body;
      const key = promptLogBundleKey(scope);
      writing = writing
        .then(() => writeObject(key, body, 'application/json', scope.tags))
        .catch((error: unknown) => logger.warn('prompt log not written', { key, error: error as Error }));
      return writing;
    },
  };
};

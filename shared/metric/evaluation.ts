import { logger } from '../aws/observability';
import { requireAuthorizedConversation } from '../conversation/conversation-lookup';
import { getInteraction, recentMessages, recordPostProcessing } from '../conversation/index';
import { modelFailure } from '../conversation/model-failure';
import { createPromptLogger, interactionLogScope } from '../conversation/prompt-log';
import type { ConversationRecord, MessageRecord } from '../conversation/schemas';
import { transactWrite } from '../data/table';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, DomainError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { conversationAttributes, requirePermission } from '../kernel/permissions';
import type { TranscriptLine } from '../llm/judge-prompt';
import { LlmError } from '../llm/provider';
import { type LlmModelPreferences, resolveModel } from '../llm/registry';
import { judgeMetric } from './judge';
import { getMetrics, metricNotFound, metrics, organizationMetrics } from './metric-repository';
import { requireOnMetric } from './metrics';
import { noteMetricsWithResults, resultPut } from './result-repository';
import type { EvaluationSource, MetricEvaluationResultInstance } from './schemas';
import type { StoredMetric } from './stored-records';

/**
 * Evaluating metrics on a conversation: on request (`manual` results) and after every finished
 * conversation (`post-session` results, the analysis worker's `compute-metrics`). Each metric
 * is judged by the model of the conversation's version set (`compute_metrics` preference, else
 * its default) over the transcript (user, agent and external-event messages), at its latest version.
 */

/** Messages judged per conversation: the latest ones of the range. */
const transcriptLength = 500;
/** Metrics evaluated after a conversation; more applied to a service are left out (and logged). */
export const maxPostSessionMetrics = 50;
/** Judgements made at the same time. */
const concurrency = 10;
/** A manual evaluation answers within the 28 s a buffered request has, with time to store the results. */
const manualTimeLimitMs = 22_000;
/** A post-session evaluation ends well within the analysis worker's 120 s. */
const postSessionTimeLimitMs = 90_000;

const preferencesOf = (conversation: ConversationRecord) =>
  conversation.version_set_info.llm_model_preferences as LlmModelPreferences;

const transcriptOf = (messages: MessageRecord[]): TranscriptLine[] =>
  messages
    .filter((message) => message.message_type !== 'agent-inner-thought')
    .map((message) => ({
      id: message.id,
      speaker: `${message.sender} (${message.message_type})`,
      text: message.message,
    }));

interface Evaluation {
  conversation: ConversationRecord;
  /** The last interaction of the evaluated range: where the prompt logs go. */
  interactionId: string;
  transcript: TranscriptLine[];
  source: (references: string[]) => EvaluationSource;
  signal: AbortSignal;
}

/** Runs `task` over `items`, at most `concurrency` at a time, keeping the order. */
const inBatches = async <T, R>(items: T[], task: (item: T) => Promise<R>): Promise<R[]> => {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += concurrency) {
    results.push(...(await Promise.all(items.slice(start, start + concurrency).map(task))));
  }
  return results;
};

/** Judges each metric at its latest version; the results to store, in the order of `metricsToJudge`. */
const judgeAll = async (
  evaluation: Evaluation,
  metricsToJudge: StoredMetric[],
): Promise<MetricEvaluationResultInstance[]> => {
  const { conversation } = evaluation;
  const { provider, source: _source, ...settings } = resolveModel(preferencesOf(conversation), 'compute_metrics');
  return inBatches(metricsToJudge, async (metric) => {
    const version = await metrics.getVersion(conversation.org_id, metric.id, metric.latest_version ?? 1);
    if (!version) throw new Error(`metric ${metric.id} has no version ${metric.latest_version}`);
    const id = newId();
    const prompts = createPromptLogger(interactionLogScope(conversation, evaluation.interactionId, `metric-${id}-`));
    try {
      const judgement = await judgeMetric(
        { provider: prompts.wrap(provider), ...settings },
        {
          metric: {
            name: metric.name,
            description: version.description,
            additional_notes: metric.additional_notes,
            value: version.metric_value,
          },
          transcript: evaluation.transcript,
        },
        evaluation.signal,
      );
      const now = nowIso();
      return {
        id,
        org_id: conversation.org_id,
        created_at: now,
        updated_at: now,
        metric_id: metric.id,
        metric_version: version.version,
        result: judgement.value,
        justification: judgement.justification,
        source: evaluation.source(judgement.references),
        judge: {
          provider: provider.name,
          model: settings.model,
          latency_ms: judgement.latencyMs,
          attempts: judgement.attempts,
          ...(judgement.usage
            ? { usage: { input_tokens: judgement.usage.inputTokens, output_tokens: judgement.usage.outputTokens } }
            : {}),
          prompt_log_prefix: prompts.prefix,
        },
      };
    } finally {
      await prompts.flush();
    }
  });
};

export interface ManualEvaluation {
  metricIds: string[];
  conversationId: string;
  evaluateToInteractionId?: string | null;
}

/** The model did not answer in time, or could not be reached. */
const judgeFailure = (error: unknown, signal: AbortSignal): unknown => {
  if (signal.aborted) {
    return new DomainError(
      503,
      'The metrics could not be evaluated within the time limit of a request; evaluate fewer at once or retry.',
      {
        cause: error,
      },
    );
  }
  return error instanceof LlmError ? modelFailure(error) : error;
};

/**
 * Evaluates up to ten metrics on a conversation, up to and including an interaction (else the
 * whole conversation), concurrently within a request's time limit. Each result is stored as a
 * `manual` result, replacing an earlier one of the same metric, conversation and range.
 * 404: a metric, the conversation or the interaction does not exist; 400: no interaction yet.
 * The caller needs Metric:GetMetric, Metric:EvaluateMetric and Metric:GetMetricEvaluationResult on
 * each metric, and Conversation:GetConversation on the conversation (404 for what it may not see).
 */
export const evaluateMetrics = async (orgId: string, caller: Caller, request: ManualEvaluation) => {
  const authorize = requireOnMetric(
    caller,
    'Metric:GetMetric',
    'Metric:EvaluateMetric',
    'Metric:GetMetricEvaluationResult',
  );
  const found = await getMetrics(orgId, request.metricIds);
  const chosen = request.metricIds.map((id) => {
    const metric = found.get(id);
    if (!metric) throw metricNotFound(id);
    authorize(metric);
    return metric;
  });
  // The judgement shows what the messages say, so the caller must be able to see the conversation.
  const conversation = await requireAuthorizedConversation(orgId, request.conversationId, (record) =>
    requirePermission(caller, 'Conversation:GetConversation', conversationAttributes(record)),
  );
  const rangeEnd = request.evaluateToInteractionId ?? undefined;
  const interaction = rangeEnd === undefined ? undefined : await getInteraction(orgId, conversation.id, rangeEnd);
  if (rangeEnd !== undefined && !interaction) {
    throw new NotFoundError(`Interaction ${rangeEnd} does not exist in conversation ${conversation.id}.`);
  }
  const interactionId = rangeEnd ?? conversation.last_interaction_id;
  if (!interactionId) throw new BadRequestError(`Conversation ${conversation.id} has no interactions.`);
  const messages = await recentMessages(orgId, conversation.id, transcriptLength, interaction?.agent_message_id);
  const signal = AbortSignal.timeout(manualTimeLimitMs);
  const results = await judgeAll(
    {
      conversation,
      interactionId,
      transcript: transcriptOf(messages),
      source: (references) => ({
        type: 'manual',
        conversation_id: conversation.id,
        evaluate_to_interaction_id: rangeEnd ?? null,
        invoked_by: creatorOf(caller),
        references,
      }),
      signal,
    },
    chosen,
  ).catch((error: unknown) => {
    throw judgeFailure(error, signal);
  });
  await noteMetricsWithResults(
    orgId,
    results.map((result) => result.metric_id),
  );
  await transactWrite(results.map((result) => ({ Put: resultPut(orgId, result) })));
  return {
    metrics: results.map((result, index) => ({
      metric_id: result.metric_id,
      name: (chosen[index] as StoredMetric).name,
      value: result.result,
      references: result.source.references,
      justification: result.justification,
    })),
  };
};

/**
 * `compute-metrics` after a conversation finished: every metric applied to its service and not
 * deleted (at most {@link maxPostSessionMetrics}, the oldest first) is judged over the whole
 * conversation. The results are written in the same transaction as the post-processing's
 * record, so a redelivered message stores nothing twice.
 */
export const computeMetrics = async (conversation: ConversationRecord): Promise<void> => {
  const applied = (await organizationMetrics(conversation.org_id)).filter(
    (metric) => !metric.deprecated && metric.applied_to_services.includes(conversation.service_id),
  );
  if (applied.length > maxPostSessionMetrics) {
    logger.warn('more metrics applied to the service than are evaluated after a conversation', {
      serviceId: conversation.service_id,
      applied: applied.length,
      evaluated: maxPostSessionMetrics,
    });
  }
  const interactionId = conversation.last_interaction_id;
  const chosen = interactionId ? applied.slice(0, maxPostSessionMetrics) : [];
  const messages =
    chosen.length > 0 ? await recentMessages(conversation.org_id, conversation.id, transcriptLength) : [];
  const results = await judgeAll(
    {
      conversation,
      interactionId: interactionId ?? '',
      transcript: transcriptOf(messages),
      source: (references) => ({ type: 'post-session', conversation_id: conversation.id, references }),
      signal: AbortSignal.timeout(postSessionTimeLimitMs),
    },
    chosen,
  );
  await noteMetricsWithResults(
    conversation.org_id,
    results.map((result) => result.metric_id),
  );
  await recordPostProcessing(
    conversation.org_id,
    conversation.id,
    'compute-metrics',
    results.map((result) => resultPut(conversation.org_id, result)),
  );
};

/** The metrics of `metricVersions` that still exist, each to be judged at the version given (a deleted one still is). */
const metricsAtVersions = async (orgId: string, metricVersions: { metricId: string; version: number }[]) => {
  const found = await getMetrics(
    orgId,
    metricVersions.map((wanted) => wanted.metricId),
  );
  return metricVersions.flatMap(({ metricId, version }) => {
    const metric = found.get(metricId);
    return metric ? [{ ...metric, latest_version: version }] : [];
  });
};

/** A simulated conversation's place in its run, which its results' `simulation` source names. */
export interface SimulationPlace {
  runId: string;
  unitTestId: string;
  runIndex: number;
}

/**
 * Judges a simulated conversation: each metric at the version its run resolved (a deleted
 * metric is still judged; one that no longer exists is left out), over the whole conversation.
 * The results, with source `simulation`, are returned for the caller to store in the
 * transaction that records the conversation's outcome in its run.
 */
export const judgeSimulatedConversation = async (
  conversation: ConversationRecord,
  metricVersions: { metricId: string; version: number }[],
  place: SimulationPlace,
): Promise<MetricEvaluationResultInstance[]> => {
  const interactionId = conversation.last_interaction_id;
  if (!interactionId || metricVersions.length === 0) return [];
  const chosen = await metricsAtVersions(conversation.org_id, metricVersions);
  const messages = await recentMessages(conversation.org_id, conversation.id, transcriptLength);
  const results = await judgeAll(
    {
      conversation,
      interactionId,
      transcript: transcriptOf(messages),
      source: (references) => ({
        type: 'simulation',
        simulation_unit_test_set_run_id: place.runId,
        unit_test_id: place.unitTestId,
        run_index: place.runIndex,
        references,
      }),
      signal: AbortSignal.timeout(postSessionTimeLimitMs),
    },
    chosen,
  );
  await noteMetricsWithResults(
    conversation.org_id,
    results.map((result) => result.metric_id),
  );
  return results;
};

/**
 * Judges each metric, at the version given, over each of several transcripts of the same
 * conversation's turns (a backtest's original and its replay), storing nothing: the values go into
 * the caller's own record. The model and prompt logs are `conversation`'s (the replay's), so the
 * judged conversation is only read. A metric that no longer exists is left out.
 */
export const judgeTranscripts = async (
  conversation: ConversationRecord,
  metricVersions: { metricId: string; version: number }[],
  transcripts: MessageRecord[][],
): Promise<{ metricId: string; version: number; values: MetricEvaluationResultInstance['result'][] }[]> => {
  const interactionId = conversation.last_interaction_id;
  if (!interactionId || metricVersions.length === 0) return [];
  const chosen = await metricsAtVersions(conversation.org_id, metricVersions);
  const signal = AbortSignal.timeout(postSessionTimeLimitMs);
  const judged = await Promise.all(
    transcripts.map((messages) =>
      judgeAll(
        {
          conversation,
          interactionId,
          transcript: transcriptOf(messages),
          // Not stored: the results are only read for their values.
          source: (references) => ({ type: 'post-session', conversation_id: conversation.id, references }),
          signal,
        },
        chosen,
      ),
    ),
  );
  return chosen.map((metric, index) => ({
    metricId: metric.id,
    version: metric.latest_version,
    values: judged.map((results) => results[index]?.result ?? null),
  }));
};

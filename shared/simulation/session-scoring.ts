import { requireConversation } from '../conversation/conversation-lookup';
import type { Caller } from '../kernel/caller';
import { ConflictError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import type { LlmModelPreferences } from '../llm/registry';
import { evaluateMetrics } from '../metric/evaluation';
import { recommendCallerTexts } from './recommendations';
import { getSession, replaceSession } from './session-repository';
import type { SessionMetricResult } from './session-schemas';
import { briefOfSession, transcriptOf } from './session-turns';
import { requireSession } from './sessions';

/* Judging a session by metrics, and proposing what its caller could say next. */

const recordAttempts = 5;

/**
 * `score-simulation-session`: judges the chosen metrics on the session's conversation as it is (a
 * manual evaluation, stored as the metric results of its conversation, with the permissions that
 * needs), and keeps them as the session's results so far (a metric scored again replaces its result).
 */
export const scoreSimulationSession = async (orgId: string, caller: Caller, id: string, metricIds: string[]) => {
  const session = await requireSession(orgId, caller, id, 'Simulation:ModifySimulationSession');
  const conversation = await requireConversation(orgId, session.conversation_id, true);
  const evaluated = await evaluateMetrics(orgId, caller, { metricIds, conversationId: session.conversation_id });
  const scoredAt = nowIso();
  const results: SessionMetricResult[] = evaluated.metrics.map((metric) => ({
    metric_id: metric.metric_id,
    name: metric.name,
    value: metric.value,
    justification: metric.justification,
    references: metric.references,
    scored_at: scoredAt,
    through_interaction_id: conversation.last_interaction_id ?? '',
  }));
  let current = session;
  for (let attempt = 0; attempt < recordAttempts; attempt += 1) {
    const kept = current.metric_results.filter((result) => !metricIds.includes(result.metric_id));
    if (await replaceSession(current, { ...current, metric_results: [...kept, ...results] })) {
      return { metric_results: results };
    }
    current = (await getSession(orgId, id, true)) ?? current;
  }
  throw new ConflictError(`Simulation session ${id} changed too often while its score was recorded; retry.`);
};

/** `recommend-simulation-session-texts`: `n` texts the caller could say next. */
export const recommendSessionTexts = async (orgId: string, caller: Caller, id: string, n: number) => {
  const session = await requireSession(orgId, caller, id, 'Simulation:ModifySimulationSession');
  return recommendCallerTexts(
    session.versions.llmModelPreferences as LlmModelPreferences,
    briefOfSession(session),
    await transcriptOf(orgId, session.conversation_id),
    n,
  );
};

import { requireConversation } from '../conversation/conversation-lookup';
import type { OperatorActionRecord as StoredOperatorAction } from '../conversation/operator/operator-schemas';
import { listOperatorActions } from '../conversation/operator/operators';
import {
  getConversationInsights,
  listConversations,
  listMessages,
  maxInteractionsShown,
} from '../conversation/queries';
import { defaultMessageTypes, type InteractionInsights, type MessageInstance } from '../conversation/schemas';
import type { Caller } from '../kernel/caller';
import { ForbiddenError, NotFoundError } from '../kernel/errors';
import { listMetrics } from '../metric/metrics';
import { listEvaluationResults } from '../metric/results';
import type { MetricEvaluationResultInstance } from '../metric/schemas';
import { statusBadges } from './console-pages';
import { type Html, html } from './html';
import type { AppRequest } from './layout';
import { behaviorSetNames, metricNames, type Names, nameOf, serviceNames, userNames } from './names';
import { type ConsoleContent, csrfField, when } from './page-parts';
import { dollars, operatorEventView, turnView } from './turn-view';

/**
 * A conversation, whole, on one page (console): each turn with its messages (voice ones play),
 * its stages to scale, tokens and cost, the state it reached, its tool calls, the dynamic
 * behavior that fired; escalations and operators' stretches where they happened; the metrics'
 * results. Every part is read through the API's domain functions as the signed-in caller, so the
 * page shows what the API would: a part the caller may not read says so in one line.
 */

type OperatorActionRecord = Omit<StoredOperatorAction, 'conversation_id'>;

type Insight = InteractionInsights & { interaction_id: string; created_at: string };

/** A read the caller may be refused (403, or 404 as the API answers a hidden record): undefined then. */
const unlessRefused = <T>(read: Promise<T>): Promise<T | undefined> =>
  read.catch((error: unknown) => {
    if (error instanceof ForbiddenError || error instanceof NotFoundError) return undefined;
    throw error;
  });

/** A metric's result as a person reads it: yes/no, a number, a category, or "not applicable". */
const resultText = (result: MetricEvaluationResultInstance['result']): string =>
  result === null ? 'not applicable' : typeof result === 'boolean' ? (result ? 'yes' : 'no') : String(result);

const metricsSection = (results: MetricEvaluationResultInstance[], names: Names, finished: boolean): Html => {
  if (results.length === 0)
    return html`<p class="muted">${
      finished
        ? 'No metric result is recorded for this conversation that your role may see.'
        : 'Metrics are evaluated once the conversation finishes.'
    }</p>`;
  return html`<h2 id="metrics-heading">Metric results</h2><div class="table-wrap"><table aria-labelledby="metrics-heading"><thead><tr><th scope="col">Metric</th><th scope="col">Result</th><th scope="col">Why</th><th scope="col">Evaluated</th></tr></thead><tbody>${results.map(
    (result) =>
      html`<tr><td>${nameOf(names, result.metric_id)} <span class="muted">v${result.metric_version}</span></td><td><strong>${resultText(result.result)}</strong></td><td>${result.justification}</td><td>${result.source.type} · ${when(result.created_at)}</td></tr>`,
  )}</tbody></table></div>`;
};

/** The conversation's totals over the turns the caller may read the insights of. */
const totals = (insights: Insight[]) => {
  const usages = insights.flatMap((insight) => (insight.usage ? [insight.usage] : []));
  const costs = usages.map((usage) => usage.cost_usd);
  return {
    tokens: usages.reduce((sum, usage) => sum + usage.input_tokens + usage.output_tokens, 0),
    cost: costs.some((cost) => cost === null) ? undefined : costs.reduce<number>((sum, cost) => sum + (cost ?? 0), 0),
  };
};

/** Turns and operator actions in the order they happened (an action lands before the first turn after it). */
const interleave = (turns: Html[], turnTimes: string[], actions: OperatorActionRecord[]): Html[] => {
  const shown = actions.filter((action) => action.action !== 'sent-message');
  const items: Html[] = [];
  let next = 0;
  for (const [index, turn] of turns.entries()) {
    while (next < shown.length && (shown[next] as OperatorActionRecord).at < (turnTimes[index] as string))
      items.push(operatorEventView(shown[next++] as OperatorActionRecord));
    items.push(turn);
  }
  for (const action of shown.slice(next)) items.push(operatorEventView(action));
  return items;
};

export const consoleConversation = async (
  request: AppRequest,
  caller: Caller,
  conversationId: string,
): Promise<ConsoleContent> => {
  const { orgId, base } = request;
  const listed = await listConversations(orgId, caller, {
    ids: [conversationId],
    tags: [],
    sortBy: [],
    limit: 1,
    continuationToken: 0,
  });
  const conversation = listed.conversations[0];
  if (!conversation) throw new NotFoundError(`Conversation ${conversationId} does not exist.`);
  const [messages, insights, actions, results, metrics] = await Promise.all([
    listMessages(orgId, caller, conversationId, {
      messageTypes: defaultMessageTypes,
      sortBy: [{ field: 'created_at', direction: 'asc' }],
      limit: 200,
      continuationToken: 0,
    }),
    unlessRefused(getConversationInsights(orgId, caller, conversationId)),
    unlessRefused(listOperatorActions(orgId, caller, conversationId, { limit: 200, continuationToken: 0 })),
    unlessRefused(
      listEvaluationResults(orgId, caller, {
        conversationIds: [conversationId],
        descending: false,
        limit: 50,
        continuationToken: 0,
      }),
    ),
    unlessRefused(listMetrics(orgId, caller, { creators: [], tags: [], limit: 50, continuationToken: 0 })),
  ]);
  const shownResults = results?.metric_evaluation_results ?? [];
  const operatorIds = messages.messages.flatMap((message) =>
    message.operator_user_id ? [message.operator_user_id] : [],
  );
  const behaviorIds = (insights ?? []).flatMap((insight) =>
    insight.triggered_dynamic_behavior_set_version_info ? [insight.triggered_dynamic_behavior_set_version_info[0]] : [],
  );
  const [users, services, metricsNamed, behaviors, record] = await Promise.all([
    userNames(orgId, caller, [conversation.user_id, ...operatorIds]),
    serviceNames(orgId, caller, [conversation.service_id]),
    metricNames(
      orgId,
      caller,
      shownResults.map((result) => result.metric_id),
    ),
    behaviorSetNames(orgId, caller, behaviorIds),
    // Whether a simulation run made it: the record says, the API's view does not.
    requireConversation(orgId, conversationId),
  ]);

  // Turns are interactions; a conversation whose insights the caller may not read is grouped by its messages' interactions.
  const byInteraction = new Map<string, MessageInstance[]>();
  for (const message of messages.messages)
    byInteraction.set(message.interaction_id, [...(byInteraction.get(message.interaction_id) ?? []), message]);
  const turnsOf: { id: string; createdAt: string; insights?: Insight }[] = insights
    ? insights.map((insight) => ({ id: insight.interaction_id, createdAt: insight.created_at, insights: insight }))
    : [...byInteraction].map(([id, shown]) => ({ id, createdAt: (shown[0] as MessageInstance).created_at }));
  const path = `${base}/console/conversations/${conversationId}`;
  const turns = turnsOf.map((turn, index) => {
    const shown = byInteraction.get(turn.id) ?? [];
    const operator = shown.find((message) => message.from_operator);
    return turnView({
      id: turn.id,
      index,
      createdAt: turn.createdAt,
      messages: shown,
      insights: turn.insights,
      operatorName: operator ? operator.sender : undefined,
      audioUrl: (messageId) => `${path}/messages/${messageId}/audio`,
      behaviorName: (setId) => nameOf(behaviors, setId),
    });
  });
  const { tokens, cost } = totals(insights ?? []);
  const control = conversation.operator_control;
  const versionSet = conversation.version_set_info?.name;
  const regressionForm =
    conversation.is_finished && metrics && metrics.metrics.length > 0
      ? html`<details><summary>Make a regression test of this conversation</summary><form method="post" action="${path}/regression_test">${csrfField(request)}
<label for="metric_id">Judged by the metric</label>
<select id="metric_id" name="metric_id">${metrics.metrics.map((metric) => html`<option value="${metric.id}">${metric.name}</option>`)}</select>
<button type="submit">Make the test</button></form></details>`
      : '';
  return {
    section: 'conversations',
    heading: `${nameOf(services, conversation.service_id)} with ${nameOf(users, conversation.user_id)}`,
    content: html`<dl class="summary">
<div><dt>Started</dt><dd>${when(conversation.created_at)}</dd></div>
<div><dt>Status</dt><dd>${statusBadges(conversation, Boolean(record.simulation))}</dd></div>
${versionSet ? html`<div><dt>Version set</dt><dd>${versionSet}</dd></div>` : ''}
<div><dt>Turns</dt><dd>${turns.length}</dd></div>
${insights ? html`<div><dt>Tokens</dt><dd>${tokens.toLocaleString('en-US')}</dd></div><div><dt>Cost</dt><dd>${cost === undefined ? 'unknown' : dollars(cost)}</dd></div>` : ''}
${control && control.escalation_count > 0 ? html`<div><dt>Escalations</dt><dd>${control.escalation_count}</dd></div>` : ''}
</dl>
<p><a href="${base}/console/operator/${conversationId}">Operator view</a></p>
${insights ? '' : html`<p class="muted">Your role may not read this conversation's insights: timings, tokens, cost, states and tool calls are not shown.</p>`}
${insights && insights.length >= maxInteractionsShown ? html`<p class="muted">The first ${maxInteractionsShown} turns are shown.</p>` : ''}
${actions ? '' : html`<p class="muted">Your role may not operate this conversation: escalations and handovers are not listed.</p>`}
<h2>Transcript</h2>
${
  turns.length === 0
    ? html`<p class="muted">No turn yet.</p>`
    : interleave(
        turns,
        turnsOf.map((turn) => turn.createdAt),
        actions?.actions ?? [],
      )
}
${results ? metricsSection(shownResults, metricsNamed, conversation.is_finished) : html`<p class="muted">Your role may not read metric results.</p>`}
${regressionForm}`,
  };
};

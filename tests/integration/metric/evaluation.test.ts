import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolInInitialStateMachineVersion } from '#shared/conversation/fixtures';
import { api, eventually } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createGrantedSession, uniqueName } from '../support/fixtures';
import {
  createOrganization,
  createUserSession,
  crossOrgHeaders,
  organizationBody,
  rootSession,
  type Session,
} from '../support/identity';
import { isQueueDrained, objectExists, sendToQueue } from '../support/local-aws';
import { createTool } from '../support/tools';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

let owner: Session;
let orgId: string;

/** A fresh administrator per test: metric operations are rate limited per user (results: 10 a minute). */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');

const evaluatePath = () => `/v1/${orgId}/metric/evaluate`;
const resultsPath = () => `/v1/${orgId}/metric/metric_evaluation_result`;

/** Metrics the deterministic judge can decide from the sample conversation (which is about a printer). */
const metricBodies = (serviceIds: string[] = []) =>
  [
    {
      name: uniqueName('Printer help'),
      description: 'Whether the user asked for help with a printer.',
      metric_value: { type: 'boolean' },
    },
    {
      name: uniqueName('Printer focus'),
      description: 'How much of the conversation is about the printer.',
      metric_value: { type: 'numerical', lower_bound: 0, upper_bound: 10 },
    },
    {
      name: uniqueName('Topic'),
      description: 'What the conversation is about.',
      metric_value: { type: 'categorical', categories: ['billing', 'printer', 'shipping'] },
    },
  ].map((body) => ({ ...body, applied_to_services: serviceIds }));

const createMetrics = async (session: Session, bodies: Record<string, unknown>[]): Promise<string[]> =>
  Promise.all(
    bodies.map(async (body) => {
      const response = await api(`/v1/${orgId}/metric/`, { token: session.token, body });
      expect(response.status, response.text).toBe(201);
      return response.body.id as string;
    }),
  );

interface Conversation {
  conversationId: string;
  interactionIds: string[];
  messageIds: string[];
  user: Session;
}

/** A conversation of the sample service: the opening and one turn asking for help with a printer. */
const converse = async (serviceId: string): Promise<Conversation> => {
  const user = await createUserSession(owner, 'DefaultUserRole');
  const opening = await startConversation(user, { service_id: serviceId });
  const turn = await interact(user, opening.conversationId, 'I need help with my printer');
  expect(turn.status).toBe(200);
  const complete = [opening.events, turn.events].map((events) =>
    events.findLast((event) => event.type === 'interaction-complete'),
  );
  const messages = await api(`/v1/${orgId}/conversation/${opening.conversationId}/messages/`, {
    token: user.token,
    query: { sort_by: '+created_at' },
  });
  return {
    conversationId: opening.conversationId,
    interactionIds: complete.map((event) => String(event?.interaction_id)),
    messageIds: messages.body.messages.map((message: { id: string }) => message.id),
    user,
  };
};

const finish = async (conversation: Conversation) => {
  const response = await api(`/v1/${orgId}/conversation/${conversation.conversationId}/finish/`, {
    method: 'POST',
    token: conversation.user.token,
  });
  expect(response.status).toBe(204);
};

const analysed = (conversation: Conversation) =>
  eventually(async () => {
    const response = await api(`/v1/${orgId}/conversation/`, {
      token: owner.token,
      query: { id: conversation.conversationId },
    });
    const [found] = response.body.conversations ?? [];
    return found?.is_analyzed ? found : undefined;
  }, 30_000);

let serviceId: string;
let conversation: Conversation;

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
  ({ serviceId } = await createService(owner));
  conversation = await converse(serviceId);
});

describe('evaluate-metrics', () => {
  it('judges each metric over the conversation with the offline judge, in the order asked', async () => {
    // Prepare
    const session = await admin();
    const metricIds = await createMetrics(session, metricBodies());

    // Act
    const response = await api(evaluatePath(), {
      token: session.token,
      body: { metric_ids: [...metricIds].reverse(), conversation_id: conversation.conversationId },
    });

    // Assess
    expect(response.status, response.text).toBe(200);
    const [topic, focus, help] = response.body.metrics;
    expect(help).toMatchObject({ metric_id: metricIds[0], value: true });
    expect(focus).toMatchObject({ metric_id: metricIds[1], value: expect.any(Number) });
    expect(focus.value).toBeGreaterThan(0);
    expect(focus.value).toBeLessThanOrEqual(10);
    expect(topic).toMatchObject({ metric_id: metricIds[2], value: 'printer' });
    for (const result of response.body.metrics) {
      expect(result.justification).toMatch(/^Rule-based judgement of the built-in deterministic model/);
      expect(result.references.length).toBeGreaterThan(0);
      for (const reference of result.references) expect(conversation.messageIds).toContain(reference);
    }
  });

  it('stores a manual result with the judge, its prompt log, and replaces it on a second evaluation', async () => {
    // Prepare
    const session = await admin();
    const [metricId] = await createMetrics(session, metricBodies().slice(0, 1));
    const body = { metric_ids: [metricId], conversation_id: conversation.conversationId };
    await api(evaluatePath(), { token: session.token, body });
    const first = await api(resultsPath(), { token: session.token, query: { metric_id: metricId } });

    // Act
    await api(evaluatePath(), { token: session.token, body });
    const second = await api(resultsPath(), { token: session.token, query: { metric_id: metricId } });

    // Assess
    expect(first.body.metric_evaluation_results).toHaveLength(1);
    const [result] = second.body.metric_evaluation_results;
    expect(second.body.metric_evaluation_results).toHaveLength(1);
    expect(result.id).not.toBe(first.body.metric_evaluation_results[0].id);
    expect(result).toMatchObject({
      org_id: orgId,
      metric_id: metricId,
      metric_version: 1,
      result: true,
      source: {
        type: 'manual',
        conversation_id: conversation.conversationId,
        evaluate_to_interaction_id: null,
        invoked_by: { org_id: orgId, user_id: session.userId },
      },
      judge: { provider: 'deterministic', model: 'deterministic', attempts: 1, latency_ms: expect.any(Number) },
    });
    // The offline model reports no token use.
    expect(result.judge).not.toHaveProperty('usage');
    expect(result.judge.prompt_log_prefix).toMatch(
      new RegExp(
        `^prompt-logs/${orgId}/${serviceId}/${conversation.conversationId}/${conversation.interactionIds[1]}/metric-${result.id}-$`,
      ),
    );
    // The judge's calls are stored together under the prefix (the download gives each as `1-system`, `1-history`).
    expect(await objectExists(`${result.judge.prompt_log_prefix}calls.json`)).toBe(true);
  });

  it('evaluates up to an interaction, as a result of its own, at the latest metric version', async () => {
    // Prepare
    const session = await admin();
    const [metricId] = await createMetrics(session, metricBodies().slice(2, 3));
    const versioned = await api(`/v1/${orgId}/metric/${metricId}/version/`, {
      token: session.token,
      body: {
        description: 'What the conversation is about.',
        metric_value: { type: 'categorical', categories: ['printer', 'other'] },
      },
    });
    expect(versioned.status).toBe(201);
    const [openingId] = conversation.interactionIds;

    // Act
    const ranged = await api(evaluatePath(), {
      token: session.token,
      body: {
        metric_ids: [metricId],
        conversation_id: conversation.conversationId,
        evaluate_to_interaction_id: openingId,
      },
    });
    const whole = await api(evaluatePath(), {
      token: session.token,
      body: { metric_ids: [metricId], conversation_id: conversation.conversationId },
    });
    const results = await api(resultsPath(), {
      token: session.token,
      query: { metric_id: metricId, sort_by: '+created_at' },
    });

    // Assess
    expect(ranged.status).toBe(200);
    // The opening is only the agent's greeting: no message is about printers.
    expect(ranged.body.metrics[0]).toMatchObject({ value: 'printer', references: [] });
    expect(whole.body.metrics[0].references).toContain(conversation.messageIds[1]);
    expect(
      results.body.metric_evaluation_results.map(
        (result: { source: { evaluate_to_interaction_id: string | null } }) => result.source.evaluate_to_interaction_id,
      ),
    ).toEqual([openingId, null]);
    expect(
      results.body.metric_evaluation_results.map((result: { metric_version: number }) => result.metric_version),
    ).toEqual([2, 2]);
  });

  it('answers 404 for an unknown metric, conversation or interaction', async () => {
    // Prepare
    const session = await admin();
    const [metricId] = await createMetrics(session, metricBodies().slice(0, 1));
    const unknown = '0'.repeat(24);

    // Act
    const metric = await api(evaluatePath(), {
      token: session.token,
      body: { metric_ids: [unknown], conversation_id: conversation.conversationId },
    });
    const missingConversation = await api(evaluatePath(), {
      token: session.token,
      body: { metric_ids: [metricId], conversation_id: unknown },
    });
    const interaction = await api(evaluatePath(), {
      token: session.token,
      body: {
        metric_ids: [metricId],
        conversation_id: conversation.conversationId,
        evaluate_to_interaction_id: unknown,
      },
    });

    // Assess
    expect(metric.status).toBe(404);
    expect(missingConversation.status).toBe(404);
    expect(interaction.status).toBe(404);
  });

  it('answers 400 for a conversation without interactions', async () => {
    // Prepare
    const session = await admin();
    const [metricId] = await createMetrics(session, metricBodies().slice(0, 1));
    // A tool without a deployed version fails the opening turn, so the conversation has no interaction.
    const { serviceId: failing } = await createService(
      owner,
      toolInInitialStateMachineVersion(await createTool(owner)),
    );
    const user = await createUserSession(owner, 'DefaultUserRole');
    const empty = await startConversation(user, { service_id: failing });

    // Act
    const response = await api(evaluatePath(), {
      token: session.token,
      body: { metric_ids: [metricId], conversation_id: empty.conversationId },
    });

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/no interactions/);
  });

  it.each([
    ['no metric', []],
    ['eleven metrics', Array.from({ length: 11 }, (_, index) => index.toString(16).padStart(24, '0'))],
    ['the same metric twice', ['a'.repeat(24), 'a'.repeat(24)]],
  ])('rejects %s with 422', async (_, metricIds) => {
    // Prepare
    const session = await admin();

    // Act
    const response = await api(evaluatePath(), {
      token: session.token,
      body: { metric_ids: metricIds, conversation_id: conversation.conversationId },
    });

    // Assess
    expect(response.status).toBe(422);
    expect(response.body.detail[0].loc).toEqual(['body', 'metric_ids']);
  });

  it('answers 403 without Metric:EvaluateMetric, and 404 for a metric or conversation the caller may not see', async () => {
    // Prepare
    const session = await admin();
    const [metricId] = await createMetrics(session, metricBodies().slice(0, 1));
    const body = { metric_ids: [metricId], conversation_id: conversation.conversationId };
    const metricReader = await createGrantedSession(owner, [
      { permission_name: 'Metric:GetMetric', conditions: {} },
      { permission_name: 'Metric:GetMetricEvaluationResult', conditions: {} },
    ]);
    const metricsOnly = await createGrantedSession(owner, [{ permission_name: 'Metric:*', conditions: {} }]);

    // Act
    const forbidden = await api(evaluatePath(), { token: metricReader.token, body });
    const hiddenMetric = await api(evaluatePath(), { token: conversation.user.token, body });
    const hiddenConversation = await api(evaluatePath(), { token: metricsOnly.token, body });

    // Assess
    expect(forbidden.status).toBe(403);
    expect(hiddenMetric.status).toBe(404);
    expect(hiddenMetric.body.detail).toContain(metricId);
    expect(hiddenConversation.status).toBe(404);
    expect(hiddenConversation.body.detail).toContain(conversation.conversationId);
  });
});

describe('get-metric-evaluation-results', () => {
  let metricIds: string[];
  let session: Session;

  beforeAll(async () => {
    const evaluator = await admin();
    metricIds = await createMetrics(evaluator, metricBodies());
    const response = await api(evaluatePath(), {
      token: evaluator.token,
      body: { metric_ids: metricIds, conversation_id: conversation.conversationId },
    });
    expect(response.status).toBe(200);
    session = await admin();
  });

  it('filters by metric, metric and version, source type and conversation', async () => {
    // Act
    const byMetrics = await api(resultsPath(), { token: session.token, query: { metric_id: metricIds.slice(0, 2) } });
    const byVersion = await api(resultsPath(), {
      token: session.token,
      query: { metric_id_and_version: [`${metricIds[2]}-1`, `${metricIds[1]}-2`] },
    });
    const anyVersion = await api(resultsPath(), {
      token: session.token,
      query: { metric_id_and_version: `${metricIds[2]}-` },
    });
    const otherSource = await api(resultsPath(), {
      token: session.token,
      query: { metric_id: metricIds, source_type: 'post-session' },
    });
    const byConversation = await api(resultsPath(), {
      token: session.token,
      query: { conversation_id: conversation.conversationId, source_type: 'manual', metric_id: metricIds },
    });

    // Assess
    const metricsOf = (response: { body: { metric_evaluation_results: { metric_id: string }[] } }) =>
      response.body.metric_evaluation_results.map((result) => result.metric_id).sort();
    expect(metricsOf(byMetrics)).toEqual(metricIds.slice(0, 2).sort());
    expect(metricsOf(byVersion)).toEqual([metricIds[2]]);
    expect(metricsOf(anyVersion)).toEqual([metricIds[2]]);
    expect(metricsOf(otherSource)).toEqual([]);
    expect(metricsOf(byConversation)).toEqual([...metricIds].sort());
  });

  it('bounds by time, sorts by created_at, pages, and gives filter values on the first page', async () => {
    // Act
    const future = await api(resultsPath(), {
      token: session.token,
      query: { metric_id: metricIds, timestamp_after: new Date(Date.now() + 60_000).toISOString() },
    });
    const past = await api(resultsPath(), {
      token: session.token,
      query: { metric_id: metricIds, timestamp_before: new Date(Date.now() - 3_600_000).toISOString() },
    });
    const reversed = await api(resultsPath(), {
      token: session.token,
      query: {
        metric_id: metricIds,
        timestamp_after: new Date().toISOString(),
        timestamp_before: new Date(Date.now() - 3_600_000).toISOString(),
      },
    });
    const first = await api(resultsPath(), {
      token: session.token,
      query: { metric_id: metricIds, sort_by: '-created_at', limit: 2 },
    });
    const rest = await api(resultsPath(), {
      token: session.token,
      query: {
        metric_id: metricIds,
        sort_by: '-created_at',
        limit: 2,
        continuation_token: first.body.continuation_token,
      },
    });

    // Assess
    expect(future.body.metric_evaluation_results).toEqual([]);
    expect(past.body.metric_evaluation_results).toEqual([]);
    expect(reversed.status).toBe(200);
    expect(reversed.body.metric_evaluation_results).toEqual([]);
    expect(first.body).toMatchObject({ has_more: true });
    expect(first.body.filter_values.metric_ids).toEqual(expect.arrayContaining(metricIds));
    expect(rest.body).toMatchObject({ has_more: false, filter_values: null });
    const created = [...first.body.metric_evaluation_results, ...rest.body.metric_evaluation_results].map(
      (result: { created_at: string }) => result.created_at,
    );
    expect(created).toHaveLength(3);
    expect(created).toEqual([...created].sort().reverse());
  });

  it('rejects a malformed metric_id_and_version with 422 and shows a caller without the permission nothing', async () => {
    // Prepare
    const user = await createUserSession(owner, 'DefaultUserRole');
    const other = await admin();

    // Act
    const malformed = await api(resultsPath(), { token: other.token, query: { metric_id_and_version: 'abc' } });
    const hidden = await api(resultsPath(), { token: user.token, query: { metric_id: metricIds } });

    // Assess
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['query', 'metric_id_and_version', 0]);
    expect(hidden.status).toBe(200);
    expect(hidden.body.metric_evaluation_results).toEqual([]);
  });
});

describe('compute-metrics', () => {
  let applied: string[];
  let deletedMetric: string;
  let finished: Conversation;
  let firstResults: { id: string; metric_id: string }[];
  // The webhook worker consumes the webhook queue: what the analysis queued is seen as deliveries.
  let receiver: WebhookReceiver;
  const computeMetricsDeliveries = () =>
    receiver.received
      .map((delivery) => JSON.parse(delivery.body) as Record<string, unknown>)
      .filter(
        (event) =>
          event.conversation_id === finished.conversationId && event.post_processing_type === 'compute-metrics',
      );

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const destination = await api(`/v1/${orgId}/webhook_destination/`, {
      token: owner.token,
      body: { url: receiver.url, accepted_types: ['conversation-post-processing-complete'] },
    });
    expect(destination.status).toBe(201);
    const session = await admin();
    const { serviceId: evaluated } = await createService(owner);
    applied = await createMetrics(session, metricBodies([evaluated]).slice(0, 2));
    deletedMetric = (await createMetrics(session, metricBodies([evaluated]).slice(2)))[0] as string;
    expect(
      (await api(`/v1/${orgId}/metric/${deletedMetric}/`, { method: 'DELETE', token: session.token })).status,
    ).toBe(200);
    finished = await converse(evaluated);
    await finish(finished);
  });

  it('evaluates every metric applied to the service after the conversation, and notifies the webhook queue', async () => {
    // Act
    const conversationRecord = await analysed(finished);
    const session = await admin();
    const results = await api(resultsPath(), {
      token: session.token,
      query: { conversation_id: finished.conversationId },
    });
    const notified = await eventually(async () => {
      const deliveries = computeMetricsDeliveries();
      return deliveries.length > 0 ? deliveries : undefined;
    });

    // Assess
    expect(conversationRecord.completed_post_processings).toContain('compute-metrics');
    firstResults = results.body.metric_evaluation_results;
    expect(firstResults.map((result) => result.metric_id).sort()).toEqual([...applied].sort());
    for (const result of results.body.metric_evaluation_results) {
      expect(result.source).toEqual({
        type: 'post-session',
        conversation_id: finished.conversationId,
        references: expect.any(Array),
      });
      for (const reference of result.source.references) expect(finished.messageIds).toContain(reference);
    }
    expect(notified).toEqual([
      expect.objectContaining({
        type: 'conversation-post-processing-complete',
        org_id: orgId,
        conversation_id: finished.conversationId,
        post_processing_type: 'compute-metrics',
      }),
    ]);
  });

  it('stores nothing twice when the analysis message is delivered again', async () => {
    // Prepare
    const message = {
      type: 'conversation-finished',
      org_id: orgId,
      conversation_id: finished.conversationId,
      user_id: finished.user.userId,
      service_id: (await analysed(finished)).service_id,
      finished_at: new Date().toISOString(),
      trigger: 'finish-conversation',
    };

    // Act
    await Promise.all([sendToQueue('analysis', message), sendToQueue('analysis', message)]);
    await eventually(async () => ((await isQueueDrained('analysis')) ? true : undefined), 30_000);
    const session = await admin();
    const results = await api(resultsPath(), {
      token: session.token,
      query: { conversation_id: finished.conversationId },
    });
    await eventually(async () => ((await isQueueDrained('webhook')) ? true : undefined), 30_000);
    const notified = computeMetricsDeliveries();

    // Assess
    expect(results.body.metric_evaluation_results.map((result: { id: string }) => result.id).sort()).toEqual(
      firstResults.map((result) => result.id).sort(),
    );
    expect(notified).toHaveLength(1);
  });

  afterAll(() => receiver.close());
});

describe('organization deletion', () => {
  it('erases metrics, their versions and their results', async () => {
    // Prepare
    const root = await rootSession();
    const doomed = await createOrganization(root);
    const name = uniqueName('Doomed');
    const doomedService = await createService(doomed.session);
    const created = await api(`/v1/${doomed.orgId}/metric/`, {
      token: doomed.session.token,
      body: { name, description: 'Whether the user asked for help.', metric_value: { type: 'boolean' } },
    });
    const user = await createUserSession(doomed.session, 'DefaultUserRole');
    const opening = await startConversation(user, { service_id: doomedService.serviceId });
    const evaluated = await api(`/v1/${doomed.orgId}/metric/evaluate`, {
      token: doomed.session.token,
      body: { metric_ids: [created.body.id], conversation_id: opening.conversationId },
    });
    expect(evaluated.status).toBe(200);

    // Act
    const deleted = await api(`/v1/${doomed.orgId}/organization/`, { method: 'DELETE', token: doomed.session.token });
    const recreated = await api(`/v1/${doomed.orgId}/organization/`, {
      method: 'PUT',
      token: root.token,
      headers: { ...crossOrgHeaders(root), 'x-database-cluster-name': 'main' },
      body: organizationBody(),
    });
    const operator = { token: root.token, headers: crossOrgHeaders(root) };
    const metrics = await api(`/v1/${doomed.orgId}/metric/`, { ...operator, query: { id: created.body.id } });
    const versions = await api(`/v1/${doomed.orgId}/metric/${created.body.id}/version`, operator);
    const results = await api(`/v1/${doomed.orgId}/metric/metric_evaluation_result`, operator);
    const sameName = await api(`/v1/${doomed.orgId}/metric/`, {
      ...operator,
      body: { name, description: 'Again.', metric_value: { type: 'boolean' } },
    });

    // Assess
    expect(deleted.status).toBe(204);
    expect(recreated.status).toBe(201);
    expect(metrics.body.metrics).toEqual([]);
    expect(versions.status).toBe(404);
    expect(results.body).toMatchObject({ metric_evaluation_results: [], filter_values: { metric_ids: [] } });
    expect(sameName.status).toBe(201);
  });
});

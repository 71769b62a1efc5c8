import { queueSimulation } from '../aws/queues';
import { getConversations, serviceConversationsSince } from '../conversation/index';
import type { ConversationRecord } from '../conversation/schemas';
import { listFingerprint, offsetPage, pageOf } from '../data/paging';
import type { Item } from '../data/table';
import { type Caller, creatorOf } from '../kernel/caller';
import { BadRequestError, ForbiddenError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import {
  asIfMissing,
  canReadMessage,
  conversationAttributes,
  hasPermission,
  requirePermission,
} from '../kernel/permissions';
import { getMetrics, organizationMetrics } from '../metric/index';
import { metricAttributes } from '../metric/metrics';
import { byDivergence } from './backtest-diff';
import {
  backtestNotFound,
  getBacktest,
  insertBacktest,
  listBacktestConversations,
  listBacktestTurns,
  queryRecentBacktests,
  replaceBacktest,
} from './backtest-repository';
import {
  type BacktestConversationRecord,
  type BacktestRecord,
  type CreateBacktestRequest,
  maxBacktestConversations,
  maxBacktestMetrics,
} from './backtest-schemas';
import { derivedFromConversation, mayReadSource } from './derived-from';
import { readableVersions } from './sessions';

/*
 * Backtests: a candidate version set replays the user messages of real conversations (on the
 * simulation queue, `backtest-worker.ts`), and each turn is compared with the original. The
 * results keep the conversations' protection: each replayed conversation's results show only to
 * a caller who may read what they copied.
 */

/** Conversations read at most to find those created since a time (the service's newest first). */
const maxConversationsRead = 1000;

/** What permission grant conditions can name on a backtest (`user_id` is its creator). */
export const backtestAttributes = (backtest: Pick<BacktestRecord, 'id' | 'service_id' | 'creator'>) => ({
  id: backtest.id,
  simulation_backtest_id: backtest.id,
  service_id: backtest.service_id,
  user_id: backtest.creator.user_id,
});

/** Whether the caller may read a conversation and the text of its user and agent messages. */
const readable = (caller: Caller, conversation: ConversationRecord) =>
  hasPermission(caller, 'Conversation:GetConversation', conversationAttributes(conversation)) &&
  ['user-message', 'agent-message', 'external-event'].every((type) =>
    canReadMessage(caller, conversation, { id: '', message_type: type }),
  );

const conversationMissing = (id: string) => new NotFoundError(`Conversation ${id} does not exist.`);

/** The named conversations, each readable by the caller (404 otherwise), of the service, with a turn. */
const namedSources = async (orgId: string, caller: Caller, serviceId: string, ids: string[]) => {
  const found = new Map((await getConversations(orgId, ids)).map((conversation) => [conversation.id, conversation]));
  return ids.map((id) => {
    const conversation = found.get(id);
    if (!conversation) throw conversationMissing(id);
    if (!hasPermission(caller, 'Conversation:GetConversation', conversationAttributes(conversation))) {
      throw conversationMissing(id);
    }
    if (!readable(caller, conversation)) {
      throw new ForbiddenError(
        `Conversation ${id} has messages the caller may not read (Conversation:GetMessage); a backtest would show them.`,
      );
    }
    if (conversation.service_id !== serviceId) {
      throw new BadRequestError(`Conversation ${id} is not a conversation of service ${serviceId}.`);
    }
    if (!conversation.last_interaction_id) throw new BadRequestError(`Conversation ${id} has no turn to replay.`);
    return conversation;
  });
};

/** The service's real conversations created since `since` that the caller may read, newest first, at most `limit`. */
const recentSources = (orgId: string, caller: Caller, serviceId: string, since: string, limit: number) =>
  serviceConversationsSince(orgId, serviceId, since, {
    keep: (conversation) =>
      !conversation.simulation && conversation.last_interaction_id !== null && readable(caller, conversation),
    limit,
    maxRead: maxConversationsRead,
  });

/** The metrics judged on both sides, at their latest versions: those named (404 for one the caller may not read), else those applied to the service. */
const metricVersionsOf = async (
  orgId: string,
  caller: Caller,
  serviceId: string,
  ids: string[] | null | undefined,
): Promise<Record<string, number>> => {
  if (ids) {
    const found = await getMetrics(orgId, ids);
    return Object.fromEntries(
      ids.map((id) => {
        const metric = found.get(id);
        if (!metric?.latest_version || !hasPermission(caller, 'Metric:GetMetric', metricAttributes(metric))) {
          throw new NotFoundError(`Metric ${id} does not exist.`);
        }
        return [id, metric.latest_version];
      }),
    );
  }
  const applied = (await organizationMetrics(orgId)).filter(
    (metric) =>
      !metric.deprecated &&
      metric.latest_version &&
      metric.applied_to_services.includes(serviceId) &&
      hasPermission(caller, 'Metric:GetMetric', metricAttributes(metric)),
  );
  return Object.fromEntries(
    applied.slice(0, maxBacktestMetrics).map((metric) => [metric.id, metric.latest_version ?? 1]),
  );
};

/**
 * `create-simulation-backtest`: records the backtest with its candidate's versions pinned and
 * one record per source conversation, and queues each one's replay. 404 for a conversation the
 * caller may not read (or of another organization), a version set or metric they may not read;
 * 400 for a conversation of another service or without turns, or when `since` finds none.
 */
export const createBacktest = async (orgId: string, caller: Caller, request: CreateBacktestRequest) => {
  requirePermission(caller, 'Simulation:CreateSimulationBacktest', {
    service_id: request.service_id,
    user_id: caller.userId,
  });
  const candidate = await readableVersions(orgId, caller, request.service_id, request.candidate_version_set);
  const sources = request.conversation_ids
    ? await namedSources(orgId, caller, request.service_id, request.conversation_ids)
    : await recentSources(
        orgId,
        caller,
        request.service_id,
        request.since ?? new Date(0).toISOString(),
        Math.min(request.limit, maxBacktestConversations),
      );
  if (sources.length === 0) {
    throw new BadRequestError(
      `Service ${request.service_id} has no conversation the caller may read to replay since ${request.since ?? 'its start'}.`,
    );
  }
  const metricVersions = await metricVersionsOf(orgId, caller, request.service_id, request.metric_ids);
  const expiries = sources.flatMap((source) =>
    source.expires_at_epoch === undefined ? [] : [source.expires_at_epoch],
  );
  const expiresAtEpoch = expiries.length > 0 ? Math.min(...expiries) : undefined;
  const at = nowIso();
  const backtest: BacktestRecord = {
    id: newId(),
    org_id: orgId,
    creator: creatorOf(caller),
    created_at: at,
    updated_at: at,
    service_id: request.service_id,
    candidate_version_set: request.candidate_version_set,
    candidate,
    metric_versions: metricVersions,
    divergence_threshold: request.divergence_threshold,
    status: 'running',
    reason: null,
    source_conversation_ids: sources.map((source) => source.id),
    finished_conversations: 0,
    summary: null,
    ...(expiresAtEpoch === undefined ? {} : { expires_at_epoch: expiresAtEpoch }),
    revision: 1,
  };
  await insertBacktest(
    backtest,
    sources.map((source) => ({
      backtest_id: backtest.id,
      source_conversation_id: source.id,
      user_id: newId(),
      replay_conversation_id: null,
      derived_from: derivedFromConversation(source, { messages: [], userModels: false }),
      outcome: null,
      created_at: at,
      ...(expiresAtEpoch === undefined ? {} : { expires_at_epoch: expiresAtEpoch }),
    })),
  );
  try {
    for (let start = 0; start < sources.length; start += 10) {
      await Promise.all(
        sources.slice(start, start + 10).map((source) =>
          queueSimulation({
            type: 'replay-backtest-conversation',
            org_id: orgId,
            simulation_backtest_id: backtest.id,
            conversation_id: source.id,
          }),
        ),
      );
    }
  } catch (error) {
    await replaceBacktest(backtest, { ...backtest, status: 'failed', reason: 'The replays could not be queued.' });
    throw error;
  }
  return { id: backtest.id };
};

const resultOf = async (orgId: string, record: BacktestConversationRecord) => ({
  conversation_id: record.source_conversation_id,
  replay_conversation_id: record.replay_conversation_id,
  status: record.outcome?.status ?? ('running' as const),
  error: record.outcome?.error ?? null,
  diverged_turns: record.outcome?.diverged_turns ?? 0,
  first_divergence: record.outcome?.first_divergence ?? null,
  mean_difference: record.outcome?.mean_difference ?? 0,
  metrics: record.outcome?.metrics ?? [],
  turns: record.outcome
    ? (await listBacktestTurns(orgId, record.backtest_id, record.source_conversation_id)).map(
        ({ backtest_id: _b, source_conversation_id: _s, expires_at_epoch: _e, ...turn }) => turn,
      )
    : [],
});

/**
 * `get-simulation-backtest`: its status, summary and a page of per-conversation results, the
 * most diverged first. A conversation's results show only to a caller who may read what they
 * copied of it (`withheld` counts the others).
 */
export const getSimulationBacktest = async (
  orgId: string,
  caller: Caller,
  id: string,
  page: { limit: number; continuation_token: number },
) => {
  const backtest = await getBacktest(orgId, id, true);
  if (!backtest) throw backtestNotFound(id);
  asIfMissing(
    () => requirePermission(caller, 'Simulation:GetSimulationBacktest', backtestAttributes(backtest)),
    () => backtestNotFound(id),
  );
  const records = await listBacktestConversations(orgId, id);
  const shown: BacktestConversationRecord[] = [];
  for (const record of records) if (await mayReadSource(orgId, caller, record.derived_from)) shown.push(record);
  shown.sort(byDivergence);
  const paged = await pageOf(
    orgId,
    () => listFingerprint(`backtest:${id}`, { caller: caller.userId }),
    page.continuation_token,
    async (startKey) => offsetPage(shown as unknown as Item[], startKey, page.limit),
    (item) => item as unknown as BacktestConversationRecord,
  );
  return {
    id: backtest.id,
    service_id: backtest.service_id,
    candidate_version_set: backtest.candidate_version_set,
    agent_version_info: [backtest.candidate.agentId, backtest.candidate.agentVersion] as [string, number],
    service_hierarchical_state_machine_version_info: [
      backtest.candidate.stateMachineId,
      backtest.candidate.stateMachineVersion,
    ] as [string, number],
    status: backtest.status,
    reason: backtest.reason,
    total_conversations: backtest.source_conversation_ids.length,
    finished_conversations: backtest.finished_conversations,
    summary: backtest.summary,
    results: await Promise.all(paged.items.map((record) => resultOf(orgId, record))),
    withheld: records.length - shown.length,
    has_more: paged.has_more,
    continuation_token: paged.continuation_token,
    creator: backtest.creator,
    created_at: backtest.created_at,
  };
};

/** The organization's latest backtests the caller may read (the console's list), newest first. */
export const recentBacktests = (orgId: string, caller: Caller, limit: number): Promise<BacktestRecord[]> =>
  queryRecentBacktests(orgId, limit, (backtest) =>
    hasPermission(caller, 'Simulation:GetSimulationBacktest', backtestAttributes(backtest)),
  );

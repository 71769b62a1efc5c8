import type { ReplayBacktestConversationMessage } from '../../events/queue-messages';
import { logger } from '../aws/observability';
import { queueSimulation } from '../aws/queues';
import { requireConversation } from '../conversation/conversation-lookup';
import { interactWithConversation, startConversation } from '../conversation/conversations';
import { closeConversation } from '../conversation/finishing';
import { getConversation, getUserServiceState, listInteractions, recentMessages } from '../conversation/index';
import type { ConversationRecord, InteractionRecord, MessageRecord } from '../conversation/schemas';
import { ConflictError, DomainError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { similarity } from '../llm/embedding';
import { embeddingProvider } from '../llm/registry';
import { judgeTranscripts } from '../metric/evaluation';
import { getUser } from '../user/index';
import { type ConversationTurns, compareTurns, completedOutcome, failedOutcome, summarize } from './backtest-diff';
import {
  getBacktest,
  getBacktestConversation,
  listBacktestConversations,
  noteReplayStarted,
  putBacktestTurns,
  recordReplayOutcome,
} from './backtest-repository';
import {
  type BacktestConversationRecord,
  type BacktestRecord,
  type MetricComparison,
  maxReplayedInteractions,
  type ReplayOutcome,
} from './backtest-schemas';
import { originalOf } from './derived-from';
import { newTurnEnd, noting, userStream } from './session-turns';
import { createSessionUser, sessionUserCaller } from './session-users';

/**
 * The simulation worker's replay of one real conversation of a backtest, a step of turns per
 * message: the candidate's conversation (a simulated one of its own synthetic user) is told what
 * the source's user said, turn by turn, its tool calls answered from the source's record
 * (`tool_replay`; no tool runs). The replay is the checkpoint: a redelivered or continued message
 * replays from where it stands. Once every turn is replayed, the turns are compared, the metrics
 * judged on both sides, and the outcome recorded once with the backtest's aggregate; the last
 * replay to finish completes the backtest with its summary.
 */

/** Turns a step takes at most, and the time after which it starts none (the worker has 300 s). */
export const replayStepTurns = 20;
const replayStepBudgetMs = 120_000;
/** Attempts at recording an outcome while other replays of the backtest record theirs. */
const recordAttempts = 20;
const messagesRead = 2000;

const readTurns = async (orgId: string, conversationId: string): Promise<ConversationTurns> => {
  const [interactions, messages] = await Promise.all([
    listInteractions(orgId, conversationId, maxReplayedInteractions + 1),
    recentMessages(orgId, conversationId, messagesRead),
  ]);
  return { interactions, messages: new Map(messages.map((message) => [message.id, message])) };
};

/** What the source's user said in an interaction: the message, the external events before it. */
const userSideOf = (turns: ConversationTurns, interaction: InteractionRecord) => {
  const said = [...turns.messages.values()].filter(
    (message) =>
      message.interaction_id === interaction.id &&
      (message.message_type === 'user-message' || message.message_type === 'external-event'),
  );
  const user = said.find((message) => message.message_type === 'user-message');
  const events = said.filter((message) => message.message_type === 'external-event');
  if (user) return { messageType: 'user-message' as const, text: user.message, events: events.map((e) => e.message) };
  const last = events.at(-1);
  if (last)
    return {
      messageType: 'external-event' as const,
      text: last.message,
      events: events.slice(0, -1).map((e) => e.message),
    };
  return { messageType: 'skip' as const, text: '', events: [] };
};

/** A refusal that retrying cannot fix ends the replay (4xx); anything else is thrown, so the message is retried. */
const refusalOf = (end: ReturnType<typeof newTurnEnd>): string | undefined => {
  if (!end.error) return undefined;
  if (end.error.code >= 500) throw new DomainError(end.error.code, end.error.description);
  return end.error.description;
};

/** Starts the replay with the source's opening: its user's first message, if they spoke first. */
const openReplay = async (
  backtest: BacktestRecord,
  record: BacktestConversationRecord,
  source: ConversationRecord,
  turns: ConversationTurns,
) => {
  const first = turns.interactions[0];
  const opening = first ? userSideOf(turns, first) : undefined;
  const { events } = await startConversation(backtest.org_id, sessionUserCaller(backtest.org_id, record.user_id), {
    serviceId: source.service_id,
    versionSetName: backtest.candidate.name,
    ...(opening && opening.messageType !== 'skip'
      ? { initialMessage: { type: opening.messageType, text: opening.text } }
      : {}),
    tags: source.tags,
    stream: userStream,
    simulation: {
      versions: backtest.candidate,
      source: { simulation_backtest_id: backtest.id, source_conversation_id: source.id },
      toolMocks: source.tool_mocks,
      clockStartsAt: source.clock_starts_at ?? null,
      replayOf: originalOf(source),
      ...(backtest.expires_at_epoch === undefined
        ? {}
        : { retention: { retention_days: source.retention_days, expires_at_epoch: backtest.expires_at_epoch } }),
    },
  });
  const end = newTurnEnd();
  for await (const _ of noting(events, end));
  return { conversationId: end.conversationId, refusal: refusalOf(end) };
};

/** The embeddings' cosine similarity of each turn's replies (1 for a turn without both). */
const similarities = async (source: ConversationTurns, replay: ConversationTurns, count: number) => {
  const pairs = source.interactions.slice(0, count).flatMap((interaction, index) => {
    const replayed = replay.interactions[index];
    return replayed
      ? [
          {
            index,
            texts: [
              source.messages.get(interaction.agent_message_id)?.message ?? '',
              replay.messages.get(replayed.agent_message_id)?.message ?? '',
            ],
          },
        ]
      : [];
  });
  const vectors = pairs.length > 0 ? await embeddingProvider().embed(pairs.flatMap((pair) => pair.texts)) : [];
  const byIndex = new Map(
    pairs.map((pair, n) => {
      const [left, right] = [vectors[2 * n], vectors[2 * n + 1]];
      const [a, b] = pair.texts;
      return [pair.index, a === b ? 1 : left && right ? similarity(left, right) : 0];
    }),
  );
  return (index: number) => byIndex.get(index) ?? 1;
};

const transcriptThrough = (turns: ConversationTurns, count: number): MessageRecord[] => {
  const last = turns.interactions[Math.min(count, turns.interactions.length) - 1];
  return [...turns.messages.values()]
    .filter((message) => last !== undefined && message.interaction_id <= last.id)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
};

/** Records the outcome once, with the backtest's new aggregate (its summary once the last replay is in). */
const recordOutcome = async (
  orgId: string,
  message: ReplayBacktestConversationMessage,
  record: BacktestConversationRecord,
  outcome: ReplayOutcome,
): Promise<void> => {
  for (let attempt = 0; attempt < recordAttempts; attempt += 1) {
    const backtest = await getBacktest(orgId, message.simulation_backtest_id, true);
    if (backtest?.status !== 'running') return;
    const finished = backtest.finished_conversations + 1;
    const done = finished >= backtest.source_conversation_ids.length;
    const summary = done
      ? summarize(
          (await listBacktestConversations(orgId, backtest.id)).map((one) =>
            one.source_conversation_id === record.source_conversation_id ? { ...one, outcome } : one,
          ),
        )
      : null;
    const written = await recordReplayOutcome(
      backtest,
      { ...backtest, finished_conversations: finished, status: done ? 'completed' : 'running', summary },
      record,
      outcome,
    );
    if (written !== 'changed') return;
  }
  throw new ConflictError('The backtest changed too often while the outcome was recorded; the message is retried.');
};

/** Replays a step of one conversation of a backtest (see the module comment). */
export const replayBacktestConversation = async (message: ReplayBacktestConversationMessage): Promise<void> => {
  const { org_id: orgId, simulation_backtest_id: backtestId, conversation_id: sourceId } = message;
  const backtest = await getBacktest(orgId, backtestId, true);
  if (backtest?.status !== 'running') return;
  let record = await getBacktestConversation(orgId, backtestId, sourceId);
  if (!record || record.outcome) return;
  const fail = (error: string) =>
    recordOutcome(orgId, message, record as BacktestConversationRecord, failedOutcome(error, nowIso()));
  const source = await getConversation(orgId, sourceId, true);
  if (!source) return fail(`Conversation ${sourceId} no longer exists.`);
  const sourceTurns = await readTurns(orgId, sourceId);
  const count = Math.min(sourceTurns.interactions.length, maxReplayedInteractions);

  if (!(await getUser(orgId, record.user_id, true))) {
    await createSessionUser(
      orgId,
      record.user_id,
      { persona: null, name: source.user_display_name },
      backtest.expires_at_epoch,
    ).catch(async (error: unknown) => {
      // Another delivery created it meanwhile.
      if (
        !(error instanceof ConflictError) ||
        !(await getUser(orgId, (record as BacktestConversationRecord).user_id, true))
      )
        throw error;
    });
  }
  const caller = sessionUserCaller(orgId, record.user_id);
  const deadline = Date.now() + replayStepBudgetMs;
  let turns = 0;
  let replayId =
    record.replay_conversation_id ??
    (await getUserServiceState(orgId, record.user_id, source.service_id)).activeConversationId;
  if (!replayId) {
    const opened = await openReplay(backtest, record, source, sourceTurns);
    if (opened.refusal || !opened.conversationId) return fail(opened.refusal ?? 'The replay could not start.');
    replayId = opened.conversationId;
    turns += 1;
  }
  if (!record.replay_conversation_id) {
    await noteReplayStarted(orgId, record, replayId).catch((error: unknown) => {
      if (!(error instanceof ConflictError)) throw error;
    });
    record = { ...record, replay_conversation_id: replayId };
  }
  for (;;) {
    const replay = await requireConversation(orgId, replayId, true);
    const replayed = await listInteractions(orgId, replayId, count + 1);
    if (replay.is_finished || replayed.length >= count || replayed.at(-1)?.conversation_completed) break;
    if (turns >= replayStepTurns || Date.now() > deadline) {
      await queueSimulation(message);
      return;
    }
    const said = userSideOf(sourceTurns, sourceTurns.interactions[replayed.length] as InteractionRecord);
    const { events } = await interactWithConversation(orgId, caller, {
      conversationId: replayId,
      messageType: said.messageType,
      text: said.text,
      externalEvents: said.events.map((content) => ({ content, timestamp: nowIso() })),
      stream: userStream,
    });
    const end = newTurnEnd();
    for await (const _ of noting(events, end));
    const refusal = refusalOf(end);
    if (refusal) return fail(refusal);
    turns += 1;
  }
  const replay = await requireConversation(orgId, replayId, true);
  if (!replay.is_finished) {
    await closeConversation(replay, { trigger: 'finish-conversation' }).catch((error: unknown) => {
      if (!(error instanceof ConflictError)) throw error;
    });
  }
  const replayTurns = await readTurns(orgId, replayId);
  const compared = compareTurns(
    sourceTurns,
    replayTurns,
    count,
    await similarities(sourceTurns, replayTurns, count),
    backtest.divergence_threshold,
  );
  const original = transcriptThrough(sourceTurns, count);
  const judged = await judgeTranscripts(
    replay,
    Object.entries(backtest.metric_versions).map(([metricId, version]) => ({ metricId, version })),
    [original, [...replayTurns.messages.values()].sort((a, b) => (a.id < b.id ? -1 : 1))],
  ).catch((error: unknown) => {
    logger.warn('the metrics of a replay could not be judged', { error: error as Error });
    return [];
  });
  const metrics: MetricComparison[] = judged.map((metric) => ({
    metric_id: metric.metricId,
    metric_version: metric.version,
    original: (metric.values[0] ?? null) as MetricComparison['original'],
    candidate: (metric.values[1] ?? null) as MetricComparison['candidate'],
  }));
  await putBacktestTurns(
    orgId,
    compared.map((turn) => ({
      ...turn,
      backtest_id: backtestId,
      source_conversation_id: sourceId,
      ...(backtest.expires_at_epoch === undefined ? {} : { expires_at_epoch: backtest.expires_at_epoch }),
    })),
  );
  const copied = original.filter((one) => one.message_type !== 'agent-inner-thought');
  await recordOutcome(
    orgId,
    message,
    {
      ...record,
      derived_from: {
        ...record.derived_from,
        messages: copied.map((one) => ({ id: one.id, message_type: one.message_type })),
      },
    },
    completedOutcome(compared, metrics, nowIso()),
  );
};

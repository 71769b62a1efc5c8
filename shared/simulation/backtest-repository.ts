import { defineEntity } from '../data/entity';
import { type RecordedOnce, recordOutcomeOnce, writeIfUnchanged } from '../data/revisions';
import { batchPutItems, putItem, queryAll, queryPage, transactWrite } from '../data/table';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import {
  type BacktestConversationRecord,
  type BacktestRecord,
  type BacktestTurnRecord,
  backtestConversationRecord,
  backtestRecord,
  backtestTurnRecord,
  maxBacktestConversations,
  maxReplayedInteractions,
  type ReplayOutcome,
} from './backtest-schemas';

/**
 * Backtests, one partition per organization (sort keys by the backtest id, so creation order):
 *
 *   backtest               SIMULATION_BACKTEST               {backtest}
 *   replayed conversation  SIMULATION_BACKTEST_CONVERSATION  {backtest}#{source conversation}
 *   compared turn          SIMULATION_BACKTEST_TURN          {backtest}#{source conversation}#{turn, 3 digits}
 *
 * A replayed conversation's `outcome` is written once, in the same transaction as the backtest's
 * aggregate (guarded by its `revision`), so a redelivered message never counts it twice. Its turns
 * are written before, each under its own key: a redelivery writes the same keys again.
 * Every item carries the earliest expiry of the backtest's sources, if any.
 */
export const backtests = defineEntity({
  name: 'simulation-backtest',
  token: 'SIMULATION_BACKTEST',
  schema: backtestRecord,
  sort: (backtest: { id: string }) => backtest.id,
});

export const backtestConversations = defineEntity({
  name: 'simulation-backtest-conversation',
  token: 'SIMULATION_BACKTEST_CONVERSATION',
  schema: backtestConversationRecord,
  sort: (of: { backtest_id: string; source_conversation_id?: string }) =>
    `${of.backtest_id}#${of.source_conversation_id ?? ''}`,
});

export const backtestTurns = defineEntity({
  name: 'simulation-backtest-turn',
  token: 'SIMULATION_BACKTEST_TURN',
  schema: backtestTurnRecord,
  sort: (of: { backtest_id: string; source_conversation_id: string; index?: number }) =>
    `${of.backtest_id}#${of.source_conversation_id}#${of.index === undefined ? '' : String(of.index).padStart(3, '0')}`,
});

export const backtestNotFound = (id: string) => new NotFoundError(`Simulation backtest ${id} does not exist.`);

export const getBacktest = (orgId: string, id: string, consistent = false): Promise<BacktestRecord | undefined> =>
  backtests.get(orgId, { id }, consistent);

/** The organization's latest backtests, newest first (`keep` filters a bounded page). */
export const queryRecentBacktests = async (
  orgId: string,
  limit: number,
  keep: (backtest: BacktestRecord) => boolean,
): Promise<BacktestRecord[]> =>
  (
    await queryPage(backtests.query(orgId, {}, { forward: false }), {
      limit,
      keep: (item) => keep(backtests.parse(item)),
      maxReads: limit * 5,
    })
  ).items.map((item) => backtests.parse(item));

/** Stores a new backtest with a record per source conversation to replay. */
export const insertBacktest = async (
  backtest: BacktestRecord,
  sources: BacktestConversationRecord[],
): Promise<void> => {
  const orgId = backtest.org_id;
  await transactWrite([backtests.create(orgId, backtest)]);
  await batchPutItems(sources.map((source) => backtestConversations.item(orgId, source)));
};

const backtestReplacement = (previous: BacktestRecord, next: BacktestRecord) =>
  backtests.replacement(previous.org_id, { ...next, updated_at: nowIso() }, previous);

/** Replaces the backtest if nobody changed it since `previous` was read; false when someone did. */
export const replaceBacktest = (previous: BacktestRecord, next: BacktestRecord): Promise<boolean> =>
  writeIfUnchanged(backtestReplacement(previous, next));

export const getBacktestConversation = (
  orgId: string,
  backtestId: string,
  sourceConversationId: string,
): Promise<BacktestConversationRecord | undefined> =>
  backtestConversations.get(orgId, { backtest_id: backtestId, source_conversation_id: sourceConversationId }, true);

/** Notes the replay's conversation (once: a redelivery finds it noted). */
export const noteReplayStarted = async (
  orgId: string,
  record: BacktestConversationRecord,
  conversationId: string,
): Promise<void> => {
  await putItem(backtestConversations.item(orgId, { ...record, replay_conversation_id: conversationId }), {
    condition: { expression: 'replay_conversation_id = :none', values: { ':none': null } },
    onConditionFailure: () => new ConflictError('The replay was started by another delivery.'),
  });
};

/** The backtest's replayed conversations (bounded by {@link maxBacktestConversations}). */
export const listBacktestConversations = async (
  orgId: string,
  backtestId: string,
): Promise<BacktestConversationRecord[]> =>
  (await queryAll(backtestConversations.query(orgId, {}, { prefix: `${backtestId}#` }), maxBacktestConversations)).map(
    (item) => backtestConversations.parse(item),
  );

/** Writes a replayed conversation's compared turns (each under its own key, so writing them again repeats nothing). */
export const putBacktestTurns = async (orgId: string, turns: BacktestTurnRecord[]): Promise<void> => {
  await batchPutItems(turns.map((turn) => backtestTurns.item(orgId, turn)));
};

/** A replayed conversation's compared turns, in order. */
export const listBacktestTurns = async (
  orgId: string,
  backtestId: string,
  sourceConversationId: string,
): Promise<BacktestTurnRecord[]> =>
  (
    await queryAll(
      backtestTurns.query(orgId, {}, { prefix: `${backtestId}#${sourceConversationId}#` }),
      maxReplayedInteractions,
    )
  ).map((item) => backtestTurns.parse(item));

/**
 * Records a replayed conversation's outcome and the backtest's new aggregate in one transaction:
 * the outcome only if none is recorded yet, the backtest only if unchanged since read.
 */
export const recordReplayOutcome = (
  backtest: BacktestRecord,
  next: BacktestRecord,
  conversation: BacktestConversationRecord,
  outcome: ReplayOutcome,
): Promise<RecordedOnce> =>
  recordOutcomeOnce(
    backtestConversations.item(backtest.org_id, { ...conversation, outcome }),
    backtestReplacement(backtest, next),
  );

import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { compareText, keysPage, type Paged, pageOfQuery } from '../data/paging';
import { type RecordedOnce, recordOutcomeOnce, writeIfUnchanged } from '../data/revisions';
import type { ResultPut } from '../data/table';
import {
  failedConditions,
  type Item,
  putItem,
  queryAll,
  queryPage,
  type TransactItem,
  transactWrite,
} from '../data/table';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import {
  type ConversationOutcome,
  type RunConversationRecord,
  type RunRecord,
  runConversationRecord,
  runRecord,
} from './run-schemas';

/**
 * Simulation unit test set runs, one partition per organization (sort key: the run id, so
 * creation order):
 *
 *   run                    SIMULATION_RUN               {run}
 *   run conversation       SIMULATION_RUN_CONVERSATION  {run}#{unit test}#{run index, 4 digits}
 *   unfinished run guard   SIMULATION_RUN_UNFINISHED    {set}#{user}   (at most one per user and set)
 *
 * A run conversation's `outcome` is written once, in the same transaction as the run's
 * aggregate (guarded by the run's `revision`), so a redelivered message never counts it twice.
 */
export const runs = defineEntity({
  name: 'simulation-run',
  token: 'SIMULATION_RUN',
  schema: runRecord,
  sort: (run: { id: string }) => run.id,
});

export const runConversations = defineEntity({
  name: 'simulation-run-conversation',
  token: 'SIMULATION_RUN_CONVERSATION',
  schema: runConversationRecord,
  sort: (of: { run_id: string; unit_test_id?: string; run_index?: number }) =>
    `${of.run_id}#${of.unit_test_id ?? ''}#${String(of.run_index ?? 0).padStart(4, '0')}`,
});

export const unfinishedRuns = defineEntity({
  name: 'simulation-run-unfinished',
  token: 'SIMULATION_RUN_UNFINISHED',
  schema: z.object({ simulation_unit_test_set_id: z.string(), user_id: z.string(), run_id: z.string() }),
  sort: (of: { simulation_unit_test_set_id: string; user_id: string }) =>
    `${of.simulation_unit_test_set_id}#${of.user_id}`,
});

/** Runs hold at most this many simulated conversations, which keeps the run item and its artifacts bounded. */
export const maxConversationsPerRun = 500;

export const getRun = (orgId: string, id: string, consistent = false): Promise<RunRecord | undefined> =>
  runs.get(orgId, { id }, consistent);

export const getRuns = (orgId: string, ids: readonly string[]): Promise<RunRecord[]> =>
  runs.getMany(
    orgId,
    ids.map((id) => ({ id })),
  );

const unfinishedKey = (run: RunRecord) => ({
  simulation_unit_test_set_id: run.simulation_unit_test_set_id,
  user_id: run.creator.user_id,
});

/**
 * Stores a new run with its creator's unfinished-run guard and the set's `last_triggered_run_id`
 * (`setUpdate`); 409 while the creator has an unfinished run of the set, 404 when the set is gone.
 */
export const insertRun = async (run: RunRecord, setUpdate: TransactItem): Promise<void> => {
  await transactWrite(
    [
      runs.create(run.org_id, run),
      unfinishedRuns.create(run.org_id, { ...unfinishedKey(run), run_id: run.id }),
      setUpdate,
    ],
    (error) => {
      const failed = failedConditions(error);
      if (failed.includes(1))
        return new ConflictError('The user already has an unfinished run of this simulation unit test set.');
      return failed.includes(2)
        ? new NotFoundError(`Simulation unit test set ${run.simulation_unit_test_set_id} does not exist.`)
        : new ConflictError('The simulation unit test set changed while the run was created; retry.');
    },
  );
};

/** The run's replacement by `next` (the revision moves on) and, once it is over, the release of its guard. */
const runReplacement = (previous: RunRecord, next: RunRecord) => ({
  replacement: runs.replacement(previous.org_id, { ...next, updated_at: nowIso() }, previous),
  released:
    previous.status === 'running' && next.status !== 'running'
      ? [{ Delete: { Key: unfinishedRuns.key(previous.org_id, unfinishedKey(previous)) } }]
      : [],
});

/** Replaces the run if nobody changed it since `previous` was read; false when someone did. */
export const replaceRun = (previous: RunRecord, next: RunRecord): Promise<boolean> => {
  const { replacement, released } = runReplacement(previous, next);
  return writeIfUnchanged(replacement, released);
};

export const getRunConversation = (
  orgId: string,
  of: { run_id: string; unit_test_id: string; run_index: number },
): Promise<RunConversationRecord | undefined> => runConversations.get(orgId, of, true);

/**
 * The run conversation as first stored: `record` when none is (its synthetic user is then
 * created), else the one a previous delivery of the message stored.
 */
export const claimRunConversation = async (
  orgId: string,
  record: RunConversationRecord,
): Promise<{ record: RunConversationRecord; claimed: boolean }> => {
  const taken = new Error('run conversation already stored');
  try {
    await putItem(runConversations.item(orgId, record), { ifNotExists: () => taken });
    return { record, claimed: true };
  } catch (error) {
    if (error !== taken) throw error;
    const stored = await getRunConversation(orgId, record);
    if (!stored) throw error;
    return { record: stored, claimed: false };
  }
};

/** Notes the conversation started for a run conversation (once: a redelivery finds it noted). */
export const noteRunConversationStarted = async (
  orgId: string,
  record: RunConversationRecord,
  conversationId: string,
): Promise<void> => {
  await putItem(runConversations.item(orgId, { ...record, conversation_id: conversationId }), {
    condition: { expression: 'conversation_id = :none', values: { ':none': null } },
    onConditionFailure: () => new ConflictError('The simulated conversation was started by another delivery.'),
  });
};

/** The run's simulated conversations (bounded by {@link maxConversationsPerRun}). */
export const listRunConversations = async (orgId: string, runId: string): Promise<RunConversationRecord[]> =>
  (
    await queryAll(runConversations.query(orgId, { run_id: runId }, { prefix: `${runId}#` }), maxConversationsPerRun)
  ).map((item) => runConversations.parse(item));

/**
 * Records a conversation's outcome with its metric results and the run's new aggregate, in one
 * transaction: the outcome only if none is recorded yet, the run only if unchanged since read.
 */
export const recordConversationOutcome = (
  run: RunRecord,
  nextRun: RunRecord,
  conversation: RunConversationRecord,
  outcome: ConversationOutcome,
  results: ResultPut[],
): Promise<RecordedOnce> => {
  const { replacement, released } = runReplacement(run, nextRun);
  return recordOutcomeOnce(runConversations.item(run.org_id, { ...conversation, outcome }), replacement, [
    ...released,
    ...results.map((Put) => ({ Put })),
  ]);
};

export interface RunListQuery {
  /** The filters, which a continuation token is tied to; `keep` applies them. */
  filters: Record<string, unknown>;
  ids?: string[];
  descending: boolean;
  limit: number;
  continuationToken: number;
  keep: (run: RunRecord) => boolean;
  visible: unknown;
}

/**
 * One page of the organization's runs in creation order (or of the runs named by `ids`),
 * filtered by `keep`: a bounded number of reads per page.
 */
export const queryRuns = async (orgId: string, query: RunListQuery): Promise<Paged<RunRecord>> => {
  const keep = (item: Item) => query.keep(runs.parse(item));
  const { ids } = query;
  return pageOfQuery(
    orgId,
    'simulation-runs',
    query,
    (startKey) =>
      ids?.length
        ? keysPage(
            ids.map((id) => runs.key(orgId, { id })),
            startKey,
            {
              limit: query.limit,
              keep,
              compare: compareText((item) => String(item.id), query.descending),
            },
          )
        : queryPage(runs.query(orgId, {}, { forward: !query.descending }), { limit: query.limit, startKey, keep }),
    (item) => runs.parse(item),
  );
};

import type { SimulateConversationMessage } from '../../events/queue-messages';
import { logger } from '../aws/observability';
import { queueSimulation } from '../aws/queues';
import { requireConversation } from '../conversation/conversation-lookup';
import type { ConversationRecord, InteractionRecord } from '../conversation/schemas';
import { newId, nowIso } from '../kernel/ids';
import { judgeSimulatedConversation } from '../metric/evaluation';
import { resultPut } from '../metric/index';
import type { MetricEvaluationResultInstance } from '../metric/schemas';
import { storeRunArtifacts } from './run-artifacts';
import { advanceSimulatedConversation, ensureSyntheticUser } from './run-conversation';
import { claimRunConversation, getRun, recordConversationOutcome, replaceRun } from './run-repository';
import type { ConversationOutcome, CriterionOutcome, RunRecord, StoredUnitTestRunSpec } from './run-schemas';
import type { SuccessCriterionDescription } from './schemas';

/**
 * The simulation worker's work for one message: one step of one simulated conversation.
 *
 * Bound: a step takes at most {@link turnsPerStep} turns and starts none after
 * {@link stepBudgetMs} (well within the worker's 300 s timeout, leaving time for the last turn,
 * the judgements and the artifacts); a longer conversation continues in a new message that
 * carries its checkpoint. When the conversation is over its metrics are judged (source
 * `simulation`) and its outcome, results and the run's new aggregate are written in one
 * transaction; the step that finishes the run's last conversation completes the run and
 * stores its artifacts.
 */
export const turnsPerStep = 20;
export const stepBudgetMs = 120_000;
/** Attempts at writing an outcome while other conversations of the run write theirs. */
const recordAttempts = 20;

/** Whether a metric value meets a success criterion; a null value (not applicable) never does. */
export const meetsCriterion = (criterion: SuccessCriterionDescription, value: unknown): boolean => {
  switch (criterion.type) {
    case 'boolean':
      return value === criterion.expected_value;
    case 'categorical':
      return typeof value === 'string' && criterion.expected_values.includes(value);
    case 'numerical': {
      if (typeof value !== 'number') return false;
      const { threshold } = criterion;
      switch (criterion.verb) {
        case '==':
          return value === threshold;
        case '!=':
          return value !== threshold;
        case '<=':
          return value <= threshold;
        case '<':
          return value < threshold;
        case '>=':
          return value >= threshold;
        case '>':
          return value > threshold;
      }
    }
  }
};

/** The action states engaged and the transitions taken, from the conversation's interactions. */
const coverageOf = (interactions: InteractionRecord[]) => {
  const states = new Set<string>();
  const transitions = new Set<string>();
  for (const interaction of interactions) {
    for (const log of interaction.state_transition_logs) {
      states.add(log.previous_state);
      states.add(log.next_state);
      transitions.add(`${log.previous_state} -> ${log.next_state}`);
    }
    states.add(interaction.current_state_name);
  }
  return { visited_states: [...states].sort(), transitions: [...transitions].sort() };
};

/** Each criterion's outcome; none passes when the conversation hit max_interactions. */
const criteriaOutcomes = (
  spec: StoredUnitTestRunSpec,
  results: MetricEvaluationResultInstance[],
  failedOutright: boolean,
): CriterionOutcome[] =>
  spec.metrics_to_evaluate.flatMap((wanted) => {
    const result = results.find((candidate) => candidate.metric_id === wanted.metric_id);
    if (!result) return [];
    return [
      {
        success_criterion_name: wanted.success_criterion_name,
        metric_id: wanted.metric_id,
        metric_version: result.metric_version,
        result_id: result.id,
        value: result.result,
        passed: !failedOutright && meetsCriterion(wanted.success_criterion, result.result),
        justification: result.justification,
        references: result.source.references,
      },
    ];
  });

/** Per run index, whether the conversations were escalated, with this one's (when the unit test checks it). */
const escalatedOf = (
  result: RunRecord['unit_test_run_results'][number],
  runIndex: number,
  escalation: ConversationOutcome['escalation'],
): { escalated?: (boolean | null)[] } => {
  if (!escalation) return result.escalated ? { escalated: result.escalated } : {};
  const known = result.escalated ?? result.run_errors.map(() => null);
  return { escalated: known.map((value, index) => (index === runIndex ? escalation.escalated : value)) };
};

/**
 * The unit test's built-in escalation check: whether the conversation was escalated to an operator
 * (its `escalation_count`), and whether that is what the unit test expects. None when it checks nothing.
 */
const escalationOutcome = (
  spec: StoredUnitTestRunSpec,
  conversation: ConversationRecord | undefined,
): ConversationOutcome['escalation'] => {
  if (spec.expected_escalation === null || !conversation) return undefined;
  const escalated = (conversation.escalation_count ?? 0) > 0;
  return { escalated, passed: escalated === spec.expected_escalation };
};

/** The run with one more conversation's outcome counted: its results, failures, errors, and completion after the last. */
export const withOutcome = (
  run: RunRecord,
  place: { unitTestId: string; runIndex: number },
  outcome: ConversationOutcome,
): RunRecord => {
  const finished = run.finished_conversations + 1;
  const failedMetrics =
    outcome.ending === 'max-interactions' ||
    outcome.criteria.some((criterion) => !criterion.passed) ||
    outcome.escalation?.passed === false;
  return {
    ...run,
    unit_test_run_results: run.unit_test_run_results.map((result) =>
      result.unit_test_id !== place.unitTestId
        ? result
        : {
            ...result,
            metric_evaluation_results: result.metric_evaluation_results.map((metric) => {
              const criteria = outcome.criteria.filter((criterion) => criterion.metric_id === metric.metric_id);
              const first = criteria[0];
              if (!first) return metric;
              return {
                ...metric,
                metric_version: first.metric_version,
                results: [...metric.results, [first.result_id, criteria.every((criterion) => criterion.passed)]],
              };
            }),
            run_errors: result.run_errors.map((error, index) => (index === place.runIndex ? outcome.error : error)),
            ...escalatedOf(result, place.runIndex, outcome.escalation),
          },
    ),
    finished_conversations: finished,
    failed_metrics: run.failed_metrics || failedMetrics,
    errored: run.errored || outcome.ending === 'error',
    status: run.status === 'running' && finished >= run.total_conversations ? 'completed' : run.status,
  };
};

/**
 * Stores the artifacts of a completed run that has none yet (any step may: the zip's key is the
 * run's). `written` is the run as this step just wrote it, which spares the first read.
 */
export const completeRunArtifacts = async (
  orgId: string,
  runId: string,
  written?: Awaited<ReturnType<typeof getRun>>,
): Promise<void> => {
  for (let attempt = 0; attempt < recordAttempts; attempt += 1) {
    const run = attempt === 0 && written ? written : await getRun(orgId, runId, true);
    if (run?.status !== 'completed' || run.artifacts_key) return;
    const key = await storeRunArtifacts(run);
    if (await replaceRun(run, { ...run, artifacts_key: key })) return;
  }
  throw new Error(`the artifacts of run ${runId} could not be recorded`);
};

/** Records the outcome in the run; answers the run as written, when this step wrote it. */
const recordOutcome = async (
  orgId: string,
  message: SimulateConversationMessage,
  record: Parameters<typeof recordConversationOutcome>[2],
  outcome: ConversationOutcome,
  results: MetricEvaluationResultInstance[],
): Promise<Awaited<ReturnType<typeof getRun>>> => {
  const place = { unitTestId: message.unit_test_id, runIndex: message.run_index };
  for (let attempt = 0; attempt < recordAttempts; attempt += 1) {
    const run = await getRun(orgId, message.simulation_unit_test_set_run_id, true);
    // A cancelled run counts nothing more.
    if (run?.status !== 'running') return undefined;
    const next = withOutcome(run, place, outcome);
    const written = await recordConversationOutcome(
      run,
      next,
      record,
      outcome,
      results.map((result) => resultPut(orgId, result)),
    );
    // As stored: the write moves the revision on.
    if (written === 'recorded') return { ...next, revision: run.revision + 1 };
    if (written !== 'changed') return undefined;
  }
  throw new Error('the run changed too often while the outcome was recorded; the message is retried');
};

/** Simulates one step of one conversation of a run (see the module comment). */
export const simulateConversationStep = async (message: SimulateConversationMessage): Promise<void> => {
  const { org_id: orgId, simulation_unit_test_set_run_id: runId } = message;
  const run = await getRun(orgId, runId, true);
  const spec = run?.unit_test_run_specs.find((candidate) => candidate.unit_test_id === message.unit_test_id);
  if (!run || !spec) {
    logger.warn('simulation message for a run or unit test that does not exist; dropped', { runId });
    return;
  }
  if (run.status === 'cancelled' && message.checkpoint === null) return;
  const { record } = await claimRunConversation(orgId, {
    run_id: runId,
    unit_test_id: message.unit_test_id,
    run_index: message.run_index,
    user_id: newId(),
    conversation_id: null,
    created_at: nowIso(),
    outcome: null,
  });
  if (record.outcome === null) {
    await ensureSyntheticUser(orgId, record, spec);
    const step = await advanceSimulatedConversation(orgId, record, spec, {
      maxTurns: turnsPerStep,
      deadline: Date.now() + stepBudgetMs,
      isCancelled: async () => (await getRun(orgId, runId, true))?.status === 'cancelled',
    });
    if (step.status === 'continue') {
      await queueSimulation({
        ...message,
        checkpoint: { conversation_id: step.conversationId, interactions: step.interactions },
      });
      return;
    }
    if (step.ending === 'cancelled') return;
    const conversation = step.conversationId ? await requireConversation(orgId, step.conversationId, true) : undefined;
    const results =
      conversation && step.ending !== 'error'
        ? await judgeSimulatedConversation(
            conversation,
            spec.metrics_to_evaluate.map((wanted) => ({
              metricId: wanted.metric_id,
              version: spec.metric_versions[wanted.metric_id] ?? 1,
            })),
            { runId, unitTestId: message.unit_test_id, runIndex: message.run_index },
          )
        : [];
    const escalation = escalationOutcome(spec, conversation);
    const outcome: ConversationOutcome = {
      ending: step.ending,
      interactions: step.interactions.length,
      error: step.ending === 'error' ? (step.error ?? 'The simulated conversation failed.') : null,
      criteria: criteriaOutcomes(spec, results, step.ending === 'max-interactions'),
      ...(escalation ? { escalation } : {}),
      ...coverageOf(step.interactions),
      finished_at: nowIso(),
    };
    const written = await recordOutcome(
      orgId,
      message,
      { ...record, conversation_id: step.conversationId },
      outcome,
      results,
    );
    await completeRunArtifacts(orgId, runId, written);
    return;
  }
  await completeRunArtifacts(orgId, runId);
};

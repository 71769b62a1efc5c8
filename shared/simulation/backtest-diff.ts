import { toolCallKey, toolCallsOf } from '../conversation/recorded-tool-calls';
import type { InteractionRecord, MessageRecord } from '../conversation/schemas';
import type {
  BacktestConversationRecord,
  BacktestSummary,
  MetricComparison,
  ReplayOutcome,
  TurnComparison,
  TurnSide,
} from './backtest-schemas';
import type { TurnToolCall } from './session-schemas';

/*
 * Comparing a replay with the conversation it replayed, turn by turn (pure: no I/O). Turn i is
 * the i-th interaction of each (the opening first). A turn diverges when its replies differ by at
 * least the threshold (1 − cosine similarity of their embeddings), or when the states it passed
 * through or the tool calls it made differ.
 */

/** What a turn shows of its text: a reply or message kept in a result is at most this long. */
const maxShownText = 4000;
/** Tool calls shown per side of a turn, and the length of each one's output. */
const maxShownToolCalls = 10;
const maxShownOutput = 1000;

const shown = (text: string, limit = maxShownText) => (text.length > limit ? `${text.slice(0, limit - 1)}…` : text);

/** The states a turn passed through: where it started, then each state it moved to. */
export const statePathOf = (interaction: InteractionRecord): string[] => {
  const logs = interaction.state_transition_logs;
  const first = logs[0];
  return first ? [first.previous_state, ...logs.map((log) => log.next_state)] : [interaction.current_state_name];
};

export const toolCallViews = (interaction: InteractionRecord): TurnToolCall[] =>
  toolCallsOf(interaction).map((call) => ({
    tool_name: call.tool_name,
    tool_id: call.tool_id,
    tool_version: call.tool_version,
    input: call.input,
    output: call.output === null ? null : shown(call.output, maxShownOutput),
    mocked: call.mocked === true,
  }));

/** One conversation's interactions and messages, as read. */
export interface ConversationTurns {
  interactions: InteractionRecord[];
  messages: Map<string, MessageRecord>;
}

const sideOf = (turns: ConversationTurns, interaction: InteractionRecord | undefined): TurnSide => ({
  interaction_id: interaction?.id ?? null,
  reply: interaction ? shown(turns.messages.get(interaction.agent_message_id)?.message ?? '') : null,
  state_path: interaction ? statePathOf(interaction) : [],
  tool_calls: interaction ? toolCallViews(interaction).slice(0, maxShownToolCalls) : [],
});

const sameList = (left: string[], right: string[]) =>
  left.length === right.length && left.every((value, index) => value === right[index]);

/** What the user said in an interaction of the source (null: the agent spoke first, or a skip). */
export const userMessageOf = (turns: ConversationTurns, interaction: InteractionRecord): string | null =>
  interaction.user_message_id ? (turns.messages.get(interaction.user_message_id)?.message ?? null) : null;

/**
 * The turns compared: one per source interaction (up to `count`), the replay's i-th interaction
 * against the source's. `similarity(i)` is the cosine similarity of turn i's replies.
 */
export const compareTurns = (
  source: ConversationTurns,
  replay: ConversationTurns,
  count: number,
  similarity: (index: number) => number,
  threshold: number,
): TurnComparison[] =>
  source.interactions.slice(0, count).map((interaction, index) => {
    const replayed = replay.interactions[index];
    const original = sideOf(source, interaction);
    const candidate = sideOf(replay, replayed);
    const difference = replayed ? Math.min(1, Math.max(0, 1 - similarity(index))) : 1;
    const statePathChanged = !sameList(original.state_path, candidate.state_path);
    const toolCallsChanged = !sameList(
      toolCallsOf(interaction).map(toolCallKey),
      replayed ? toolCallsOf(replayed).map(toolCallKey) : [],
    );
    return {
      index,
      user_message: (() => {
        const said = userMessageOf(source, interaction);
        return said === null ? null : shown(said);
      })(),
      original,
      candidate,
      difference: Math.round(difference * 10_000) / 10_000,
      state_path_changed: statePathChanged,
      tool_calls_changed: toolCallsChanged,
      diverged: replayed === undefined || difference >= threshold || statePathChanged || toolCallsChanged,
      original_by_operator: interaction.operator_user_id !== undefined,
    };
  });

/** How a replay that compared its turns ended. */
export const completedOutcome = (
  turns: TurnComparison[],
  metrics: MetricComparison[],
  finishedAt: string,
): ReplayOutcome => {
  const diverged = turns.filter((turn) => turn.diverged);
  return {
    status: 'completed',
    error: null,
    turn_count: turns.length,
    diverged_turns: diverged.length,
    first_divergence: diverged[0]?.index ?? null,
    mean_difference:
      turns.length === 0
        ? 0
        : Math.round((turns.reduce((sum, turn) => sum + turn.difference, 0) / turns.length) * 10_000) / 10_000,
    metrics,
    finished_at: finishedAt,
  };
};

export const failedOutcome = (error: string, finishedAt: string): ReplayOutcome => ({
  status: 'failed',
  error,
  turn_count: 0,
  diverged_turns: 0,
  first_divergence: null,
  mean_difference: 0,
  metrics: [],
  finished_at: finishedAt,
});

/** A metric value as a number to average: booleans as 1 or 0; categories have none. */
const numeric = (value: MetricComparison['original']): number | null =>
  typeof value === 'boolean' ? (value ? 1 : 0) : typeof value === 'number' ? value : null;

const mean = (values: number[]): number | null =>
  values.length === 0
    ? null
    : Math.round((values.reduce((sum, value) => sum + value, 0) / values.length) * 10_000) / 10_000;

/** The backtest's summary over its replayed conversations. */
export const summarize = (conversations: BacktestConversationRecord[]): BacktestSummary => {
  const outcomes = conversations.flatMap((conversation) =>
    conversation.outcome ? [{ id: conversation.source_conversation_id, outcome: conversation.outcome }] : [],
  );
  const completed = outcomes.filter(({ outcome }) => outcome.status === 'completed');
  const diverged = completed.filter(({ outcome }) => outcome.first_divergence !== null);
  const turnsCompared = completed.reduce((sum, { outcome }) => sum + outcome.turn_count, 0);
  const metricIds = [...new Set(completed.flatMap(({ outcome }) => outcome.metrics.map((metric) => metric.metric_id)))];
  return {
    conversations: conversations.length,
    completed: completed.length,
    failed: outcomes.length - completed.length,
    diverged: diverged.length,
    divergence_rate: completed.length === 0 ? 0 : Math.round((diverged.length / completed.length) * 10_000) / 10_000,
    turns_compared: turnsCompared,
    turns_diverged: completed.reduce((sum, { outcome }) => sum + outcome.diverged_turns, 0),
    mean_difference:
      turnsCompared === 0
        ? 0
        : Math.round(
            (completed.reduce((sum, { outcome }) => sum + outcome.mean_difference * outcome.turn_count, 0) /
              turnsCompared) *
              10_000,
          ) / 10_000,
    where: diverged.map(({ id, outcome }) => ({
      conversation_id: id,
      first_divergence: outcome.first_divergence ?? 0,
    })),
    metric_deltas: metricIds.map((metricId) => {
      const judged = completed.flatMap(({ outcome }) =>
        outcome.metrics.filter(
          (metric) => metric.metric_id === metricId && metric.original !== null && metric.candidate !== null,
        ),
      );
      const originalMean = mean(judged.flatMap((metric) => numeric(metric.original) ?? []));
      const candidateMean = mean(judged.flatMap((metric) => numeric(metric.candidate) ?? []));
      return {
        metric_id: metricId,
        original_mean: originalMean,
        candidate_mean: candidateMean,
        delta:
          originalMean === null || candidateMean === null
            ? null
            : Math.round((candidateMean - originalMean) * 10_000) / 10_000,
        changed: judged.filter((metric) => metric.original !== metric.candidate).length,
        judged: judged.length,
      };
    }),
  };
};

/** How the results list orders conversations: the most diverged first, then by mean difference; failed ones last. */
export const byDivergence = (left: BacktestConversationRecord, right: BacktestConversationRecord): number => {
  const rank = (record: BacktestConversationRecord) => [
    record.outcome?.status === 'completed' ? 0 : record.outcome ? 2 : 1,
    -(record.outcome?.diverged_turns ?? 0),
    -(record.outcome?.mean_difference ?? 0),
  ];
  const [a, b] = [rank(left), rank(right)];
  for (let index = 0; index < a.length; index += 1) {
    const difference = (a[index] as number) - (b[index] as number);
    if (difference !== 0) return difference;
  }
  return left.source_conversation_id < right.source_conversation_id ? -1 : 1;
};

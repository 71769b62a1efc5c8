import { z } from 'zod';
import { continuationToken, creatorInfo, objectId, queryNumber, timestamp } from '../kernel/schemas';
import { derivedFrom } from './schemas';
import { pinnedVersions, turnToolCall } from './session-schemas';

/*
 * Backtests (a platform extension): a candidate version set replays the user messages of the
 * organization's real conversations, and each turn's reply is compared with the original one.
 * Shapes are pure zod; no I/O.
 */

/** The most conversations one backtest replays. */
export const maxBacktestConversations = 200;
/** The most metrics judged on both sides of each conversation. */
export const maxBacktestMetrics = 10;
/** The most interactions of a conversation replayed (a simulated conversation's `max_interactions` is 100). */
export const maxReplayedInteractions = 100;

export const createBacktestRequest = z
  .strictObject({
    service_id: objectId.describe('The service whose conversations are replayed.'),
    candidate_version_set: z.string().min(1).max(40).describe('The version set of the service to replay them on.'),
    conversation_ids: z
      .array(objectId)
      .min(1)
      .max(maxBacktestConversations)
      .refine((ids) => new Set(ids).size === ids.length, { message: 'the conversation ids must be distinct' })
      .nullish()
      .describe(`The conversations to replay, at most ${maxBacktestConversations}.`),
    since: timestamp.nullish().describe("Else the service's conversations created since then, newest first."),
    limit: z
      .number()
      .int()
      .min(1)
      .max(maxBacktestConversations)
      .default(50)
      .describe(`How many of those at most (up to ${maxBacktestConversations}).`),
    metric_ids: z
      .array(objectId)
      .max(maxBacktestMetrics)
      .nullish()
      .describe(
        `The metrics judged on the original and the replay of each conversation; by default those applied to the service (at most ${maxBacktestMetrics}).`,
      ),
    divergence_threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.2)
      .describe(
        'A turn diverges when its replies differ by at least this much (1 − cosine similarity of their embeddings), or when its state path or tool calls differ.',
      ),
  })
  .refine((request) => (request.conversation_ids ? !request.since : true), {
    message: 'give either conversation_ids or since, not both',
    path: ['since'],
  });
export type CreateBacktestRequest = z.infer<typeof createBacktestRequest>;

/** One side of a compared turn. */
export const turnSide = z.object({
  interaction_id: z.string().nullable(),
  reply: z.string().nullable().describe('The agent’s reply (null when the side has no such turn).'),
  state_path: z.array(z.string()),
  tool_calls: z.array(turnToolCall),
});
export type TurnSide = z.infer<typeof turnSide>;

/** A turn of a replayed conversation, compared. */
export const turnComparison = z.object({
  index: z.number().int().describe('The turn, from 0 (the opening).'),
  user_message: z.string().nullable().describe('What the user said this turn, replayed.'),
  original: turnSide,
  candidate: turnSide,
  difference: z.number().describe("1 − the cosine similarity of the replies' embeddings, clipped to 0–1."),
  state_path_changed: z.boolean(),
  tool_calls_changed: z.boolean(),
  diverged: z.boolean(),
  original_by_operator: z.boolean().describe('The original reply was an operator’s, not the agent’s.'),
});
export type TurnComparison = z.infer<typeof turnComparison>;

export const metricValue = z.union([z.boolean(), z.number(), z.string()]).nullable();

export const metricComparison = z.object({
  metric_id: z.string(),
  metric_version: z.number().int(),
  original: metricValue,
  candidate: metricValue,
});
export type MetricComparison = z.infer<typeof metricComparison>;

export const backtestStatuses = ['running', 'completed', 'failed'] as const;

/** How one conversation's replay ended, with its comparison. */
export const replayOutcome = z.object({
  status: z.enum(['completed', 'failed']),
  error: z.string().nullable(),
  turn_count: z.number().int(),
  diverged_turns: z.number().int(),
  first_divergence: z.number().int().nullable().describe('The first turn that diverged.'),
  mean_difference: z.number(),
  metrics: z.array(metricComparison),
  finished_at: z.string(),
});
export type ReplayOutcome = z.infer<typeof replayOutcome>;

export const backtestConversationRecord = z.object({
  backtest_id: z.string(),
  source_conversation_id: z.string(),
  /** The synthetic user of the replay, and its conversation once started. */
  user_id: z.string(),
  replay_conversation_id: z.string().nullable(),
  /** What the replay copies of the source (messages, user models): reading it needs what reading those needed. */
  derived_from: derivedFrom,
  /** Set once, with the backtest's aggregate: the guard against counting it twice. */
  outcome: replayOutcome.nullable(),
  created_at: z.string(),
  expires_at_epoch: z.number().int().optional(),
});
export type BacktestConversationRecord = z.infer<typeof backtestConversationRecord>;

export const backtestTurnRecord = turnComparison.extend({
  backtest_id: z.string(),
  source_conversation_id: z.string(),
  expires_at_epoch: z.number().int().optional(),
});
export type BacktestTurnRecord = z.infer<typeof backtestTurnRecord>;

export const metricDelta = z.object({
  metric_id: z.string(),
  original_mean: z.number().nullable().describe('Booleans as 1 or 0, numbers as they are; null for categories.'),
  candidate_mean: z.number().nullable(),
  delta: z.number().nullable().describe('candidate_mean − original_mean.'),
  changed: z.number().int().describe('Conversations whose value changed.'),
  judged: z.number().int().describe('Conversations judged on both sides.'),
});

export const backtestSummary = z.object({
  conversations: z.number().int(),
  completed: z.number().int(),
  failed: z.number().int(),
  diverged: z.number().int().describe('Conversations with at least one diverged turn.'),
  divergence_rate: z.number().describe('diverged / completed (0 when none completed).'),
  turns_compared: z.number().int(),
  turns_diverged: z.number().int(),
  mean_difference: z.number(),
  where: z
    .array(z.object({ conversation_id: z.string(), first_divergence: z.number().int() }))
    .describe('Each diverged conversation and the turn where it first diverged.'),
  metric_deltas: z.array(metricDelta),
});
export type BacktestSummary = z.infer<typeof backtestSummary>;

export const backtestRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  creator: creatorInfo,
  created_at: z.string(),
  updated_at: z.string(),
  service_id: z.string(),
  candidate_version_set: z.string(),
  /** The candidate's versions, pinned when the backtest was created. */
  candidate: pinnedVersions,
  metric_versions: z.record(z.string(), z.number().int()),
  divergence_threshold: z.number(),
  status: z.enum(backtestStatuses),
  reason: z.string().nullable(),
  source_conversation_ids: z.array(z.string()),
  finished_conversations: z.number().int(),
  summary: backtestSummary.nullable(),
  /** The earliest expiry of its sources: a backtest keeps their words no longer than they are kept. */
  expires_at_epoch: z.number().int().optional(),
  revision: z.number().int(),
});
export type BacktestRecord = z.infer<typeof backtestRecord>;

export const backtestIdPath = z.object({ simulation_backtest_id: objectId.describe('The ID of the backtest.') });

export const getBacktestQuery = z.object({
  limit: queryNumber(z.number().int().min(1).max(50))
    .prefault(20)
    .describe('How many conversations’ results per page, the most diverged first.'),
  continuation_token: continuationToken,
});

export const conversationResult = z.object({
  conversation_id: z.string().describe('The source conversation.'),
  replay_conversation_id: z.string().nullable(),
  status: z.enum(['running', 'completed', 'failed']),
  error: z.string().nullable(),
  diverged_turns: z.number().int(),
  first_divergence: z.number().int().nullable(),
  mean_difference: z.number(),
  metrics: z.array(metricComparison),
  turns: z.array(turnComparison),
});

export const backtestInstance = z.object({
  id: z.string(),
  service_id: z.string(),
  candidate_version_set: z.string(),
  agent_version_info: z.tuple([z.string(), z.number().int()]),
  service_hierarchical_state_machine_version_info: z.tuple([z.string(), z.number().int()]),
  status: z.enum(backtestStatuses),
  reason: z.string().nullable(),
  total_conversations: z.number().int(),
  finished_conversations: z.number().int(),
  summary: backtestSummary.nullable(),
  results: z.array(conversationResult).describe('Per source conversation, the most diverged first.'),
  withheld: z
    .number()
    .int()
    .describe('Conversations whose results are left out: the caller may not read what they copied.'),
  has_more: z.boolean(),
  continuation_token: z.number().int().nullable(),
  creator: creatorInfo,
  created_at: timestamp,
});

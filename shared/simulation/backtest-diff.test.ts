import { describe, expect, it } from 'vitest';
import type { InteractionRecord, MessageRecord } from '../conversation/schemas';
import { byDivergence, type ConversationTurns, compareTurns, completedOutcome, summarize } from './backtest-diff';
import type { BacktestConversationRecord, ReplayOutcome } from './backtest-schemas';

const interaction = (
  id: string,
  userMessageId: string | null,
  agentMessageId: string,
  states: string[],
  toolInput?: Record<string, unknown>,
): InteractionRecord => ({
  id,
  conversation_id: 'c',
  created_at: '2025-01-01T00:00:00.000Z',
  user_message_id: userMessageId,
  agent_message_id: agentMessageId,
  state_machine_version_info: ['m', 1],
  current_state_name: states.at(-1) as string,
  current_state_action: 'help',
  current_state_objective: 'help',
  state_transition_logs: states.slice(1).map((next, index) => ({
    type: 'action' as const,
    previous_state: states[index] as string,
    previous_service_hierarchical_state_machine_version_info: ['m', 1],
    next_state: next,
    next_service_hierarchical_state_machine_version_info: ['m', 1],
    tool_call_logs: [],
  })),
  working_memory: [],
  reflections: [],
  triggered_dynamic_behavior_set_version_info: null,
  engage_user_tool_call_logs: toolInput
    ? [[{ tool_name: 'lookup', tool_id: 't', tool_version: '1.0.0', input: toolInput, output: 'ok', duration: 0 }]]
    : [],
  select_next_action_tool_call_logs: [],
  conversation_completed: false,
});

const message = (id: string, text: string): MessageRecord => ({
  id,
  conversation_id: 'c',
  interaction_id: 'i',
  created_at: '2025-01-01T00:00:00.000Z',
  sender: 'x',
  message: text,
  format: 'text',
  message_type: 'agent-message',
  message_metadata: [],
});

const turnsOf = (interactions: InteractionRecord[], texts: Record<string, string>): ConversationTurns => ({
  interactions,
  messages: new Map(Object.entries(texts).map(([id, text]) => [id, message(id, text)])),
});

describe('compareTurns', () => {
  const source = turnsOf(
    [interaction('i0', null, 'a0', ['start', 'greet']), interaction('i1', 'u1', 'a1', ['greet', 'help'], { q: 1 })],
    { a0: 'Hello', u1: 'My printer jams', a1: 'Clean the rollers' },
  );

  it('marks a turn diverged by its replies, its state path or its tool calls', () => {
    // Prepare
    const replay = turnsOf(
      [interaction('r0', null, 'b0', ['start', 'greet']), interaction('r1', 'v1', 'b1', ['greet', 'refund'], { q: 2 })],
      { b0: 'Hello', v1: 'My printer jams', b1: 'Clean the rollers' },
    );

    // Act
    const turns = compareTurns(source, replay, 2, (index) => (index === 0 ? 1 : 0.95), 0.2);

    // Assess
    expect(turns[0]).toMatchObject({ index: 0, user_message: null, difference: 0, diverged: false });
    expect(turns[1]).toMatchObject({
      index: 1,
      user_message: 'My printer jams',
      state_path_changed: true,
      tool_calls_changed: true,
      diverged: true,
      original: { reply: 'Clean the rollers', state_path: ['greet', 'help'] },
      candidate: { reply: 'Clean the rollers', state_path: ['greet', 'refund'] },
    });
    expect(turns[1]?.difference).toBeCloseTo(0.05);
  });

  it('counts a turn the replay never reached as fully diverged', () => {
    // Act
    const turns = compareTurns(
      source,
      turnsOf([interaction('r0', null, 'b0', ['start', 'greet'])], { b0: 'Hello' }),
      2,
      () => 1,
      0.2,
    );

    // Assess
    expect(turns[1]).toMatchObject({ difference: 1, diverged: true, candidate: { reply: null, interaction_id: null } });
  });
});

describe('summarize', () => {
  const record = (id: string, outcome: ReplayOutcome | null): BacktestConversationRecord => ({
    backtest_id: 'b',
    source_conversation_id: id,
    user_id: 'u',
    replay_conversation_id: null,
    derived_from: { conversation_id: id, user_id: 'x', service_id: 's', tags: {}, messages: [], user_models: false },
    outcome,
    created_at: '2025-01-01T00:00:00.000Z',
  });

  it('counts divergent conversations, where they diverged, and the metric deltas', () => {
    // Prepare
    const diverging = compareTurns(
      turnsOf([interaction('i0', null, 'a0', ['s'])], { a0: 'Hello' }),
      turnsOf([interaction('r0', null, 'b0', ['s'])], { b0: 'Bye' }),
      1,
      () => 0.1,
      0.2,
    );
    const records = [
      record(
        'c1',
        completedOutcome(diverging, [{ metric_id: 'm', metric_version: 1, original: true, candidate: false }], 'now'),
      ),
      record(
        'c2',
        completedOutcome([], [{ metric_id: 'm', metric_version: 1, original: true, candidate: true }], 'now'),
      ),
      record('c3', { ...completedOutcome([], [], 'now'), status: 'failed', error: 'refused' }),
    ];

    // Act
    const summary = summarize(records);

    // Assess
    expect(summary).toMatchObject({
      conversations: 3,
      completed: 2,
      failed: 1,
      diverged: 1,
      divergence_rate: 0.5,
      turns_compared: 1,
      turns_diverged: 1,
      where: [{ conversation_id: 'c1', first_divergence: 0 }],
      metric_deltas: [{ metric_id: 'm', original_mean: 1, candidate_mean: 0.5, delta: -0.5, changed: 1, judged: 2 }],
    });
    expect([...records].sort(byDivergence).map((one) => one.source_conversation_id)).toEqual(['c1', 'c2', 'c3']);
  });
});

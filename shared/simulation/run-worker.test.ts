import { describe, expect, it } from 'vitest';
import type { ConversationOutcome, RunRecord } from './run-schemas';
import { meetsCriterion, withOutcome } from './run-worker';

const run = (): RunRecord => ({
  id: 'run',
  org_id: 'org',
  simulation_unit_test_set_id: 'set',
  creator: { org_id: 'org', user_id: 'user' },
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  status: 'running',
  failed_metrics: false,
  errored: false,
  artifacts_key: null,
  unit_test_run_specs: [],
  unit_test_run_results: [
    {
      unit_test_id: 'test',
      metric_evaluation_results: [{ metric_id: 'metric', metric_version: 1, results: [] }],
      run_errors: [null, null],
    },
  ],
  total_conversations: 2,
  finished_conversations: 0,
  revision: 1,
});

const outcome = (passed: boolean, overrides: Partial<ConversationOutcome> = {}): ConversationOutcome => ({
  ending: 'agent-completed',
  interactions: 3,
  error: null,
  criteria: [
    {
      success_criterion_name: 'polite',
      metric_id: 'metric',
      metric_version: 2,
      result_id: `result-${passed}`,
      value: passed,
      passed,
      justification: 'Rule-based.',
      references: [],
    },
  ],
  visited_states: [],
  transitions: [],
  finished_at: '2026-01-01T00:01:00.000Z',
  ...overrides,
});

describe('meetsCriterion', () => {
  it('compares each kind of value as its criterion says', () => {
    // Act / Assess
    expect(meetsCriterion({ type: 'boolean', expected_value: true }, true)).toBe(true);
    expect(meetsCriterion({ type: 'boolean', expected_value: false }, true)).toBe(false);
    expect(meetsCriterion({ type: 'numerical', verb: '>=', threshold: 0.5 }, 0.5)).toBe(true);
    expect(meetsCriterion({ type: 'numerical', verb: '<', threshold: 0.5 }, 0.5)).toBe(false);
    expect(meetsCriterion({ type: 'categorical', expected_values: ['calm', 'kind'] }, 'kind')).toBe(true);
    expect(meetsCriterion({ type: 'categorical', expected_values: ['calm'] }, 'rude')).toBe(false);
  });

  it('never passes a result that does not apply (null)', () => {
    // Act / Assess
    expect(meetsCriterion({ type: 'boolean', expected_value: false }, null)).toBe(false);
    expect(meetsCriterion({ type: 'numerical', verb: '!=', threshold: 1 }, null)).toBe(false);
  });
});

describe('withOutcome', () => {
  it('adds the result to its metric and keeps the run going until the last conversation', () => {
    // Act
    const next = withOutcome(run(), { unitTestId: 'test', runIndex: 1 }, outcome(true));

    // Assess
    expect(next.unit_test_run_results[0]?.metric_evaluation_results[0]).toEqual({
      metric_id: 'metric',
      metric_version: 2,
      results: [['result-true', true]],
    });
    expect(next.finished_conversations).toBe(1);
    expect(next.status).toBe('running');
    expect(next.failed_metrics).toBe(false);
  });

  it('completes the run with its last conversation, failed as soon as one criterion failed', () => {
    // Prepare
    const first = withOutcome(run(), { unitTestId: 'test', runIndex: 0 }, outcome(false));

    // Act
    const last = withOutcome(first, { unitTestId: 'test', runIndex: 1 }, outcome(true));

    // Assess
    expect(first.failed_metrics).toBe(true);
    expect(last.status).toBe('completed');
    expect(last.unit_test_run_results[0]?.metric_evaluation_results[0]?.results).toHaveLength(2);
  });

  it('records an error under its run index and marks the run errored', () => {
    // Act
    const next = withOutcome(
      run(),
      { unitTestId: 'test', runIndex: 1 },
      outcome(false, { ending: 'error', error: 'The model is unavailable.', criteria: [] }),
    );

    // Assess
    expect(next.unit_test_run_results[0]?.run_errors).toEqual([null, 'The model is unavailable.']);
    expect(next.errored).toBe(true);
  });

  it('fails a conversation that reached max_interactions even without criteria', () => {
    // Act
    const next = withOutcome(
      run(),
      { unitTestId: 'test', runIndex: 0 },
      outcome(false, { ending: 'max-interactions', criteria: [] }),
    );

    // Assess
    expect(next.failed_metrics).toBe(true);
    expect(next.errored).toBe(false);
  });
});

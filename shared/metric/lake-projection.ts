import { versionedHeadColumns } from '../data/versioned-head';
import { lakeProjection } from '../kernel/lake-projection';
import { storedMetric, storedResult } from './stored-records';

/** Metrics (their heads) and their evaluation results as the SQL query's tables (`shared/analytics/`). */
export const metricProjection = lakeProjection(storedMetric, {
  name: 'metrics',
  entity: 'metric',
  key: 'id',
  fields: {
    ...versionedHeadColumns,
    updated_at: 'TIMESTAMPTZ',
  },
  derived: {
    /** `boolean`, `numerical` or `categorical`: what `metric_evaluation_results.value` holds. */
    value_type: { type: 'VARCHAR', value: (metric) => metric.metric_value.type },
  },
});

export const metricResultProjection = lakeProjection(storedResult, {
  name: 'metric_evaluation_results',
  entity: 'metric-result',
  key: 'id',
  fields: {
    id: 'VARCHAR',
    metric_id: 'VARCHAR',
    metric_version: 'BIGINT',
    conversation_id: 'VARCHAR',
    created_at: 'TIMESTAMPTZ',
  },
  derived: {
    /** The judged value (a boolean, number or category; null when the metric did not apply). */
    value: { type: 'JSON', value: (result) => result.result },
    /** Whether a boolean metric held: NULL for other metrics and for results that did not apply. */
    passed: { type: 'BOOLEAN', value: (result) => (typeof result.result === 'boolean' ? result.result : null) },
    /** `post-session`, `manual` or `simulation`. */
    source_type: { type: 'VARCHAR', value: (result) => result.source.type },
    simulation_unit_test_set_run_id: {
      type: 'VARCHAR',
      value: (result) => (result.source.type === 'simulation' ? result.source.simulation_unit_test_set_run_id : null),
    },
  },
});

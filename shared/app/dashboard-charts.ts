import type { QueryResult } from '../analytics/sql-engine';
import type { PermissionName } from '../kernel/permissions';
import { type ChartSpec, dayStart, numberOf, sqlText } from './lake-views';
import { palette } from './palette';

/**
 * The dashboard's charts: each one SQL query over the organization's lake (the tables of
 * docs/admin.md), the permissions whose records it counts, and how its rows become a chart.
 */

/** The period, version set and service the charts cover; simulated conversations only when asked. */
export interface DashboardFilters {
  /** `YYYY-MM-DD`, inclusive. */
  from: string;
  to: string;
  versionSet?: string;
  serviceId?: string;
  includeSimulated: boolean;
}

export interface DashboardChart {
  id: string;
  title: string;
  description: string;
  permissions: PermissionName[];
  sql: string;
  chart: (result: QueryResult) => ChartSpec;
  /** A line on what the chart cannot show by itself (costs all zero, turns without a price). */
  note?: (result: QueryResult) => string | undefined;
}

const conversationsPermission: PermissionName = 'Conversation:GetConversation';
/** What a turn's timings, cost and states need, as the interaction insights do. */
const insightPermissions: PermissionName[] = [
  'Conversation:GetConversation',
  'Conversation:GetInteractionInsights',
  'Organization:GetServiceHierarchicalStateMachine',
];

/** The conversations the filters select, as conditions on `c` (the conversations table). */
const conversationConditions = (filters: DashboardFilters): string[] => [
  `c.created_at >= ${dayStart(filters.from)}`,
  `c.created_at < ${dayStart(filters.to)} + INTERVAL 1 DAY`,
  ...(filters.includeSimulated ? [] : ['NOT c.is_simulated']),
  ...(filters.versionSet ? [`c.version_set_name = ${sqlText(filters.versionSet)}`] : []),
  ...(filters.serviceId ? [`c.service_id = ${sqlText(filters.serviceId)}`] : []),
];

const where = (conditions: string[]): string => `WHERE ${conditions.join('\n  AND ')}`;

/** The turns of the selected conversations the agent answered (an operator's turns have no model). */
const agentTurns = (filters: DashboardFilters, extra: string[] = []): string =>
  `FROM interactions i
JOIN conversations c ON c.id = i.conversation_id
${where([...conversationConditions(filters), 'i.operator_user_id IS NULL', ...extra])}`;

const column = (result: QueryResult, name: string): unknown[] => {
  const index = result.columns.findIndex((candidate) => candidate.name === name);
  return result.rows.map((row) => row[index]);
};

const labels = (result: QueryResult, name: string): string[] => column(result, name).map((value) => String(value));

const values = (result: QueryResult, name: string): (number | null)[] => column(result, name).map(numberOf);

/** Each day of the period, `YYYY-MM-DD`. */
export const daysOf = (filters: Pick<DashboardFilters, 'from' | 'to'>): string[] => {
  const days: string[] = [];
  for (
    let day = Date.parse(`${filters.from}T00:00:00Z`);
    day <= Date.parse(`${filters.to}T00:00:00Z`);
    day += 86_400_000
  )
    days.push(new Date(day).toISOString().slice(0, 10));
  return days;
};

/**
 * Why a cost chart is flat or short: every cost in the period was $0 (the built-in model is
 * free), or turns whose model has no price (LLM_PRICES) are left out of the sums.
 */
const costNote =
  (costColumns: string[], unpricedColumn?: string) =>
  (result: QueryResult): string | undefined => {
    const unpriced = unpricedColumn
      ? values(result, unpricedColumn).reduce<number>((sum, value) => sum + (value ?? 0), 0)
      : 0;
    if (unpriced > 0)
      return `${unpriced} ${unpriced === 1 ? 'turn is' : 'turns are'} left out: no cost recorded (a model without a price in LLM_PRICES).`;
    const costs = costColumns.flatMap((name) => values(result, name));
    if (costs.every((cost) => cost === 0 || cost === null))
      return 'Every turn in this period cost $0.00: the built-in model is free (LLM_PRICES prices the others).';
    return undefined;
  };

/** A chart of `series` columns over the `x` column. */
const chartOf =
  (
    kind: ChartSpec['kind'],
    x: string,
    series: { column: string; label: string; color: string }[],
    unit: string,
    horizontal = false,
  ) =>
  (result: QueryResult): ChartSpec => ({
    kind,
    horizontal,
    labels: labels(result, x),
    series: series.map((entry) => ({ label: entry.label, values: values(result, entry.column), color: entry.color })),
    unit,
  });

/**
 * A chart over the period's days, each day drawn: a day without rows counts `missing` (0 for a
 * count or a cost, null, a gap, for a percentile or a rate, which a day without turns has not).
 */
const perDay =
  (filters: DashboardFilters, chart: (result: QueryResult) => ChartSpec, missing: 0 | null) =>
  (result: QueryResult): ChartSpec => {
    const spec = chart(result);
    const days = daysOf(filters);
    return {
      ...spec,
      labels: days,
      series: spec.series.map((series) => {
        const byDay = new Map(spec.labels.map((day, index) => [day, series.values[index] ?? null]));
        return { ...series, values: days.map((day) => byDay.get(day) ?? missing) };
      }),
    };
  };

/** p50 and p95 per day of one stage time of the agent's turns. */
const percentilesPerDay = (filters: DashboardFilters, stage: string): string =>
  `SELECT CAST(i.created_at AS DATE) AS day,
  round(quantile_cont(i.${stage}, 0.5)) AS p50_ms,
  round(quantile_cont(i.${stage}, 0.95)) AS p95_ms,
  count(*) AS turns
${agentTurns(filters, [`i.${stage} IS NOT NULL`])}
GROUP BY day
ORDER BY day`;

const percentiles = (x = 'day') =>
  chartOf(
    'line',
    x,
    [
      { column: 'p50_ms', label: 'p50', color: palette.accent },
      { column: 'p95_ms', label: 'p95', color: palette.operator },
    ],
    'milliseconds',
  );

export const dashboardCharts = (filters: DashboardFilters): DashboardChart[] => {
  /** A chart of `series` columns per day of the period. */
  const daily = (
    kind: ChartSpec['kind'],
    series: { column: string; label: string; color: string }[],
    unit: string,
    missing: 0 | null,
  ) => perDay(filters, chartOf(kind, 'day', series, unit), missing);
  return [
    {
      id: 'conversations-per-day',
      title: 'Conversations per day',
      description: 'Conversations started each day, and how many of them were escalated to an operator.',
      permissions: [conversationsPermission],
      sql: `SELECT CAST(c.created_at AS DATE) AS day,
  count(*) AS conversations,
  count(*) FILTER (WHERE c.escalation_count > 0) AS escalated
FROM conversations c
${where(conversationConditions(filters))}
GROUP BY day
ORDER BY day`,
      chart: daily(
        'bar',
        [
          { column: 'conversations', label: 'Conversations', color: palette.accent },
          { column: 'escalated', label: 'Escalated', color: palette.error },
        ],
        'conversations',
        0,
      ),
    },
    {
      id: 'escalation-rate',
      title: 'Escalation rate',
      description: 'The share of each day’s conversations that asked for an operator.',
      permissions: [conversationsPermission],
      sql: `SELECT CAST(c.created_at AS DATE) AS day,
  round(100.0 * count(*) FILTER (WHERE c.escalation_count > 0) / count(*), 1) AS escalated_percent,
  count(*) AS conversations
FROM conversations c
${where(conversationConditions(filters))}
GROUP BY day
ORDER BY day`,
      chart: daily('line', [{ column: 'escalated_percent', label: 'Escalated', color: palette.error }], '%', null),
    },
    {
      id: 'first-token',
      title: 'First token, p50 and p95',
      description: 'From a turn’s request to the first piece of the agent’s answer, per day.',
      permissions: insightPermissions,
      sql: percentilesPerDay(filters, 'first_token_ms'),
      chart: perDay(filters, percentiles(), null),
    },
    {
      id: 'first-audio',
      title: 'First audio, p50 and p95',
      description: 'From a voice turn’s request to the first audio of the answer, per day.',
      permissions: insightPermissions,
      sql: percentilesPerDay(filters, 'first_audio_ms'),
      chart: perDay(filters, percentiles(), null),
    },
    {
      id: 'cost-per-day',
      title: 'Cost per day',
      description: 'What the models’ calls cost each day (US dollars, at the configured prices).',
      permissions: insightPermissions,
      sql: `SELECT CAST(i.created_at AS DATE) AS day,
  round(sum(i.cost_usd), 6) AS cost_usd,
  count(*) FILTER (WHERE i.cost_usd IS NULL) AS unpriced_turns
${agentTurns(filters)}
GROUP BY day
ORDER BY day`,
      chart: daily('bar', [{ column: 'cost_usd', label: 'Cost', color: palette.accent }], 'US dollars', 0),
      note: costNote(['cost_usd'], 'unpriced_turns'),
    },
    {
      id: 'cost-per-conversation',
      title: 'Cost per conversation',
      description: 'The mean and the 95th percentile of a conversation’s cost, by the day it started.',
      permissions: insightPermissions,
      sql: `WITH per_conversation AS (
  SELECT c.id, CAST(c.created_at AS DATE) AS day, sum(i.cost_usd) AS cost_usd
  ${agentTurns(filters).replaceAll('\n', '\n  ')}
  GROUP BY c.id, day
)
SELECT day,
  round(avg(cost_usd), 6) AS mean_usd,
  round(quantile_cont(cost_usd, 0.95), 6) AS p95_usd,
  count(*) AS conversations
FROM per_conversation
GROUP BY day
ORDER BY day`,
      chart: daily(
        'line',
        [
          { column: 'mean_usd', label: 'Mean', color: palette.accent },
          { column: 'p95_usd', label: 'p95', color: palette.operator },
        ],
        'US dollars',
        null,
      ),
      note: costNote(['mean_usd', 'p95_usd']),
    },
    {
      id: 'metric-pass-rates',
      title: 'Metric pass rates per version set',
      description: 'The share of the conversations each yes-or-no metric judged passed, per version set.',
      permissions: [conversationsPermission, 'Metric:GetMetric', 'Metric:GetMetricEvaluationResult'],
      sql: `SELECT m.name || ' · ' || c.version_set_name AS metric_and_version_set,
  round(100.0 * avg(CAST(r.passed AS INTEGER)), 1) AS passed_percent,
  count(*) AS results
FROM metric_evaluation_results r
JOIN metrics m ON m.id = r.metric_id
JOIN conversations c ON c.id = r.conversation_id
${where([...conversationConditions(filters), 'r.passed IS NOT NULL'])}
GROUP BY m.name, c.version_set_name
ORDER BY m.name, c.version_set_name`,
      chart: chartOf(
        'bar',
        'metric_and_version_set',
        [{ column: 'passed_percent', label: 'Passed', color: palette.accent }],
        '%',
        true,
      ),
    },
    {
      id: 'busiest-states',
      title: 'Busiest states',
      description: 'The states the agent’s turns ended in most often.',
      permissions: insightPermissions,
      sql: `SELECT i.current_state_name AS state, count(*) AS turns
${agentTurns(filters)}
GROUP BY state
ORDER BY turns DESC, state
LIMIT 10`,
      chart: chartOf('bar', 'state', [{ column: 'turns', label: 'Turns', color: palette.accent }], 'turns', true),
    },
    {
      id: 'slowest-tools',
      title: 'Slowest tools',
      description: 'The tools whose calls took longest at the 95th percentile, with their median.',
      permissions: insightPermissions,
      sql: `WITH calls AS (
  SELECT unnest(from_json(i.tool_calls, '[{"name":"VARCHAR","ms":"BIGINT"}]'), recursive := true)
  ${agentTurns(filters).replaceAll('\n', '\n  ')}
)
SELECT name AS tool,
  round(quantile_cont(ms, 0.5)) AS p50_ms,
  round(quantile_cont(ms, 0.95)) AS p95_ms,
  count(*) AS calls
FROM calls
GROUP BY name
ORDER BY p95_ms DESC, name
LIMIT 10`,
      chart: (result) => ({ ...percentiles('tool')(result), kind: 'bar', horizontal: true }),
    },
  ];
};

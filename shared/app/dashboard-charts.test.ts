import { describe, expect, it } from 'vitest';
import { dashboardCharts, daysOf } from './dashboard-charts';

const filters = { from: '2026-03-30', to: '2026-04-02', includeSimulated: false };

describe('dashboardCharts', () => {
  it("draws every day of the period, a day without conversations as 0 and a day without turns' latencies as a gap", () => {
    // Prepare
    const [perDay, , firstToken] = dashboardCharts(filters);
    const counted = {
      columns: [
        { name: 'day', type: 'DATE' },
        { name: 'conversations', type: 'BIGINT' },
        { name: 'escalated', type: 'BIGINT' },
      ],
      rows: [['2026-03-31', '4', '1']],
      truncated: false,
    };
    const measured = {
      columns: [
        { name: 'day', type: 'DATE' },
        { name: 'p50_ms', type: 'DOUBLE' },
        { name: 'p95_ms', type: 'DOUBLE' },
        { name: 'turns', type: 'BIGINT' },
      ],
      rows: [['2026-04-01', 120, 480, '9']],
      truncated: false,
    };

    // Act
    const conversations = perDay?.chart(counted);
    const latency = firstToken?.chart(measured);

    // Assess
    expect(daysOf(filters)).toEqual(['2026-03-30', '2026-03-31', '2026-04-01', '2026-04-02']);
    expect(conversations?.labels).toEqual(daysOf(filters));
    expect(conversations?.series.map((series) => series.values)).toEqual([
      [0, 4, 0, 0],
      [0, 1, 0, 0],
    ]);
    expect(latency?.series.map((series) => [series.label, series.values])).toEqual([
      ['p50', [null, null, 120, null]],
      ['p95', [null, null, 480, null]],
    ]);
  });

  it('selects real conversations of the period, and of the version set and service when chosen, as SQL literals', () => {
    // Act
    const [chart] = dashboardCharts({ ...filters, versionSet: "edge'--", serviceId: '0123456789abcdef01234567' });

    // Assess
    expect(chart?.sql).toContain("c.created_at >= TIMESTAMPTZ '2026-03-30 00:00:00+00'");
    expect(chart?.sql).toContain("c.created_at < TIMESTAMPTZ '2026-04-02 00:00:00+00' + INTERVAL 1 DAY");
    expect(chart?.sql).toContain('NOT c.is_simulated');
    expect(chart?.sql).toContain("c.version_set_name = 'edge''--'");
    expect(chart?.sql).toContain("c.service_id = '0123456789abcdef01234567'");
  });

  it('counts simulated conversations too when asked', () => {
    // Act
    const charts = dashboardCharts({ ...filters, includeSimulated: true });

    // Assess
    for (const chart of charts) expect(chart.sql).not.toContain('is_simulated');
  });
});

describe('the cost charts', () => {
  const costs = (rows: unknown[][]) => ({
    columns: [
      { name: 'day', type: 'DATE' },
      { name: 'cost_usd', type: 'DOUBLE' },
      { name: 'unpriced_turns', type: 'BIGINT' },
    ],
    rows,
    truncated: false,
  });
  const costPerDay = () => dashboardCharts(filters).find((chart) => chart.id === 'cost-per-day');

  it('say why they are flat when every turn cost nothing', () => {
    // Act
    const note = costPerDay()?.note?.(costs([['2026-03-31', 0, '0']]));

    // Assess
    expect(note).toBe(
      'Every turn in this period cost $0.00: the built-in model is free (LLM_PRICES prices the others).',
    );
  });

  it('count the turns left out for want of a price', () => {
    // Act
    const note = costPerDay()?.note?.(costs([['2026-03-31', 0.012, '2']]));

    // Assess
    expect(note).toBe('2 turns are left out: no cost recorded (a model without a price in LLM_PRICES).');
  });

  it('say nothing more when the costs are known and not all zero', () => {
    // Act
    const note = costPerDay()?.note?.(costs([['2026-03-31', 0.012, '0']]));

    // Assess
    expect(note).toBeUndefined();
  });
});

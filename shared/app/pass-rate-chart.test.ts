import { describe, expect, it } from 'vitest';
import { passRateChart } from './pass-rate-chart';

describe('passRateChart', () => {
  it("draws a bar per run and per unit test at each pass rate's height", () => {
    const svg = passRateChart([
      {
        label: '11-23 08:00',
        passRate: 0.5,
        conversations: 4,
        unitTests: [
          { name: 'Printer', passRate: 1, conversations: 2 },
          { name: 'Scanner', passRate: 0, conversations: 2 },
        ],
      },
      {
        label: '11-23 09:00',
        passRate: 1,
        conversations: 1,
        unitTests: [{ name: 'Printer', passRate: 1, conversations: 1 }],
      },
    ]).text;
    expect(svg.match(/class="bar overall"/g)).toHaveLength(2);
    expect(svg.match(/class="bar unit-test"/g)).toHaveLength(3);
    expect(svg).toContain('data-pass-rate="0.5" x="72" y="92" width="14" height="80"');
    expect(svg).toContain('<title>11-23 08:00, Scanner: 0% of 2 passed</title>');
  });

  it('escapes unit test names', () => {
    const svg = passRateChart([
      { label: 'run', passRate: 0, conversations: 1, unitTests: [{ name: '<script>', passRate: 0, conversations: 1 }] },
    ]).text;
    expect(svg).not.toContain('<script>');
  });
});

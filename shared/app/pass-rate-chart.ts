import { type Html, html } from './html';
import { palette } from './palette';

/** One simulation run's pass rates (0 to 1): all its conversations, and each unit test's. */
export interface RunPassRates {
  label: string;
  passRate: number;
  conversations: number;
  unitTests: { name: string; passRate: number; conversations: number }[];
}

const plotHeight = 160;
const barWidth = 16;
const groupGap = 28;
const left = 44;
const top = 12;
const bottom = 40;
const labelWidth = 72;

const percent = (rate: number): string => `${Math.round(rate * 100)}%`;

/**
 * Simulation runs' pass rates as a bar chart, server-rendered SVG: a group per run (oldest on
 * the left), its overall pass rate in the accent colour followed by each unit test's in the
 * simulation colour. Every bar has a title, and the page lists the same figures in a table.
 */
export const passRateChart = (runs: RunPassRates[]): Html => {
  // Wide enough for the run's label under its bars.
  const groupWidth = (run: RunPassRates) => Math.max(labelWidth, (1 + run.unitTests.length) * barWidth);
  const width = left + runs.reduce((sum, run) => sum + groupWidth(run) + groupGap, 0) + groupGap;
  const height = top + plotHeight + bottom;
  const y = (rate: number) => top + plotHeight * (1 - rate);
  const bar = (x: number, rate: number, colour: string, kind: string, title: string) =>
    html`<rect class="bar ${kind}" data-pass-rate="${rate}" x="${x}" y="${y(rate)}" width="${barWidth - 2}" height="${Math.max(1, plotHeight * rate)}" fill="${colour}"><title>${title}</title></rect>`;
  let x = left + groupGap;
  const groups = runs.map((run) => {
    const start = x;
    x += groupWidth(run) + groupGap;
    return html`<g class="run">${bar(start, run.passRate, palette.accent, 'overall', `${run.label}: ${percent(run.passRate)} of ${run.conversations} conversations passed`)}${run.unitTests.map(
      (unitTest, index) =>
        bar(
          start + (index + 1) * barWidth,
          unitTest.passRate,
          palette.simulated,
          'unit-test',
          `${run.label}, ${unitTest.name}: ${percent(unitTest.passRate)} of ${unitTest.conversations} passed`,
        ),
    )}<text x="${start}" y="${top + plotHeight + 16}" font-size="11" fill="${palette.muted}">${run.label}</text></g>`;
  });
  const grid = [0, 0.5, 1].map(
    (rate) =>
      html`<line x1="${left}" x2="${width}" y1="${y(rate)}" y2="${y(rate)}" stroke="${palette.border}" stroke-width="${rate === 0 ? 1 : 0.5}"/><text x="${left - 6}" y="${y(rate) + 4}" text-anchor="end" font-size="11" fill="${palette.muted}">${percent(rate)}</text>`,
  );
  return html`<svg class="pass-rates" role="img" aria-labelledby="pass-rates-title" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg"><title id="pass-rates-title">Pass rates of ${runs.length} simulation runs, overall and per unit test</title>${grid}${groups}</svg>`;
};

import { browserScript } from './browser-script';
import type { ChartSpec } from './lake-views';

/*
 * The few browser APIs the script uses, declared here: the project compiles against Node's
 * types, and the DOM library's globals would clash with them. `Chart` is Chart.js's global (its
 * browser build, loaded before this script).
 */
interface ChartFigure {
  querySelector(selector: 'canvas'): unknown;
  querySelector(selector: 'script.chart-data'): { textContent: string | null } | null;
}
declare const document: { querySelectorAll(selector: 'figure.chart'): Iterable<ChartFigure> };
declare const Chart: new (canvas: unknown, config: Record<string, unknown>) => unknown;

/**
 * Draws each of the page's charts (`figure.chart`) from the data the page embeds beside it
 * (`script.chart-data`, a `ChartSpec`) with Chart.js. Without the script the page keeps its
 * tables of the same numbers. Served as this function's source, like the chat's script, so it
 * must not reference anything outside itself.
 */
export function drawCharts(): void {
  for (const figure of document.querySelectorAll('figure.chart')) {
    const canvas = figure.querySelector('canvas');
    const data = figure.querySelector('script.chart-data')?.textContent;
    if (!canvas || !data) continue;
    const spec = JSON.parse(data) as ChartSpec;
    const valueAxis = spec.horizontal ? 'x' : 'y';
    new Chart(canvas, {
      type: spec.kind,
      data: {
        labels: spec.labels,
        datasets: spec.series.map((series) => ({
          label: series.label,
          data: series.values,
          backgroundColor: series.color,
          borderColor: series.color,
          borderWidth: 2,
          pointRadius: 3,
          spanGaps: true,
        })),
      },
      options: {
        indexAxis: spec.horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: { legend: { display: spec.series.length > 1 } },
        scales: { [valueAxis]: { beginAtZero: true, title: { display: true, text: spec.unit } } },
      },
    });
  }
}

/** The script as the browser receives it. */
export const chartScript = browserScript(drawCharts);

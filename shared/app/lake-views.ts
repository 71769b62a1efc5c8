import { sqlText } from '../analytics/lake-files';
import type { QueryResult } from '../analytics/sql-engine';
import type { Caller } from '../kernel/caller';
import type { PermissionName } from '../kernel/permissions';
import { isAtLeastAsPrivileged } from '../role/privilege';
import { Html, html } from './html';

/**
 * What the console's lake pages (the dashboard, the conversation search) share. They run fixed
 * SELECTs through the SQL query's engine, confined to the organization's folder of the lake as
 * `submit-sql-query` is, and show each query so an analyst can take it further. SQL reads every
 * record of the organization, so a figure is shown only to a caller who may read all the records
 * it is made of: who holds each of its permissions unconditionally (as a list of them all would
 * show them every one).
 */

/** Of `permissions`, those the caller does not hold on every record. */
export const missingEverywhere = (caller: Caller, permissions: readonly PermissionName[]): PermissionName[] =>
  permissions.filter(
    (permission_name) => !isAtLeastAsPrivileged(caller.grants, [{ action: 'Allow', permission_name, conditions: {} }]),
  );

/** One line saying which permissions a figure needs that the caller lacks. */
export const notPermittedLine = (missing: readonly PermissionName[], what: string): Html =>
  html`<p class="muted">${what} needs ${missing.join(' and ')} on every record, which your role does not hold.</p>`;

export { sqlText };

/** `YYYY-MM-DD` as a UTC timestamp literal (the day's start). */
export const dayStart = (day: string): string => `TIMESTAMPTZ ${sqlText(`${day} 00:00:00+00`)}`;

/** A value of a result row as a number (DuckDB answers BIGINT as text, DOUBLE as a number). */
export const numberOf = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value);

/** How a query's answer is shown as a table: its columns and rows, as the analyst's query would answer them. */
export const resultTable = (result: QueryResult, caption: string): Html =>
  html`<div class="table-wrap"><table><caption class="muted">${caption}</caption><thead><tr>${result.columns.map(
    (column) => html`<th scope="col">${column.name}</th>`,
  )}</tr></thead><tbody>${result.rows.map(
    (row) => html`<tr>${row.map((value) => html`<td>${value === null ? '' : String(value)}</td>`)}</tr>`,
  )}</tbody></table></div>`;

/** The query a figure came from, for an analyst to run with `submit-sql-query` or Athena. */
export const sqlDetails = (sql: string): Html =>
  html`<details><summary>The SQL query</summary><pre><code>${sql}</code></pre></details>`;

/** What a chart draws: its series over its labels (the client script hands it to the charting library). */
export interface ChartSpec {
  kind: 'bar' | 'line';
  /** Bars along the vertical axis (a ranking): long labels read better. */
  horizontal?: boolean;
  labels: string[];
  series: { label: string; values: (number | null)[]; color: string }[];
  /** What the values count: the value axis's title. */
  unit: string;
}

/** The chart's data as the page embeds it: JSON in a script the browser never runs. */
export const chartData = (spec: ChartSpec): Html =>
  new Html(
    `<script type="application/json" class="chart-data">${JSON.stringify(spec).replaceAll('<', '\\u003c')}</script>`,
  );

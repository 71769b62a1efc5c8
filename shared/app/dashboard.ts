import { runOrganizationQueries } from '../analytics/sql-engine';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { listServices } from '../service/services';
import { type DashboardChart, type DashboardFilters, dashboardCharts } from './dashboard-charts';
import { type Html, html } from './html';
import { chartData, missingEverywhere, notPermittedLine, resultTable, sqlDetails } from './lake-views';
import type { AppRequest } from './layout';
import type { ConsoleContent } from './page-parts';
import type { dashboardQuery } from './schemas';

/**
 * The console's dashboard: charts over a chosen period, version set and service, each drawn from
 * one SQL query over the organization's lake (`dashboard-charts.ts`) by the charting library the
 * app serves (Chart.js, `assets/chart.umd.min.js`, drawn by `assets/charts.js`), with its numbers
 * in a table and its query beside it.
 */

/** How many days the dashboard covers unless asked otherwise: the last 30, today included. */
const defaultDays = 30;

const isoDay = (date: Date): string => date.toISOString().slice(0, 10);

export const filtersOf = (query: typeof dashboardQuery._output, now = new Date()): DashboardFilters => {
  const to = query.to ?? isoDay(now);
  const from = query.from ?? isoDay(new Date(Date.parse(`${to}T00:00:00Z`) - (defaultDays - 1) * 86_400_000));
  return {
    from: from.localeCompare(to) <= 0 ? from : to,
    to,
    versionSet: query.version_set,
    serviceId: query.service_id,
    includeSimulated: query.simulated === 'on',
  };
};

/** The period, version set and service: a form the browser sends back as the page's query. */
export const filterForm = (
  action: string,
  filters: DashboardFilters,
  services: { id: string; name: string; versionSets: string[] }[],
): Html => {
  const versionSets = [...new Set(services.flatMap((service) => service.versionSets))].sort();
  const option = (value: string, label: string, selected: boolean) =>
    html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="${action}" class="filters" aria-label="What the charts cover">
<div><label for="from">From</label><input id="from" name="from" type="date" value="${filters.from}"></div>
<div><label for="to">To</label><input id="to" name="to" type="date" value="${filters.to}"></div>
<div><label for="version_set">Version set</label><select id="version_set" name="version_set">${option('', 'All', !filters.versionSet)}${versionSets.map((name) => option(name, name, filters.versionSet === name))}</select></div>
<div><label for="service_id">Service</label><select id="service_id" name="service_id">${option('', 'All', !filters.serviceId)}${services.map((service) => option(service.id, service.name, filters.serviceId === service.id))}</select></div>
<div><label for="simulated"><input id="simulated" name="simulated" type="checkbox" value="on"${filters.includeSimulated ? html` checked` : ''}> Include simulated conversations</label></div>
<div><button type="submit">Show</button></div>
</form>`;
};

/** The services the caller may list, with their version sets: what the filters offer. */
export const servicesToFilter = async (orgId: string, caller: Caller) => {
  const listed = await listServices(orgId, caller, { tags: [], sortBy: [], limit: 50, continuationToken: 0 }).catch(
    () => ({ services: [] }),
  );
  return listed.services.map((service) => ({
    id: service.id,
    name: service.name,
    versionSets: Object.keys(service.version_sets),
  }));
};

const figure = (chart: DashboardChart, content: Html): Html =>
  html`<figure class="chart card" id="${chart.id}" aria-labelledby="${chart.id}-title"><figcaption><h2 id="${chart.id}-title">${chart.title}</h2><p class="muted">${chart.description}</p></figcaption>${content}</figure>`;

const drawn = (chart: DashboardChart, outcome: Awaited<ReturnType<typeof runOrganizationQueries>>[number]): Html => {
  if (outcome instanceof Error)
    return html`<p class="error">The query failed: ${outcome.message}</p>${sqlDetails(chart.sql)}`;
  if (outcome.rows.length === 0)
    return html`<p class="muted">Nothing to chart in this period.</p>${sqlDetails(chart.sql)}`;
  const spec = chart.chart(outcome);
  const note = chart.note?.(outcome);
  return html`${note ? html`<p class="muted">${note}</p>` : ''}<div class="canvas"><canvas role="img" aria-label="${chart.title}: ${outcome.rows.length} ${spec.horizontal ? 'entries' : 'days'}, the numbers are in the table below"></canvas></div>${chartData(spec)}
<details><summary>The numbers</summary>${resultTable(outcome, chart.title)}</details>${sqlDetails(chart.sql)}`;
};

export const consoleDashboard = async (
  request: AppRequest,
  caller: Caller,
  query: typeof dashboardQuery._output,
): Promise<ConsoleContent> => {
  const filters = filtersOf(query);
  const charts = dashboardCharts(filters);
  const permitted = charts.filter((chart) => missingEverywhere(caller, chart.permissions).length === 0);
  const [services, outcomes] = await Promise.all([
    servicesToFilter(request.orgId, caller),
    permitted.length === 0
      ? []
      : runOrganizationQueries(
          request.orgId,
          permitted.map((chart) => chart.sql),
          { maxRows: 1000, timeoutMs: config.sqlQueryTimeoutMs },
        ),
  ]);
  const figures = charts.map((chart) => {
    const index = permitted.indexOf(chart);
    const outcome = outcomes[index];
    return figure(
      chart,
      outcome === undefined
        ? notPermittedLine(missingEverywhere(caller, chart.permissions), 'This chart')
        : drawn(chart, outcome),
    );
  });
  return {
    section: 'dashboard',
    heading: 'Dashboard',
    wide: true,
    content: html`${filterForm(`${request.base}/console/dashboard`, filters, services)}
<p class="muted">From the organization's lake, which a change reaches within seconds. Each chart is one SQL query, shown under it: run it yourself with <code>submit-sql-query</code>.</p>
<div class="charts">${figures}</div>
<script src="${request.base}/assets/chart.umd.min.js" defer></script><script src="${request.base}/assets/charts.js" defer></script>`,
  };
};

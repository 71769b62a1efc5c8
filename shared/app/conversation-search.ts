import { runOrganizationQuery } from '../analytics/sql-engine';
import { listConversations } from '../conversation/queries';
import type { ConversationInstance } from '../conversation/schemas';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import type { PermissionName } from '../kernel/permissions';
import { statusBadges } from './console-pages';
import { servicesToFilter } from './dashboard';
import { choice, field, pager } from './filter-form';
import { type Html, html } from './html';
import { dayStart, missingEverywhere, notPermittedLine, numberOf, sqlDetails, sqlText } from './lake-views';
import type { AppRequest } from './layout';
import { nameOf, serviceNames, userNames } from './names';
import { type ConsoleContent, when } from './page-parts';
import type { conversationSearchQuery } from './schemas';
import { dollars } from './turn-view';

/**
 * Conversations you can find (console): filtered by service, version set, period, status,
 * escalation, real or simulated, cost or first-token latency above a threshold, and words said,
 * through one SQL query over the organization's lake that picks the page's conversations; each
 * row is then read as `get-conversations` reads it for the caller, so the list shows what the API
 * would. A caller who may not read every conversation gets the API's own filters (service and
 * status) over the API's list instead.
 */

type SearchQuery = typeof conversationSearchQuery._output;

const pageSize = 25;

const listPermissions: PermissionName[] = ['Conversation:GetConversation'];
const textPermissions: PermissionName[] = ['Conversation:GetMessage'];
const figurePermissions: PermissionName[] = [
  'Conversation:GetInteractionInsights',
  'Organization:GetServiceHierarchicalStateMachine',
];

/** `text` as an ILIKE pattern matching it anywhere, its own wildcards taken literally. */
const containing = (text: string): string => sqlText(`%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`);

/** The SELECT picking a page of conversation ids (and their figures) for the filters the caller may use. */
export const searchSql = (
  query: SearchQuery,
  allowed: { text: boolean; figures: boolean },
  page: { offset: number; limit: number },
): string => {
  const conditions = [
    ...(query.from ? [`c.created_at >= ${dayStart(query.from)}`] : []),
    ...(query.to ? [`c.created_at < ${dayStart(query.to)} + INTERVAL 1 DAY`] : []),
    ...(query.service_id ? [`c.service_id = ${sqlText(query.service_id)}`] : []),
    ...(query.version_set ? [`c.version_set_name = ${sqlText(query.version_set)}`] : []),
    ...(query.status ? [query.status === 'finished' ? 'c.is_finished' : 'NOT c.is_finished'] : []),
    ...(query.escalated ? [query.escalated === 'yes' ? 'c.escalation_count > 0' : 'c.escalation_count = 0'] : []),
    ...((query.source ?? 'real') === 'all'
      ? []
      : [query.source === 'simulated' ? 'c.is_simulated' : 'NOT c.is_simulated']),
    ...(allowed.figures && query.min_cost_usd !== undefined ? [`t.cost_usd > ${query.min_cost_usd}`] : []),
    ...(allowed.figures && query.min_first_token_ms !== undefined
      ? [`t.slowest_first_token_ms > ${query.min_first_token_ms}`]
      : []),
    ...(allowed.text && query.text
      ? [
          `c.id IN (SELECT m.conversation_id FROM messages m WHERE m.message ILIKE ${containing(query.text)} ESCAPE '\\')`,
        ]
      : []),
  ];
  const figures = allowed.figures;
  return `${
    figures
      ? `WITH t AS (
  SELECT conversation_id, sum(cost_usd) AS cost_usd, max(first_token_ms) AS slowest_first_token_ms
  FROM interactions
  GROUP BY conversation_id
)
`
      : ''
  }SELECT c.id, c.version_set_name, c.is_simulated, c.escalation_count${figures ? ', t.cost_usd, t.slowest_first_token_ms' : ''}
FROM conversations c${figures ? '\nLEFT JOIN t ON t.conversation_id = c.id' : ''}${
    conditions.length > 0 ? `\nWHERE ${conditions.join('\n  AND ')}` : ''
  }
ORDER BY c.created_at DESC, c.id DESC
LIMIT ${page.limit + 1} OFFSET ${page.offset}`;
};

/** A row of the lake's answer: what the page shows beside the API's view of the conversation. */
interface Found {
  id: string;
  versionSet: string | null;
  simulated: boolean;
  escalations: number;
  costUsd: number | null;
  slowestFirstTokenMs: number | null;
}

const foundOf = (row: unknown[]): Found => ({
  id: String(row[0]),
  versionSet: row[1] === null ? null : String(row[1]),
  simulated: row[2] === true,
  escalations: numberOf(row[3]) ?? 0,
  costUsd: numberOf(row[4]),
  slowestFirstTokenMs: numberOf(row[5]),
});

const searchForm = (
  action: string,
  query: SearchQuery,
  services: { id: string; name: string; versionSets: string[] }[],
  allowed: { lake: boolean; text: boolean; figures: boolean },
): Html => {
  const versionSets = [...new Set(services.flatMap((service) => service.versionSets))].sort();
  return html`<form method="get" action="${action}" class="filters" aria-label="Find conversations">
${field('Service', choice('service_id', query.service_id, [['', 'All'], ...services.map((service): [string, string] => [service.id, service.name])]), 'service_id')}
${field(
  'Status',
  choice('status', query.status, [
    ['', 'Any'],
    ['open', 'Open'],
    ['finished', 'Finished'],
  ]),
  'status',
)}
${
  allowed.lake
    ? html`${field('Version set', choice('version_set', query.version_set, [['', 'All'], ...versionSets.map((name): [string, string] => [name, name])]), 'version_set')}
${field('From', html`<input id="from" name="from" type="date" value="${query.from ?? ''}">`, 'from')}
${field('To', html`<input id="to" name="to" type="date" value="${query.to ?? ''}">`, 'to')}
${field(
  'Escalated',
  choice('escalated', query.escalated, [
    ['', 'Either'],
    ['yes', 'Escalated'],
    ['no', 'Never escalated'],
  ]),
  'escalated',
)}
${field(
  'Real or simulated',
  choice('source', query.source, [
    ['real', 'Real'],
    ['simulated', 'Simulated'],
    ['all', 'Both'],
  ]),
  'source',
)}
${
  allowed.figures
    ? html`${field('Cost above (US dollars)', html`<input id="min_cost_usd" name="min_cost_usd" type="number" min="0" step="any" value="${query.min_cost_usd ?? ''}">`, 'min_cost_usd')}
${field('A first token slower than (ms)', html`<input id="min_first_token_ms" name="min_first_token_ms" type="number" min="0" step="1" value="${query.min_first_token_ms ?? ''}">`, 'min_first_token_ms')}`
    : ''
}
${allowed.text ? field('Words said', html`<input id="text" name="text" type="search" maxlength="200" value="${query.text ?? ''}">`, 'text') : ''}`
    : ''
}
<div><button type="submit">Find</button></div>
</form>`;
};

const rowsTable = (
  base: string,
  conversations: ConversationInstance[],
  found: Map<string, Found>,
  names: { users: ReadonlyMap<string, string>; services: ReadonlyMap<string, string> },
  figures: boolean,
): Html =>
  html`<div class="table-wrap"><table><thead><tr><th scope="col">Started</th><th scope="col">Service</th><th scope="col">User</th><th scope="col">Version set</th><th scope="col" class="number">Messages</th>${
    figures ? html`<th scope="col" class="number">Cost</th><th scope="col" class="number">Slowest first token</th>` : ''
  }<th scope="col">Status</th></tr></thead><tbody>${conversations.map((conversation) => {
    const figuresOf = found.get(conversation.id);
    return html`<tr data-conversation="${conversation.id}"><td class="when"><a href="${base}/console/conversations/${conversation.id}">${when(conversation.created_at)}</a></td><td>${nameOf(names.services, conversation.service_id)}</td><td>${nameOf(names.users, conversation.user_id)}</td><td>${conversation.version_set_info?.name ?? figuresOf?.versionSet ?? ''}</td><td class="number">${conversation.num_messages}</td>${
      figures
        ? html`<td class="number">${figuresOf?.costUsd === null || figuresOf?.costUsd === undefined ? '' : dollars(figuresOf.costUsd)}</td><td class="number">${
            figuresOf?.slowestFirstTokenMs === null || figuresOf?.slowestFirstTokenMs === undefined
              ? ''
              : `${figuresOf.slowestFirstTokenMs.toLocaleString('en-US')} ms`
          }</td>`
        : ''
    }<td>${statusBadges(conversation, figuresOf?.simulated ?? false)}${
      figuresOf && figuresOf.escalations > 0 && !conversation.operator_control?.escalation
        ? html` <span class="badge escalated">escalated ${figuresOf.escalations}×</span>`
        : ''
    }</td></tr>`;
  })}</tbody></table></div>`;

export const consoleConversationSearch = async (
  request: AppRequest,
  caller: Caller,
  query: SearchQuery,
): Promise<ConsoleContent> => {
  const { orgId, base } = request;
  const action = `${base}/console/conversations`;
  const missing = {
    lake: missingEverywhere(caller, listPermissions),
    text: missingEverywhere(caller, textPermissions),
    figures: missingEverywhere(caller, figurePermissions),
  };
  const allowed = {
    lake: missing.lake.length === 0,
    text: missing.lake.length === 0 && missing.text.length === 0,
    figures: missing.lake.length === 0 && missing.figures.length === 0,
  };
  const limit = query.limit ?? pageSize;
  const offset = query.continuation_token ?? 0;
  const services = await servicesToFilter(orgId, caller);

  let conversations: ConversationInstance[];
  let found = new Map<string, Found>();
  let next: number | null;
  let sql: string | undefined;
  if (allowed.lake) {
    sql = searchSql(query, allowed, { offset, limit });
    const answer = await runOrganizationQuery(orgId, sql, { maxRows: limit + 1, timeoutMs: config.sqlQueryTimeoutMs });
    const rows = answer.rows.slice(0, limit).map(foundOf);
    found = new Map(rows.map((row) => [row.id, row]));
    // Each row as the API shows it to the caller (one hidden from them is left out).
    const listed =
      rows.length === 0
        ? []
        : (
            await listConversations(orgId, caller, {
              ids: rows.map((row) => row.id),
              tags: [],
              sortBy: [],
              limit: rows.length,
              continuationToken: 0,
            })
          ).conversations;
    const byId = new Map(listed.map((conversation) => [conversation.id, conversation]));
    conversations = rows.flatMap((row) => byId.get(row.id) ?? []);
    next = answer.rows.length > limit ? offset + limit : null;
  } else {
    const listed = await listConversations(orgId, caller, {
      serviceIds: query.service_id ? [query.service_id] : undefined,
      isFinished: query.status === undefined ? undefined : query.status === 'finished',
      tags: [],
      sortBy: [],
      limit,
      continuationToken: offset,
    });
    conversations = listed.conversations;
    next = listed.has_more ? listed.continuation_token : null;
  }
  const [users, serviceNamesOf] = await Promise.all([
    userNames(
      orgId,
      caller,
      conversations.map((conversation) => conversation.user_id),
    ),
    serviceNames(
      orgId,
      caller,
      conversations.map((conversation) => conversation.service_id),
    ),
  ]);
  const notes = [
    allowed.lake
      ? ''
      : notPermittedLine(missing.lake, 'Filtering by version set, period, escalation, cost, latency or words'),
    allowed.lake && !allowed.text ? notPermittedLine(missing.text, 'Finding the words said') : '',
    allowed.lake && !allowed.figures ? notPermittedLine(missing.figures, 'Filtering by cost and latency') : '',
  ];
  return {
    section: 'conversations',
    heading: 'Conversations',
    wide: true,
    content: html`${searchForm(action, query, services, allowed)}${notes}
${
  conversations.length === 0
    ? html`<p role="status">No conversation matches.</p>`
    : html`<p role="status" class="muted">${conversations.length} conversation${conversations.length === 1 ? '' : 's'} on this page${allowed.lake ? ", found in the organization's lake (a change reaches it within seconds)" : ''}.</p>${rowsTable(base, conversations, found, { users, services: serviceNamesOf }, allowed.figures)}`
}
${pager(action, query, offset, next)}
${sql ? sqlDetails(sql) : ''}`,
  };
};

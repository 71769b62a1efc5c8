import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ScriptedConversations,
  scriptConversations,
  untilTheLakeHolds,
} from '../../browser/scripted-conversations';
import { type AppVisitor, signInToApp } from '../support/app-visitor';
import { api, apiUrl } from '../support/client';
import { createOrganization, createUserSession, type Session } from '../support/identity';

/**
 * The console's pages over the organization's lake (endpoint group app-analytics): the dashboard
 * and the conversation search, on conversations a script held (text with a tool call, voice, an
 * escalation an operator took over, two open in the operators' queue), once the lake has them.
 */
let orgId: string;
let admin: Session;
let scripted: ScriptedConversations;
let manager: Session & { email: string };

/** A signed-in visitor for `email`: each user signs in once (5 e-mail sign-ins a minute per address). */
const sessions = new Map<string, Promise<AppVisitor>>();
const visitorOf = async (email: string): Promise<AppVisitor> => {
  if (!sessions.has(email)) sessions.set(email, signInToApp(orgId, email));
  return sessions.get(email) as Promise<AppVisitor>;
};

/** A user of a new role whose frontend_view is admin, holding only `grants`. */
const adminViewUser = async (grants: { permission_name: string; conditions?: Record<string, unknown> }[]) => {
  const roleName = `Lake-${Date.now()}-${Math.random().toString(16).slice(2, 6)}`;
  const role = await api(`/v1/${orgId}/role/`, {
    token: admin.token,
    body: {
      role_name: roleName,
      description: 'A console role of the lake tests.',
      permission_grants: grants.map((grant) => ({ action: 'Allow', conditions: {}, ...grant })),
      frontend_view: 'admin',
      is_base_role: false,
      inherited_from: null,
    },
  });
  expect(role.status, role.text).toBe(201);
  return createUserSession(admin, roleName);
};

/** The numbers table of a chart (figure `id`), as text. */
const figureOf = (page: string, id: string): string =>
  new RegExp(`<figure class="chart card" id="${id}".*?</figure>`, 's').exec(page)?.[0] ?? '';

const rowsOf = (page: string): string[] =>
  [...page.matchAll(/<tr data-conversation="([0-9a-f]{24})">/g)].map((match) => match[1] as string);

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization());
  scripted = await scriptConversations(admin);
  manager = await createUserSession(admin, 'DefaultAdministratorRole', { first_name: 'Mia', last_name: 'Manager' });
  await untilTheLakeHolds(orgId, admin);
}, 240_000);

describe('get-app-dashboard', () => {
  it('charts each figure from one SQL query over the lake, with its numbers and its query on the page', async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/dashboard');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('aria-current="page">Dashboard</a>');
    for (const id of [
      'conversations-per-day',
      'escalation-rate',
      'first-token',
      'first-audio',
      'cost-per-day',
      'cost-per-conversation',
      'metric-pass-rates',
      'busiest-states',
      'slowest-tools',
    ]) {
      const figure = figureOf(page.text, id);
      expect(figure, id).toContain('<canvas role="img"');
      expect(figure, id).toContain('<script type="application/json" class="chart-data">');
      expect(figure, id).toMatch(/The SQL query<\/summary><pre><code>(SELECT|WITH) /);
    }
    const today = new Date().toISOString().slice(0, 10);
    expect(figureOf(page.text, 'conversations-per-day')).toContain(`<tr><td>${today}</td><td>5</td><td>3</td></tr>`);
    expect(figureOf(page.text, 'slowest-tools')).toContain(`<td>${scripted.toolName}</td>`);
    expect(figureOf(page.text, 'busiest-states')).toContain('<td>greet</td>');
    expect(figureOf(page.text, 'metric-pass-rates')).toContain(`<td>${scripted.metricName} · release</td>`);
    expect(page.text).toContain(`src="/app/${orgId}/assets/chart.umd.min.js"`);
  });

  it('says in one line which charts a role that may not read every conversation’s insights does not get', async () => {
    // Prepare
    const limited = await adminViewUser([{ permission_name: 'Conversation:GetConversation' }]);
    const visitor = await visitorOf(limited.email);

    // Act
    const page = await visitor.get('/console/dashboard');

    // Assess
    expect(page.status).toBe(200);
    expect(figureOf(page.text, 'conversations-per-day')).toContain('<canvas');
    const latency = figureOf(page.text, 'first-token');
    expect(latency).not.toContain('<canvas');
    expect(latency).toContain('This chart needs Conversation:GetInteractionInsights');
  });

  it('charts nothing for a period without conversations, and says so', async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/dashboard?from=2020-01-01&to=2020-01-31&version_set=&service_id=');

    // Assess
    expect(page.status).toBe(200);
    expect(figureOf(page.text, 'conversations-per-day')).toContain('Nothing to chart in this period.');
    expect(page.text).toContain('value="2020-01-01"');
  });

  it("refuses a role whose frontend_view is 'client' with 403", async () => {
    // Act
    const page = await (await visitorOf(scripted.user.email)).get('/console/dashboard');

    // Assess
    expect(page.status).toBe(403);
  });
});

describe('get-app-asset', () => {
  it('serves the charting library and the script that draws with it, cached', async () => {
    // Act
    const [library, script] = await Promise.all(
      ['chart.umd.min.js', 'charts.js'].map((asset) => fetch(apiUrl(`/app/${orgId}/assets/${asset}`))),
    );

    // Assess
    expect(library?.status).toBe(200);
    expect(library?.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(library?.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(await library?.text()).toContain('Chart.js v4');
    // What the script does, not its function's name (the bundle minifies names).
    const drawing = await script?.text();
    expect(drawing).toContain('figure.chart');
    expect(drawing).toContain('new Chart(');
  });
});

describe('get-app-conversation-search', () => {
  it('finds conversations by the words said, each row opening its page with its user by name', async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const page = await visitor.get('/console/conversations?text=goodbye');

    // Assess
    expect(page.status).toBe(200);
    expect(rowsOf(page.text)).toEqual([scripted.text]);
    expect(page.text).toContain(`href="/app/${orgId}/console/conversations/${scripted.text}"`);
    expect(page.text).toContain('<td>Ada Lovelace</td>');
    expect(page.text).toContain('ILIKE &#39;%goodbye%&#39;');
  });

  it('finds the escalated, the finished and the slow ones, and no simulated one among real use', async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const escalated = await visitor.get('/console/conversations?escalated=yes');
    const all = await visitor.get('/console/conversations?status=finished&source=all');
    const simulated = await visitor.get('/console/conversations?source=simulated');
    const slow = await visitor.get('/console/conversations?min_first_token_ms=3600000');

    // Assess
    expect(rowsOf(escalated.text).sort()).toEqual([scripted.escalated, scripted.awaiting, scripted.held].sort());
    expect(rowsOf(all.text).sort()).toEqual([scripted.text, scripted.voice, scripted.escalated].sort());
    expect(simulated.text).toContain('No conversation matches.');
    expect(rowsOf(slow.text)).toEqual([]);
  });

  it('pages as the API does: a page of the limit, then the next from its continuation token', async () => {
    // Prepare
    const visitor = await visitorOf(manager.email);

    // Act
    const first = await visitor.get('/console/conversations?limit=3');
    const next = /href="([^"]*continuation_token=3[^"]*)">Next page/.exec(first.text)?.[1]?.replaceAll('&amp;', '&');
    const second = await visitor.get((next ?? '').slice(`/app/${orgId}`.length));

    // Assess
    expect(rowsOf(first.text)).toHaveLength(3);
    expect(rowsOf(second.text)).toHaveLength(2);
    expect(new Set([...rowsOf(first.text), ...rowsOf(second.text)]).size).toBe(5);
    expect(second.text).not.toContain('Next page');
  });

  it("gives a role that may read only some conversations the API's list and filters, saying why", async () => {
    // Prepare: conversations of one service only.
    const limited = await adminViewUser([
      {
        permission_name: 'Conversation:GetConversation',
        conditions: { service_id: { type: 'Equals', value: scripted.serviceId } },
      },
    ]);
    const visitor = await visitorOf(limited.email);

    // Act
    const page = await visitor.get('/console/conversations?text=goodbye');

    // Assess
    expect(page.status).toBe(200);
    expect(page.text).toContain('needs Conversation:GetConversation on every record');
    expect(page.text).not.toContain('The SQL query');
    expect(rowsOf(page.text).sort()).toEqual([scripted.voice, scripted.escalated, scripted.awaiting].sort());
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCallStateMachineVersion } from '#shared/conversation/fixtures';
import { api, eventually } from '../support/client';
import { createService, interact, startConversation } from '../support/conversations';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { startTestMcpServer, type TestMcpServer } from '../support/mcp-server';
import { storedItemsStartingWith } from '../support/table';
import { invoke, toolsPath } from '../support/tools';

/**
 * Agents call MCP servers' tools: a server registered with a secret header (an MCP server built
 * with the official SDK, on loopback, which `npm start` allows) lists tools that become tools of
 * the organization, which state machines call like any other.
 */
let owner: Session;
let orgId: string;
let desk: TestMcpServer;

/** A fresh administrator per test: tool operations are rate limited per user. */
const admin = () => createUserSession(owner, 'DefaultAdministratorRole');
const serversPath = () => `${toolsPath(orgId)}mcp_server/`;

const register = async (
  session: Session,
  name: string,
  headers: Record<string, string> = { 'X-Api-Key': desk.apiKey },
  server: TestMcpServer = desk,
) => api(serversPath(), { token: session.token, body: { name, url: server.url, headers } });

const toolNamed = (report: { tools: { name: string; tool_id: string }[] }, name: string): string =>
  report.tools.find((tool) => tool.name === name)?.tool_id as string;

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
  desk = await startTestMcpServer();
});

afterAll(async () => {
  await desk.close();
});

describe('create-mcp-server', () => {
  it('makes each listed tool a tool of the organization at 1.0.0, and never answers the header values', async () => {
    // Prepare
    const session = await admin();

    // Act
    const created = await register(session, 'orders');
    const lookupId = toolNamed(created.body, 'orders__lookup_order');
    const tools = await api(toolsPath(orgId), { token: session.token, query: { id: lookupId } });
    const versions = await api(`${toolsPath(orgId)}${lookupId}/version`, { token: session.token });
    const servers = await api(serversPath(), { token: session.token });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.tools.map((tool: { name: string }) => tool.name).sort()).toEqual([
      'orders__lookup_order',
      'orders__quarterly_report',
      'orders__refund_order',
    ]);
    expect(tools.body.tools[0]).toMatchObject({
      name: 'orders__lookup_order',
      description: 'Finds an order by its number and tells where it is.',
      mcp_server_id: created.body.id,
      mcp_tool_name: 'lookup_order',
      envvars: [],
      secret_envvars: [],
    });
    expect(versions.body.tool_versions).toEqual([
      expect.objectContaining({
        version: { major: 1, minor: 0, patch: 0 },
        status: 'deployed',
        tool_repo: 'team',
        input_schema: expect.objectContaining({ properties: { order_id: expect.any(Object) }, required: ['order_id'] }),
      }),
    ]);
    const listed = servers.body.mcp_servers.find((server: { id: string }) => server.id === created.body.id);
    expect(listed).toMatchObject({ name: 'orders', url: desk.url, header_names: ['X-Api-Key'] });
    for (const answer of [created, tools, versions, servers]) expect(answer.text).not.toContain(desk.apiKey);
    const stored = (await storedItemsStartingWith(`ORG#${orgId}#MCP_SERVER`)).find(
      (item) => item.id === created.body.id,
    );
    expect(stored?.headers).toEqual({ 'X-Api-Key': expect.stringMatching(/^sealed:v1:/) });
    expect(JSON.stringify(stored)).not.toContain(desk.apiKey);
  });

  it('refuses a server it cannot list with 400, keeping nothing, and a taken name with 409', async () => {
    // Prepare
    const session = await admin();
    await register(session, 'taken');

    // Act
    const unreachable = await api(serversPath(), {
      token: session.token,
      body: { name: 'nowhere', url: 'http://127.0.0.1:9/mcp', headers: {} },
    });
    const notMcp = await api(serversPath(), {
      token: session.token,
      body: {
        name: 'not_mcp',
        url: `${desk.url.replace('/mcp', '')}/nothing-here`,
        headers: { Authorization: 'Bearer hush-42' },
      },
    });
    const taken = await register(session, 'taken');
    const transportHeader = await register(session, 'bad_header', { 'Mcp-Session-Id': 'x' });
    const servers = await api(serversPath(), { token: session.token });

    // Assess
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.detail).toContain('could not be reached');
    expect(notMcp.status).toBe(400);
    expect(notMcp.text).not.toContain('hush-42');
    expect(taken.status).toBe(409);
    expect(transportHeader.status).toBe(422);
    expect(servers.body.mcp_servers.map((server: { name: string }) => server.name)).not.toContain('nowhere');
  });
});

describe('get-mcp-servers', () => {
  it('refuses a user without the permission with 403', async () => {
    const user = await createUserSession(owner, 'DefaultUserRole');
    const listed = await api(serversPath(), { token: user.token });
    expect(listed.status).toBe(403);
  });
});

describe('MCP tools in conversations', () => {
  it('calls the server’s tool from a tool-call state with the stored header, and records a listed, searchable invocation', async () => {
    // Prepare
    const session = await admin();
    const created = await register(session, 'desk');
    const toolId = toolNamed(created.body, 'desk__lookup_order');
    const { serviceId } = await createService(session, toolCallStateMachineVersion(toolId));
    const { conversationId } = await startConversation(session, { service_id: serviceId });
    const callsBefore = desk.calls.length;

    // Act
    // The farewell moves the sample machine on to its tool-call state; the rule-based model fills the order number with the whole message.
    const turn = await interact(session, conversationId, 'I said goodbye, order A-1042');

    // Assess
    const ended = turn.events
      .filter((event) => event.type === 'current-agent-action')
      .map((event) => event.action as Record<string, unknown>)
      .find((action) => action.type === 'tool-call-ended');
    expect(ended).toMatchObject({
      tool_id: toolId,
      tool_version: '1.0.0',
      result: 'Order I said goodbye, order A-1042 has shipped.',
    });
    expect(desk.calls.slice(callsBefore)).toEqual([
      expect.objectContaining({ tool: 'lookup_order', arguments: { order_id: 'I said goodbye, order A-1042' } }),
    ]);
    expect(desk.calls.at(-1)?.headers['x-api-key']).toBe(desk.apiKey);
    const invocations = await api(`/v1/${orgId}/tool/invocation`, {
      token: session.token,
      query: { conversation_id: conversationId },
    });
    expect(invocations.body.tool_invocations).toEqual([
      expect.objectContaining({
        tool_id: toolId,
        tool_version: { major: 1, minor: 0, patch: 0 },
        invocation_status: { succeeded: true, output: 'Order I said goodbye, order A-1042 has shipped.' },
        invocation_source: expect.objectContaining({
          type: 'regular-conversation',
          conversation_id: conversationId,
          invocation_metadata: expect.objectContaining({ type: 'tool-call-state', state_name: 'triage' }),
        }),
      }),
    ]);
    const found = await api(`/v1/${orgId}/tool/invocation/search`, {
      token: session.token,
      query: { query: 'A-1042 has shipped', tool_id: toolId },
    });
    expect(found.body.tool_invocations).toHaveLength(1);
    // The lake is fed by the table's stream; the SQL query allows 6 calls a minute.
    const lake = await eventually(
      async () => {
        const answer = await api(`/v1/${orgId}/admin/sql_query`, {
          token: owner.token,
          body: {
            sql_query: `SELECT tool_id, tool_version, succeeded FROM tool_invocations WHERE conversation_id = '${conversationId}'`,
          },
        });
        return answer.status === 200 && answer.body.result.length > 0 ? answer.body.result : undefined;
      },
      60_000,
      10_000,
    );
    expect(lake).toEqual([[toolId, '1.0.0', true]]);
  });

  it('fails the one invocation of an error result, a garbage answer or an answer past the bound, and the next call still works', async () => {
    // Prepare
    const session = await admin();
    const created = await register(session, 'faulty');
    const [lookupId, refundId, reportId] = ['lookup_order', 'refund_order', 'quarterly_report'].map((name) =>
      toolNamed(created.body, `faulty__${name}`),
    );

    // Act
    const refused = await invoke(session, refundId as string, '1.0.0', [{ order_id: 'A-1' }]);
    const tooLarge = await invoke(session, reportId as string, '1.0.0', [{}]);
    desk.answerGarbage = true;
    const garbage = await invoke(session, lookupId as string, '1.0.0', [{ order_id: 'A-2' }]).finally(() => {
      desk.answerGarbage = false;
    });
    const healthy = await invoke(session, lookupId as string, '1.0.0', [{ order_id: 'A-3' }]);

    // Assess
    expect(refused.body.invocation_results).toEqual([
      expect.objectContaining({
        succeeded: false,
        exception_type: 'McpToolError',
        exception_message: 'Refunds need a person.',
      }),
    ]);
    expect(tooLarge.body.invocation_results[0]).toMatchObject({
      succeeded: false,
      exception_message: expect.stringContaining('larger than'),
    });
    expect(garbage.body.invocation_results[0]).toMatchObject({ succeeded: false, exception_type: 'McpServerError' });
    expect(healthy.body.invocation_results[0]).toMatchObject({ succeeded: true, output: 'Order A-3 has shipped.' });
  });
});

describe('refresh-mcp-server', () => {
  it('gives a changed input schema the next major version and deprecates a tool no longer listed', async () => {
    // Prepare
    const session = await admin();
    const revisable = await startTestMcpServer();
    const created = await register(session, 'revised', { 'X-Api-Key': revisable.apiKey }, revisable);
    const lookupId = toolNamed(created.body, 'revised__lookup_order');
    const refundId = toolNamed(created.body, 'revised__refund_order');

    // Act
    revisable.revise();
    const refreshed = await api(`${serversPath()}${created.body.id}/refresh`, { token: session.token, method: 'POST' });
    const again = await api(`${serversPath()}${created.body.id}/refresh`, { token: session.token, method: 'POST' });
    await revisable.close();
    const versions = await api(`${toolsPath(orgId)}${lookupId}/version`, { token: session.token });
    const refund = await api(toolsPath(orgId), { token: session.token, query: { id: refundId } });

    // Assess
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.tools).toContainEqual(expect.objectContaining({ tool_id: lookupId, version: '2.0.0' }));
    expect(refreshed.body.retired).toEqual([{ tool_id: refundId, mcp_tool_name: 'refund_order' }]);
    expect(again.body.tools).toContainEqual(expect.objectContaining({ tool_id: lookupId, version: '2.0.0' }));
    expect(versions.body.tool_versions.map((version: { version: { major: number } }) => version.version.major)).toEqual(
      [1, 2],
    );
    expect(refund.body.tools[0].deprecated).toBe(true);
  });
});

describe('delete-mcp-server', () => {
  it('deprecates the server’s tools and erases it; its tools refuse the classic changes meanwhile', async () => {
    // Prepare
    const session = await admin();
    const created = await register(session, 'gone');
    const lookupId = toolNamed(created.body, 'gone__lookup_order');
    const publish = await api(`${toolsPath(orgId)}${lookupId}/version`, {
      token: session.token,
      body: { project_path: 'samples/greeting', bump_type: 'major' },
    });

    // Act
    const deleted = await api(`${serversPath()}${created.body.id}`, { token: session.token, method: 'DELETE' });
    const refreshed = await api(`${serversPath()}${created.body.id}/refresh`, { token: session.token, method: 'POST' });
    const tools = await api(toolsPath(orgId), { token: session.token, query: { id: lookupId } });

    // Assess
    expect(publish.status).toBe(400);
    expect(deleted.status).toBe(204);
    expect(refreshed.status).toBe(404);
    expect(tools.body.tools[0].deprecated).toBe(true);
  });
});

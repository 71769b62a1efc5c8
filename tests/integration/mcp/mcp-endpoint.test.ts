import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { api, apiUrl } from '../support/client';
import { createService } from '../support/conversations';
import { createGrantedSession } from '../support/fixtures';
import { createOrganization, createUserSession, type Session } from '../support/identity';
import { createUnitTest, createUnitTestSet } from '../support/simulation';

/**
 * The platform as an MCP server, driven by the official SDK's client over Streamable HTTP: every
 * method it answers (initialize, ping, tools/list, tools/call, notifications), each tool, and the
 * refusals (no token, a missing permission, unknown tools, bad arguments, malformed JSON-RPC, a
 * body too large).
 */
let owner: Session;
let orgId: string;
const clients: Client[] = [];

const endpoint = () => new URL(apiUrl(`/v1/${orgId}/mcp`));

/** An SDK client connected (initialized) as `session`. */
const connect = async (session: Session): Promise<Client> => {
  const client = new Client({ name: 'platform-tests', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(endpoint(), {
      requestInit: { headers: { authorization: `Bearer ${session.token}` } },
    }),
  );
  clients.push(client);
  return client;
};

const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  onprogress?: (message: string) => void,
) =>
  (await client.callTool({ name, arguments: args }, undefined, {
    onprogress: onprogress ? (progress) => onprogress(progress.message ?? '') : undefined,
    timeout: 60_000,
  })) as CallToolResult;

const textOf = (result: CallToolResult): string =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

/** A raw POST of the endpoint, as a client without the SDK sends it. */
const post = (body: string, headers: Record<string, string> = {}) =>
  fetch(endpoint(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });

beforeAll(async () => {
  ({ orgId, session: owner } = await createOrganization());
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

describe('send-mcp-message', () => {
  it('answers 401 without a token, and initializes with one, declaring tools and answering ping', async () => {
    // Act
    const anonymous = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    );
    const client = await connect(owner);
    const pong = await client.ping();

    // Assess
    expect(anonymous.status).toBe(401);
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getServerVersion()?.name).toBe('classic-agent-platform');
    expect(client.getInstructions()).toContain('start_conversation');
    expect(pong).toEqual({});
  });

  it('lists its tools with input schemas, sql_query only to callers allowed it', async () => {
    // Prepare
    const administrator = await createUserSession(owner, 'DefaultAdministratorRole');

    // Act
    const forOwner = (await (await connect(owner)).listTools()).tools;
    const forAdministrator = (await (await connect(administrator)).listTools()).tools;

    // Assess
    expect(forOwner.map((tool) => tool.name)).toEqual([
      'list_services',
      'list_agents',
      'start_conversation',
      'send_message',
      'get_conversation_messages',
      'finish_conversation',
      'search_conversations',
      'run_simulation',
      'get_simulation_run',
      'sql_query',
    ]);
    expect(forAdministrator.map((tool) => tool.name)).not.toContain('sql_query');
    const sendMessage = forOwner.find((tool) => tool.name === 'send_message');
    expect(sendMessage?.inputSchema).toMatchObject({
      type: 'object',
      properties: { conversation_id: { type: 'string', pattern: '^[a-f0-9]{24}$' }, message: { type: 'string' } },
      required: ['conversation_id', 'message'],
    });
    expect(sendMessage?.annotations?.readOnlyHint).toBe(false);
  });

  it('holds a conversation: the opening, a reply sent ahead as progress, the stored messages and the finish', async () => {
    // Prepare
    const administrator = await createUserSession(owner, 'DefaultAdministratorRole');
    const { serviceId } = await createService(administrator);
    const client = await connect(administrator);
    const pieces: string[] = [];

    // Act
    const services = await call(client, 'list_services', { limit: 50 });
    const started = await call(client, 'start_conversation', { service_id: serviceId });
    const conversationId = (started.structuredContent as { conversation_id: string }).conversation_id;
    const replied = await call(
      client,
      'send_message',
      { conversation_id: conversationId, message: 'My printer jams.' },
      (piece) => pieces.push(piece),
    );
    const messages = await call(client, 'get_conversation_messages', { conversation_id: conversationId });
    const stored = await api(`/v1/${orgId}/conversation/${conversationId}/messages/`, {
      token: administrator.token,
      query: { sort_by: '+created_at' },
    });
    const finished = await call(client, 'finish_conversation', { conversation_id: conversationId });
    const found = await call(client, 'search_conversations', { service_id: serviceId, is_finished: true });

    // Assess
    expect(JSON.parse(textOf(services)).services.map((service: { id: string }) => service.id)).toContain(serviceId);
    expect(started.isError).toBeFalsy();
    expect(textOf(started)).not.toBe('');
    const reply = replied.structuredContent as {
      message: string;
      interaction_id: string;
      timings: { total_ms: number };
    };
    expect(textOf(replied)).toBe(reply.message);
    expect(reply.message).toContain('My printer jams');
    expect(reply.interaction_id).toMatch(/^[a-f0-9]{24}$/);
    expect(reply.timings.total_ms).toBeGreaterThanOrEqual(0);
    expect(pieces.join('')).toBe(reply.message);
    const storedTexts = stored.body.messages.map((message: { message: string }) => message.message);
    expect(storedTexts).toEqual([textOf(started), 'My printer jams.', reply.message]);
    expect((messages.structuredContent as { messages: unknown[] }).messages).toHaveLength(3);
    expect(finished.structuredContent).toEqual({ conversation_id: conversationId, is_finished: true });
    expect((found.structuredContent as { conversations: { id: string }[] }).conversations.map((c) => c.id)).toEqual([
      conversationId,
    ]);
  });

  it('gives a role without conversations an error result for them, and does nothing', async () => {
    // Prepare
    const administrator = await createUserSession(owner, 'DefaultAdministratorRole');
    const { serviceId } = await createService(administrator);
    const reader = await createGrantedSession(owner, [{ permission_name: 'Service:GetService', conditions: {} }]);
    const client = await connect(reader);

    // Act
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    const refused = await call(client, 'start_conversation', { service_id: serviceId });
    const conversations = await api(`/v1/${orgId}/conversation/`, {
      token: owner.token,
      query: { user_id: reader.userId },
    });

    // Assess
    expect(listed).toEqual(['list_services']);
    expect(refused).toMatchObject({ isError: true });
    expect(textOf(refused)).toBe('Missing required permission Conversation:CreateConversation.');
    expect(conversations.body.conversations).toEqual([]);
  });

  it('runs a simulation, answers its run and the organization’s data in SQL', async () => {
    // Prepare
    const administrator = await createUserSession(owner, 'DefaultAdministratorRole');
    const { unitTestId } = await createUnitTest(administrator);
    const setId = await createUnitTestSet(administrator, [unitTestId], {
      unit_test_runs: [{ unit_test_id: unitTestId, run_count: 1 }],
    });
    const client = await connect(owner);

    // Act
    const agents = await call(client, 'list_agents');
    const started = await call(client, 'run_simulation', { simulation_unit_test_set_id: setId });
    const runId = (started.structuredContent as { simulation_unit_test_set_run_id: string })
      .simulation_unit_test_set_run_id;
    const run = await call(client, 'get_simulation_run', { simulation_unit_test_set_run_id: runId });
    const rows = await call(client, 'sql_query', { sql_query: 'SELECT 40 + 2 AS answer' });

    // Assess
    expect((agents.structuredContent as { agents: unknown[] }).agents.length).toBeGreaterThan(0);
    expect(run.structuredContent).toMatchObject({ id: runId, simulation_unit_test_set_id: setId });
    expect(rows.structuredContent).toMatchObject({ result: [[42]], columns: [{ name: 'answer' }] });
  });

  it('answers an unknown tool and arguments its schema refuses with error results', async () => {
    // Prepare
    const client = await connect(owner);

    // Act
    const unknown = await call(client, 'delete_everything');
    const malformed = await call(client, 'send_message', { conversation_id: 'nope' });

    // Assess
    expect(unknown).toMatchObject({ isError: true });
    expect(textOf(unknown)).toContain('Unknown tool delete_everything');
    expect(malformed).toMatchObject({ isError: true });
    expect(textOf(malformed)).toContain('conversation_id');
    expect(textOf(malformed)).toContain('message');
  });

  it('answers malformed JSON-RPC with a JSON-RPC error, a notification with 202, GET with 405 and a body over 1 MiB with 413', async () => {
    // Prepare
    const authorization = `Bearer ${owner.token}`;

    // Act
    const notJson = await post('{"jsonrpc": "2.0", "id": 1, "method": ', { authorization });
    const notJsonRpc = await post('{"hello": "world"}', { authorization });
    const notification = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
      authorization,
    });
    const stream = await fetch(endpoint(), { headers: { authorization, accept: 'text/event-stream' } });
    const huge = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { padding: 'x'.repeat(1024 * 1024) } }),
      { authorization },
    );

    // Assess
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700 },
      detail: expect.any(String),
    });
    expect(notJsonRpc.status).toBe(400);
    expect(await notJsonRpc.json()).toMatchObject({ error: { code: -32700 } });
    expect(notification.status).toBe(202);
    expect(stream.status).toBe(405);
    expect(huge.status).toBe(413);
  });
});

import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { enforceRateLimit } from '../auth/rate-limit';
import { logger } from '../aws/observability';
import type { Caller } from '../kernel/caller';
import { DomainError } from '../kernel/errors';
import { loadOnce } from '../kernel/load-once';
import { holdsAnyGrantOf } from '../kernel/permissions';
import { type PlatformTool, platformTools, type ToolContext } from './tools';

/**
 * The platform as an MCP server (`/v1/{organization}/mcp`): the official SDK's server and its
 * Streamable HTTP transport, stateless (each POST is answered on its own, so any instance of the
 * function answers any request), run for one request as one authenticated caller. The SDK reads
 * the JSON-RPC (malformed JSON-RPC gets its JSON-RPC error, with HTTP 400) and negotiates the
 * protocol version (2025-11-25, 2025-06-18 and the earlier ones it still speaks); the platform
 * answers `tools/list` and `tools/call` (`tools.ts`). A request's answer is an SSE stream, so a
 * long tool (a conversation turn) keeps its connection alive and may send its reply ahead as
 * progress.
 */
/** The SDK's server, transport and request schemas: loaded on the first request (its validator, ajv, with it). */
const sdk = loadOnce(async () => {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, { CallToolRequestSchema, ListToolsRequestSchema }] =
    await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
      import('@modelcontextprotocol/sdk/types.js'),
    ]);
  return { Server, WebStandardStreamableHTTPServerTransport, CallToolRequestSchema, ListToolsRequestSchema };
});

const serverInfo = { name: 'classic-agent-platform', title: 'Conversational agent platform', version: '1.0.0' };

const instructions =
  "Operate this organization's conversational agents: list services and agents, hold conversations with a service (start_conversation, then send_message), read and search conversations, run simulations, and, for callers allowed it, query the organization's data in SQL. Each tool acts as the caller, with the caller's permissions.";

/** A tool as `tools/list` describes it: its input schema generated from its zod schema. */
const descriptorOf = (tool: PlatformTool): Tool => {
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(tool.input, { io: 'input', target: 'draft-2020-12' });
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputSchema as Tool['inputSchema'],
    annotations: { title: tool.title, readOnlyHint: tool.readOnly, openWorldHint: false },
  };
};

let descriptors: Map<string, Tool> | undefined;
const descriptorsOf = (): Map<string, Tool> => {
  descriptors ??= new Map(platformTools.map((tool) => [tool.name, descriptorOf(tool)]));
  return descriptors;
};

/** The tools a caller may call: those whose permission they hold some grant of. */
export const listPlatformTools = (caller: Caller): Tool[] =>
  platformTools
    .filter((tool) => holdsAnyGrantOf(caller, tool.permission))
    .map((tool) => descriptorsOf().get(tool.name) as Tool);

const errorResult = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true });

/**
 * Runs a tool for the caller. Whatever keeps it from running (an unknown tool, arguments its schema
 * refuses, a permission the caller lacks, its operation's rate limit) and whatever the operation
 * refuses is an error result (`isError`) the model can read, with nothing done.
 */
export const callPlatformTool = async (context: ToolContext, name: string, args: unknown): Promise<CallToolResult> => {
  const tool = platformTools.find((candidate) => candidate.name === name);
  if (!tool) return errorResult(`Unknown tool ${name}: tools/list names the tools you may call.`);
  if (!holdsAnyGrantOf(context.caller, tool.permission))
    return errorResult(`Missing required permission ${tool.permission}.`);
  const parsed = tool.input.safeParse(args ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`);
    return errorResult(`The arguments do not fit ${name}'s input schema: ${issues.join('; ')}.`);
  }
  try {
    const { operationId, rateLimitPerMinute } = tool.operation;
    if (rateLimitPerMinute !== undefined)
      await enforceRateLimit({ caller: context.caller, operationId, perMinute: rateLimitPerMinute });
    const answer = await tool.run(context, parsed.data);
    return { content: [{ type: 'text', text: answer.text }], structuredContent: answer.structured };
  } catch (error) {
    if (error instanceof DomainError) return errorResult(error.message);
    logger.error('MCP tool failed', { error: error as Error, tool: name });
    return errorResult('Internal server error.');
  }
};

/** How many JSON-RPC requests (not notifications or responses) a POST body holds: each gets an answer. */
const requestsIn = (body: Buffer): number => {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return (Array.isArray(parsed) ? parsed : [parsed]).filter(
      (message) => message !== null && typeof message === 'object' && 'method' in message && 'id' in message,
    ).length;
  } catch {
    return 0;
  }
};

export interface McpHttpRequest {
  url: string;
  headers: Record<string, string | undefined>;
  body: Buffer;
}

export interface McpHttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: Readable;
  /** Settles once every request of the POST has its answer, read or not (a turn goes on when the client leaves). */
  settled: Promise<void>;
}

/**
 * A refusal of the transport's (406, 415, malformed JSON-RPC's 400) keeps its JSON-RPC error and
 * says it as the platform's errors do too (`detail`).
 */
const withDetail = async (response: Response): Promise<string> => {
  const text = await response.text();
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    return JSON.stringify({ ...parsed, detail: parsed.error?.message ?? `HTTP ${response.status}` });
  } catch {
    return JSON.stringify({ detail: text || `HTTP ${response.status}` });
  }
};

/** Answers one POST of the MCP endpoint for `caller`. */
export const answerMcpRequest = async (
  orgId: string,
  caller: Caller,
  request: McpHttpRequest,
): Promise<McpHttpAnswer> => {
  const { Server, WebStandardStreamableHTTPServerTransport, CallToolRequestSchema, ListToolsRequestSchema } =
    await sdk();
  const server = new Server(serverInfo, { capabilities: { tools: { listChanged: false } }, instructions });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listPlatformTools(caller) }));
  server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
    const token = call.params._meta?.progressToken;
    let step = 0;
    const progress =
      token === undefined
        ? undefined
        : async (message: string) => {
            step += 1;
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: step, message },
            });
          };
    return callPlatformTool({ orgId, caller, progress }, call.params.name, call.params.arguments);
  });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  // Every request of the POST is answered through `send`: once all are, the work is done.
  const expected = requestsIn(request.body);
  let answered = 0;
  let settle: () => void = () => undefined;
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    const isAnswer = 'result' in message || 'error' in message;
    try {
      await send(message, options);
    } finally {
      if (isAnswer && ++answered >= expected) settle();
    }
  };
  await server.connect(transport);
  const response = await transport.handleRequest(
    new Request(request.url, {
      method: 'POST',
      headers: Object.fromEntries(
        Object.entries(request.headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
      body: new Uint8Array(request.body),
    }),
  );
  if (response.status !== 200 || !response.body) settle();
  void settled.then(() => server.close()).catch(() => undefined);
  // Hop-by-hop headers are the gateway's to set, not the function's.
  const headers = Object.fromEntries(
    [...response.headers.entries()].filter(
      ([name]) => !['connection', 'keep-alive', 'transfer-encoding'].includes(name),
    ),
  );
  if (response.status >= 400) {
    return {
      status: response.status,
      headers: { ...headers, 'content-type': 'application/json' },
      body: Readable.from([await withDetail(response)]),
      settled,
    };
  }
  return {
    status: response.status,
    headers,
    body: response.body ? Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>) : Readable.from([]),
    settled,
  };
};

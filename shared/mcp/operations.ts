import { z } from 'zod';
import { operationDefiner } from '../kernel/operation';
import { commonHeaders, organizationPath } from '../kernel/schemas';

/*
 * The MCP endpoint (group `mcp`, streamed: a tool may hold a conversation turn for minutes, and
 * its answer is an SSE stream). A platform extension: assistants and IDEs operate the platform
 * through it (docs/mcp.md). Its GET (a standalone stream) and DELETE (a session's end) are not
 * served: the server is stateless, and both answer 405 as the protocol allows.
 */

const mcpOperation = operationDefiner({ group: 'mcp', tag: 'MCP', platformExtension: true });

/** A JSON-RPC 2.0 message or batch, as the endpoint documents its body (the SDK reads the bytes). */
const jsonRpcMessage = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number().int()]).optional().describe('Absent in a notification.'),
  method: z.string().optional().describe('`initialize`, `tools/list`, `tools/call`, `ping`, or a notification.'),
  params: z.record(z.string(), z.unknown()).optional(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: z.object({ code: z.number().int(), message: z.string() }).optional(),
});

export const mcpEndpointOperation = mcpOperation({
  operationId: 'send-mcp-message',
  method: 'POST',
  path: '/v1/{organization}/mcp',
  summary: 'The platform as an MCP server (Streamable HTTP): send a JSON-RPC message',
  streaming: true,
  // An assistant's session: initialize, the list, then a call per step; each call also draws on its operation's limit.
  rateLimitPerMinute: 120,
  extraErrors: {
    400: 'Malformed JSON-RPC: the body is a JSON-RPC error (`error.code` -32700 or -32600) with `detail`.',
    406: 'The Accept header does not list both application/json and text/event-stream.',
    415: 'The body is not application/json.',
  },
  request: {
    path: organizationPath,
    headers: commonHeaders.extend({
      accept: z.string().optional().describe('Must list application/json and text/event-stream.'),
      'content-type': z.string().optional().describe('application/json.'),
      'mcp-protocol-version': z
        .string()
        .optional()
        .describe('After initialize: the negotiated version (2025-11-25 or 2025-06-18).'),
    }),
    body: z.union([jsonRpcMessage, z.array(jsonRpcMessage)]),
    bodyType: 'binary',
    mediaType: 'application/json',
  },
  response: {
    status: 200,
    contentType: 'text/event-stream',
    body: z.string().describe('Server-Sent Events: each `data:` a JSON-RPC message (progress, then the response).'),
    otherSuccesses: { 202: 'Only notifications or responses were sent: accepted, no body.' },
  },
});

export const mcpOperations = [mcpEndpointOperation] as const;

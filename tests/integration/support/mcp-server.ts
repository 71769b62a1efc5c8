import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * An MCP server for tests, built with the official SDK (Streamable HTTP, stateless) on a free
 * loopback port: an order desk whose tools answer only with the expected `x-api-key`.
 * - `lookup_order {order_id}`: `Order {order_id} has shipped.`;
 * - `refund_order {order_id}`: always an error result (`isError`);
 * - `quarterly_report {}`: an answer of 300 KB, past the platform's bound.
 * `revise()` changes what it lists (the next listing sees it), `answerGarbage` makes every
 * `tools/call` answer bytes that are not MCP.
 */
export interface RecordedCall {
  tool: string;
  arguments: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

export interface TestMcpServer {
  url: string;
  apiKey: string;
  calls: RecordedCall[];
  /** Lists `lookup_order` with a second parameter, and no longer `refund_order`. */
  revise(): void;
  answerGarbage: boolean;
  close(): Promise<void>;
}

export const startTestMcpServer = async (apiKey = 'sk-orders-7f3a9c'): Promise<TestMcpServer> => {
  const calls: RecordedCall[] = [];
  let revised = false;

  const serverFor = (headers: IncomingHttpHeaders): McpServer => {
    const desk = new McpServer({ name: 'order-desk', version: '1.0.0' });
    const authorized = headers['x-api-key'] === apiKey;
    const answer = (tool: string, args: Record<string, unknown>, text: string, isError = false) => {
      calls.push({ tool, arguments: args, headers });
      if (!authorized) return { content: [{ type: 'text' as const, text: 'Unauthorized.' }], isError: true };
      return { content: [{ type: 'text' as const, text }], ...(isError ? { isError } : {}) };
    };
    const orderId = { order_id: z.string().describe('The order number.') };
    desk.registerTool(
      'lookup_order',
      {
        description: 'Finds an order by its number and tells where it is.',
        inputSchema: revised ? { ...orderId, verbose: z.boolean().optional() } : orderId,
      },
      async (args: { order_id: string }) => answer('lookup_order', args, `Order ${args.order_id} has shipped.`),
    );
    if (!revised) {
      desk.registerTool(
        'refund_order',
        { description: 'Refunds an order.', inputSchema: { order_id: z.string() } },
        async (args) => answer('refund_order', args, 'Refunds need a person.', true),
      );
    }
    desk.registerTool('quarterly_report', { description: 'The quarterly sales report.', inputSchema: {} }, async () =>
      answer('quarterly_report', {}, 'x'.repeat(300 * 1024)),
    );
    return desk;
  };

  const state = { answerGarbage: false };
  const http = createServer(async (request, response) => {
    if (request.url !== '/mcp') {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('Not found.');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text === '' ? undefined : (JSON.parse(text) as { method?: string });
    if (state.answerGarbage && body?.method === 'tools/call') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"jsonrpc": "2.0", "result": 42, "garbage": [');
      return;
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const desk = serverFor(request.headers);
    response.on('close', () => {
      void transport.close();
      void desk.close();
    });
    await desk.connect(transport);
    await transport.handleRequest(request, response, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    apiKey,
    calls,
    revise: () => {
      revised = true;
    },
    get answerGarbage() {
      return state.answerGarbage;
    },
    set answerGarbage(value: boolean) {
      state.answerGarbage = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
};

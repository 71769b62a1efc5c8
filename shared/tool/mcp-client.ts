import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { config } from '../kernel/config';
import { type CheckedDestination, checkDestination } from '../webhook/destination-address';

/**
 * The platform as an MCP client (the official SDK's client over Streamable HTTP), reaching the MCP
 * servers organizations register:
 * - egress: the URL passes the webhook destinations' SSRF guard (https only, every address the
 *   host resolves to public; `MCP_ALLOW_LOCAL_SERVERS` admits http and loopback locally), and every
 *   request connects to the address checked, never to a second DNS answer;
 * - bounds: an exchange (connect, then one request) ends within its timeout, and takes in at most
 *   `maxAnswerBytes` from the server altogether; past either it fails;
 * - no standalone stream: the server-to-client stream a client may open with GET is never asked for
 *   (the platform answers no server requests), so nothing outlives the exchange.
 */
export const maxAnswerBytes = 256 * 1024;

export interface McpConnection {
  url: string;
  /** The headers every request carries, opened (the server's credentials). */
  headers: Record<string, string>;
}

/** Why an exchange with an MCP server failed, as a tool invocation's `exception_type` names it. */
export type McpFailureKind = 'McpServerRefused' | 'McpServerUnreachable' | 'McpServerError' | 'TimeoutError';

export class McpExchangeError extends Error {
  constructor(
    readonly kind: McpFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/** An answer over `maxAnswerBytes`, found while it was read. */
class AnswerTooLarge extends Error {}

/**
 * The body of an answer as a web stream, failing once the exchange has taken in more than its
 * budget. The reader may cancel it at any point (the SDK stops reading a stream it is done with):
 * nothing is pushed into it after that.
 */
const boundedBody = (incoming: IncomingMessage, budget: { left: number }): ReadableStream<Uint8Array> => {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const end = (settle: () => void) => {
        if (!open) return;
        open = false;
        settle();
      };
      incoming.on('data', (chunk: Buffer) => {
        if (!open) return;
        budget.left -= chunk.length;
        if (budget.left >= 0) return controller.enqueue(new Uint8Array(chunk));
        end(() => controller.error(new AnswerTooLarge('answer too large')));
        incoming.destroy();
      });
      incoming.on('end', () => end(() => controller.close()));
      incoming.on('error', (error) => end(() => controller.error(error)));
    },
    cancel() {
      open = false;
      incoming.destroy();
    },
  });
};

const bodilessStatuses = new Set([204, 205, 304]);

/**
 * The `fetch` the SDK's transport uses: node's http(s) to the checked address (the Host header and
 * TLS name stay the URL's), within `signal`, answers counted against `budget`.
 */
const pinnedFetch =
  (destination: CheckedDestination, signal: AbortSignal, budget: { left: number }): FetchLike =>
  (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.origin !== destination.url.origin) {
        reject(
          new McpExchangeError('McpServerRefused', `The MCP server sent the client to another origin (${url.origin}).`),
        );
        return;
      }
      const method = init?.method ?? 'GET';
      if (method === 'GET') {
        resolve(new Response(null, { status: 405 }));
        return;
      }
      const pinned: LookupFunction = (_hostname, options, callback) => {
        if (options.all) callback(null, [{ address: destination.address, family: destination.family }]);
        else callback(null, destination.address, destination.family);
      };
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const outgoing = send(
        url,
        {
          method,
          headers: Object.fromEntries(new Headers(init?.headers).entries()),
          lookup: pinned,
          signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
        },
        (incoming) => {
          const status = incoming.statusCode ?? 0;
          if (status < 200 || status > 599) {
            incoming.destroy();
            reject(new McpExchangeError('McpServerError', `The MCP server answered HTTP status ${status}.`));
            return;
          }
          const headers = new Headers();
          for (let index = 0; index < incoming.rawHeaders.length; index += 2) {
            try {
              headers.append(incoming.rawHeaders[index] as string, incoming.rawHeaders[index + 1] as string);
            } catch {
              // A header the web's Headers refuses is of no use to the client.
            }
          }
          const body = bodilessStatuses.has(status) ? null : boundedBody(incoming, budget);
          if (!body) incoming.resume();
          resolve(new Response(body, { status, headers }));
        },
      );
      outgoing.on('error', reject);
      outgoing.end(typeof init?.body === 'string' ? init.body : undefined);
    });

/** What a failure of the exchange is, in a tool invocation's words. */
const failureOf = (
  error: unknown,
  exchange: { timedOut: boolean; timeoutMs: number; tooLarge: boolean },
): McpExchangeError => {
  if (error instanceof McpExchangeError) return error;
  if (exchange.tooLarge)
    return new McpExchangeError('McpServerError', `The MCP server's answer is larger than ${maxAnswerBytes} bytes.`);
  if (exchange.timedOut)
    return new McpExchangeError('TimeoutError', `The MCP server did not answer within ${exchange.timeoutMs / 1000} s.`);
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  const code = (error as { code?: unknown } | undefined)?.code ?? (cause as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^(E[A-Z]+|ERR_TLS|CERT_|DEPTH_|UNABLE_|SELF_SIGNED)/.test(code))
    return new McpExchangeError('McpServerUnreachable', `The MCP server could not be reached (${code}).`);
  // A JSON-RPC error, an HTTP error status, an answer that is not MCP: the server's answer is not a result.
  return new McpExchangeError(
    'McpServerError',
    `The MCP server's answer is not a result: ${error instanceof Error ? error.message : String(error)}`,
  );
};

/**
 * Connects to a server (`initialize`), runs `work` with the SDK's client, and closes, within
 * `timeoutMs`. Any failure (refused address, unreachable, an answer too large, an answer that is not
 * MCP, a JSON-RPC error) is an {@link McpExchangeError}.
 */
export const withMcpServer = async <T>(
  connection: McpConnection,
  timeoutMs: number,
  work: (client: Client, signal: AbortSignal) => Promise<T>,
): Promise<T> => {
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort(new Error('timed out'));
  }, timeoutMs);
  const budget = { left: maxAnswerBytes };
  let client: Client | undefined;
  try {
    const destination = await checkDestination(connection.url, config.mcpAllowLocalServers).catch((error: unknown) => {
      throw new McpExchangeError('McpServerRefused', `The MCP server's URL is refused: ${(error as Error).message}.`);
    });
    const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    const transport = new StreamableHTTPClientTransport(destination.url, {
      fetch: pinnedFetch(destination, stop.signal, budget),
      requestInit: { headers: connection.headers },
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
    client = new Client({ name: 'classic-agent-platform', version: '1.0.0' });
    // An answer the transport cannot read (not JSON-RPC, cut short) leaves the request unanswered: it fails now.
    client.onerror = (error) => stop.abort(error);
    const options = { signal: stop.signal, timeout: timeoutMs };
    await client.connect(transport, options);
    return await work(client, stop.signal);
  } catch (error) {
    const reason = stop.signal.aborted && !timedOut ? stop.signal.reason : error;
    throw failureOf(reason, { timedOut, timeoutMs, tooLarge: budget.left < 0 });
  } finally {
    clearTimeout(timer);
    await client?.close().catch(() => undefined);
  }
};

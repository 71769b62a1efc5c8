import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '#shared/kernel/errors';

/**
 * What every socket's upgrade request goes through before a transport sees it: its target parsed
 * without trusting its Host header, its path segments decoded without throwing, and a refusal
 * written as an HTTP answer. Whatever a request holds (malformed percent-encoding, a Host that is
 * not a host, a path no transport serves, a throw in authentication) it is answered with an HTTP
 * error, never with the end of the process that serves every other call.
 */

/** Writes an HTTP answer on the socket of a refused upgrade and closes it. */
export const refuseUpgrade = (socket: Duplex, status: number, detail: string): void => {
  if (socket.destroyed || !socket.writable) return;
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
};

/**
 * Refuses an upgrade for what went wrong: a `DomainError` with its status and words, anything
 * else with a 500 that names nothing of the server's (what it was is logged).
 */
export const refuseUpgradeFor = (socket: Duplex, error: unknown, log?: (line: string) => void): void => {
  if (error instanceof DomainError && error.statusCode < 500) {
    refuseUpgrade(socket, error.statusCode, error.message);
    return;
  }
  log?.(`voice session upgrade: ${(error as Error)?.stack ?? String(error)}`);
  const status = error instanceof DomainError ? error.statusCode : 500;
  refuseUpgrade(socket, status, status === 503 ? (error as Error).message : 'Internal server error.');
};

/**
 * The request's path and query. The Host header takes no part: a value that is not a host would
 * make the URL throw, and the path is all a transport routes on. Undefined when the target itself
 * cannot be parsed (an absolute-form target with a malformed host).
 */
export const upgradeTarget = (request: IncomingMessage): URL | undefined => {
  try {
    return new URL(request.url ?? '/', 'http://session.invalid');
  } catch {
    return undefined;
  }
};

/** A path segment decoded, or undefined when its percent-encoding is malformed (`%C0`, `%zz`). */
export const decodedSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

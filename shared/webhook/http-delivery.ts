import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { config } from '../kernel/config';
import type { CheckedDestination } from './destination-address';

/**
 * POSTs one delivery to the vetted address of a destination: the connection goes to
 * `destination.address` (never a second DNS answer), while the Host header and TLS SNI name
 * the URL's host, so the certificate is checked against it. Redirects are not followed: a 3xx
 * is an answer like any other non-2xx. Resolves to the status code, or 0 when no answer came
 * within the delivery timeout (`WEBHOOK_DELIVERY_TIMEOUT_SECONDS`), or the connection was
 * refused or reset, or TLS failed, or `signal` stopped it (the attempt lost its lease).
 */
export const postDelivery = (
  destination: CheckedDestination,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<number> =>
  new Promise((resolve) => {
    const deliveryTimeoutMs = config.webhookDeliveryTimeoutMs;
    const pinned: LookupFunction = (_hostname, options, callback) => {
      if (options.all) callback(null, [{ address: destination.address, family: destination.family }]);
      else callback(null, destination.address, destination.family);
    };
    const send = destination.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(
      destination.url,
      {
        method: 'POST',
        lookup: pinned,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'classic-agent-platform-webhooks/1',
        },
        timeout: deliveryTimeoutMs,
        signal,
      },
      (response) => {
        // The answer's body is not needed; draining it frees the socket.
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    const deadline = setTimeout(() => outgoing.destroy(new Error('delivery timed out')), deliveryTimeoutMs);
    outgoing.on('timeout', () => outgoing.destroy(new Error('delivery timed out')));
    outgoing.on('error', () => resolve(0));
    outgoing.on('close', () => clearTimeout(deadline));
    outgoing.end(body);
  });

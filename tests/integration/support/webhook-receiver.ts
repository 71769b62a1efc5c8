import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver on loopback for tests. It verifies signatures with its own implementation
 * of the published schemes (node:crypto, written from the scheme, not the product's signer):
 *
 * - vendor: `x-amigo-request-signature` = hex HMAC-SHA256(secret, `v1:{x-amigo-request-timestamp}:{raw body}`);
 * - Standard Webhooks: each `v1,<base64>` entry of `webhook-signature` =
 *   HMAC-SHA256(base64-decoded secret after `whsec_`, `{webhook-id}.{webhook-timestamp}.{raw body}`).
 */
export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedDelivery[];
  /** Statuses to answer, in order; once used up every request gets 200. */
  respondWith(statuses: number[]): void;
  close(): Promise<void>;
}

const header = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
};

const sameText = (a: string, b: string): boolean => {
  const [left, right] = [Buffer.from(a), Buffer.from(b)];
  return left.length === right.length && timingSafeEqual(left, right);
};

/** Whether the vendor signature header `signatureHeader` verifies with `secret`. */
export const vendorSignatureVerifies = (
  delivery: ReceivedDelivery,
  secret: string,
  signatureHeader = 'x-amigo-request-signature',
): boolean => {
  const timestamp = header(delivery.headers, 'x-amigo-request-timestamp');
  const expected = createHmac('sha256', secret).update(`v1:${timestamp}:${delivery.body}`).digest('hex');
  return sameText(header(delivery.headers, signatureHeader), expected);
};

/** Whether any entry of `webhook-signature` verifies with `secret`. */
export const standardSignatureVerifies = (delivery: ReceivedDelivery, secret: string): boolean => {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = `${header(delivery.headers, 'webhook-id')}.${header(delivery.headers, 'webhook-timestamp')}.${delivery.body}`;
  const expected = createHmac('sha256', key).update(signed).digest('base64');
  return header(delivery.headers, 'webhook-signature')
    .split(' ')
    .some((entry) => entry.startsWith('v1,') && sameText(entry.slice(3), expected));
};

export const startWebhookReceiver = async (): Promise<WebhookReceiver> => {
  const received: ReceivedDelivery[] = [];
  let statuses: number[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() });
      response.statusCode = statuses.shift() ?? 200;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    respondWith: (next) => {
      statuses = [...next];
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
};

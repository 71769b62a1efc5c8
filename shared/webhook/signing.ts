import { createHmac, randomBytes } from 'node:crypto';

/**
 * Webhook signatures. One secret serves both schemes: it has the Standard Webhooks form
 * `whsec_<base64 key>`, whose decoded key signs the Standard Webhooks headers, while the
 * vendor's SDK helpers key their HMAC with the whole secret string, as received.
 */
const secretPrefix = 'whsec_';

export const newWebhookSecret = (): string => `${secretPrefix}${randomBytes(32).toString('base64')}`;

/** The vendor scheme (`x-amigo-request-signature`): lowercase hex HMAC-SHA256 of `v1:{timestamp ms}:{body}`. */
export const amigoSignature = (secret: string, timestampMs: number, body: string): string =>
  createHmac('sha256', secret).update(`v1:${timestampMs}:${body}`).digest('hex');

/** The Standard Webhooks scheme (`webhook-signature` entry): `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp s}.{body}`. */
export const standardSignature = (
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string,
): string => {
  const key = Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
};

/**
 * The signing headers of one attempt. `secrets` is the current secret first, then, during
 * dual signing, the previous one: the vendor header carries the current secret's signature and
 * `x-amigo-request-signature-previous` the previous one's (the SDK compares a header whole, so a
 * second signature cannot share it); `webhook-signature` lists both, space-separated.
 */
export const signatureHeaders = (
  secrets: readonly [string, ...string[]],
  deliveryId: string,
  timestampMs: number,
  body: string,
): Record<string, string> => {
  const [current, previous] = secrets;
  const seconds = Math.floor(timestampMs / 1000);
  return {
    'x-amigo-idempotent-key': deliveryId,
    'x-amigo-request-timestamp': String(timestampMs),
    'x-amigo-request-signature': amigoSignature(current, timestampMs, body),
    ...(previous ? { 'x-amigo-request-signature-previous': amigoSignature(previous, timestampMs, body) } : {}),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(seconds),
    'webhook-signature': secrets.map((secret) => standardSignature(secret, deliveryId, seconds, body)).join(' '),
  };
};

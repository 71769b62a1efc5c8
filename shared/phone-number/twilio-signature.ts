import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Twilio's request signature (`X-Twilio-Signature`), as Twilio documents it: the full URL Twilio
 * requested (scheme, host, path and query, exactly as configured), followed by every POST form
 * field sorted by name, each as name then value with no separator, HMAC-SHA1 keyed by the
 * account's auth token, base64. A WebSocket upgrade (a GET) signs its URL alone.
 */
export const twilioSignature = (authToken: string, url: string, form: URLSearchParams): string => {
  const fields = [...form.entries()];
  // Sorted by name; a repeated name keeps its values in the order sent, as Twilio's helpers do.
  fields.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signed = fields.reduce((text, [name, value]) => `${text}${name}${value}`, url);
  return createHmac('sha1', authToken).update(signed, 'utf8').digest('base64');
};

/**
 * The URL with the scheme's default port written out, and without it: Twilio's own validators
 * accept both, since a proxy may add or drop `:443` between what Twilio signed and what arrives.
 */
const portVariants = (url: string): string[] => {
  const parsed = new URL(url);
  const defaultPort = parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? '443' : '80';
  const withoutPort = new URL(url);
  withoutPort.port = '';
  const withPort = `${parsed.protocol}//${parsed.username ? `${parsed.username}@` : ''}${parsed.hostname}:${
    parsed.port || defaultPort
  }${parsed.pathname}${parsed.search}`;
  return [...new Set([url, withoutPort.toString(), withPort])];
};

/** Whether `signature` is Twilio's for the request, compared in constant time. */
export const isTwilioSignatureValid = (
  authToken: string,
  signature: string | undefined,
  url: string,
  form: URLSearchParams,
): boolean => {
  if (!signature) return false;
  const presented = Buffer.from(signature);
  return portVariants(url).some((candidate) => {
    const expected = Buffer.from(twilioSignature(authToken, candidate, form));
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  });
};

/** Everything before `/v1/` of a request URL: the API's base, stage prefix included. */
export const baseOf = (url: string): string => {
  const index = url.indexOf('/v1/');
  return index >= 0 ? url.slice(0, index) : url.replace(/\/+$/, '');
};

/**
 * The URL Twilio addressed: the configured public base URL when there is one (a CDN in front of
 * the API that passes on neither the host nor the scheme), else the request's own, with the host
 * a proxy says it was addressed by (`X-Forwarded-Host`; the scheme is `X-Forwarded-Proto`'s already).
 */
export const addressedUrl = (requestUrl: string, forwardedHost: string | undefined, publicBaseUrl?: string): string => {
  const path = requestUrl.slice(baseOf(requestUrl).length);
  if (publicBaseUrl) return `${publicBaseUrl}${path}`;
  const host = forwardedHost?.split(',')[0]?.trim();
  if (!host) return requestUrl;
  const url = new URL(requestUrl);
  return `${url.protocol}//${host}${requestUrl.slice(url.origin.length)}`;
};

/**
 * The voice session sockets' base: the configured one, else the API's own host as ws:// or wss://;
 * undefined when the deployment serves no sessions (`VOICE_SESSION_URL=none`).
 */
export const voiceSessionBase = (addressed: string, configured: string | null | undefined): string | undefined =>
  configured === null ? undefined : (configured ?? baseOf(addressed).replace(/^http/, 'ws'));

import { request as httpRequest } from 'node:http';
import { inject } from 'vitest';
import type { Platform, PlatformCredentials } from '../../../infra/local/platform';

export interface Harness {
  baseUrl: string;
  credentials: PlatformCredentials;
  outboxDir: string;
  table: Platform['table'];
  /** The platform's local AWS settings, for tests that look at its queues and bucket. */
  awsEnv: Record<string, string>;
  bucket: Platform['bucket'];
  toolRepositoryRoot: string;
  toolRuntimeDir: string;
  /** Where the SQL query keeps its copies of the organizations' lake files (one folder each). */
  lakeCacheDir: string;
  /** The stand-in of Twilio's REST API the platform's TWILIO_API_BASE_URL points at. */
  twilioApiUrl: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    harness: Harness;
  }
}

/** Set by a test file that starts a platform of its own (`tests/faults/`). */
let ownHarness: Harness | undefined;

/** Points the support functions of this test file at a platform it started itself. */
export const useHarness = (harness: Harness | undefined): void => {
  ownHarness = harness;
};

export const harness = (): Harness => ownHarness ?? inject('harness');

export type QueryValue = string | string[] | number | boolean | undefined;

export interface ApiInit {
  method?: string;
  body?: unknown;
  /** A bearer token. */
  token?: string;
  headers?: Record<string, string>;
  query?: Record<string, QueryValue>;
  /** A body sent as is (multipart forms, audio). */
  raw?: RequestInit['body'];
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field in tests
  body: any;
  text: string;
}

export const apiUrl = (path: string, query: Record<string, QueryValue> = {}): string => {
  const url = new URL(path, harness().baseUrl);
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
  }
  return url.toString();
};

export const requestInit = (init: ApiInit): RequestInit => {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: RequestInit['body'] = init.raw;
  if (init.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(init.body);
  }
  const method = init.method ?? (body === undefined ? 'GET' : 'POST');
  // Node's fetch sends a stream body only half-duplex, and only when told so.
  return body instanceof ReadableStream
    ? ({ method, headers, body, duplex: 'half' } as RequestInit)
    : { method, headers, body };
};

/** Fails a fixture's set-up step that did not answer `status`, with what the platform said. */
export const expectStatus = (what: string, response: { status: number; text: string }, status: number): void => {
  if (response.status !== status)
    throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`);
};

/** One request to the platform; the body is parsed as JSON when it is JSON. */
export const api = async (path: string, init: ApiInit = {}): Promise<ApiResponse> => {
  const response = await fetch(apiUrl(path, init.query), requestInit(init));
  const text = await response.text();
  let body: unknown = text;
  if (response.headers.get('content-type')?.includes('application/json') && text !== '') body = JSON.parse(text);
  return { status: response.status, headers: response.headers, body, text };
};

/** Reads an NDJSON stream to its end, keeping each event with the time it arrived (`onEvent` sees each as it arrives). */
export const streamEvents = async (
  path: string,
  init: ApiInit = {},
  onEvent?: (event: Record<string, unknown>) => void,
): Promise<{
  status: number;
  headers: Headers;
  events: { at: number; event: Record<string, unknown> }[];
  text: string;
}> => {
  const response = await fetch(apiUrl(path, init.query), requestInit(init));
  const events: { at: number; event: Record<string, unknown> }[] = [];
  if (!response.body) return { status: response.status, headers: response.headers, events, text: '' };
  const decoder = new TextDecoder();
  let buffered = '';
  let text = '';
  for await (const chunk of response.body) {
    const piece = decoder.decode(chunk as Uint8Array, { stream: true });
    text += piece;
    buffered += piece;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line !== '') {
        events.push({ at: Date.now(), event: JSON.parse(line) as Record<string, unknown> });
        onEvent?.(events.at(-1)?.event as Record<string, unknown>);
      }
      newline = buffered.indexOf('\n');
    }
  }
  if (buffered.trim() !== '' && response.headers.get('content-type')?.includes('ndjson')) {
    events.push({ at: Date.now(), event: JSON.parse(buffered) as Record<string, unknown> });
  }
  return { status: response.status, headers: response.headers, events, text };
};

/**
 * Reads an NDJSON stream and disconnects once `dropAfter` events have arrived, as a client whose
 * connection breaks: the events read before, all of them if the stream ended first.
 */
export const streamAndDisconnect = async (
  path: string,
  init: ApiInit,
  dropAfter: number,
): Promise<Record<string, unknown>[]> => {
  const disconnect = new AbortController();
  const response = await fetch(apiUrl(path, init.query), { ...requestInit(init), signal: disconnect.signal });
  expectStatus(path, { status: response.status, text: '' }, 200);
  const events: Record<string, unknown>[] = [];
  let buffered = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as ReadableStream<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== '') events.push(JSON.parse(line) as Record<string, unknown>);
        if (events.length === dropAfter) {
          disconnect.abort();
          return events;
        }
      }
    }
  } catch (error) {
    if (!disconnect.signal.aborted) throw error;
  }
  return events;
};

export { eventually } from '../../support/eventually';

/** A request to the gateway naming `host` as its Host (fetch writes its own, so node:http sends it). */
export const requestWithHost = (
  host: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const { port } = new URL(harness().baseUrl);
    const sent = httpRequest(
      { host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: { host, ...init.headers } },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    sent.on('error', reject);
    sent.end(init.body);
  });

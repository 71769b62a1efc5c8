import { z } from 'zod';
import type { Operation } from '#shared/kernel/operation';
import { apiUrl } from '../support/client';

/**
 * Plausible request values generated from an operation's zod schemas, so every operation
 * of the route table can be called without hand-written fixtures. A sample is only a best
 * effort: callers check it with the schema before relying on it.
 */
type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minimum?: number;
  minLength?: number;
  minItems?: number;
  default?: unknown;
};

const hexId = () => Array.from({ length: 24 }, () => Math.floor(Math.random() * 16).toString(16)).join('');

const stringCandidates = (schema: JsonSchema): string[] => {
  switch (schema.format) {
    case 'email':
      return ['someone@example.com'];
    case 'uri':
    case 'url':
      return ['https://example.com/page'];
    case 'date-time':
      return [new Date().toISOString()];
    case 'duration':
      return ['P1D'];
    default:
      return [hexId(), 'sample', 'sample_name', 'P1D', '1.0.0', 'a', 'x'.repeat(Math.max(1, schema.minLength ?? 1))];
  }
};

const sampleOf = (schema: JsonSchema): unknown => {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return sampleOf(variants.find((variant) => variant.type !== 'null') ?? variants[0] ?? {});
  if (schema.allOf?.[0]) return sampleOf(schema.allOf[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((name) => name !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((name) => [name, sampleOf(schema.properties?.[name] ?? {})]),
      );
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items ?? {}));
    case 'string': {
      const candidates = stringCandidates(schema);
      const pattern = schema.pattern ? new RegExp(schema.pattern) : undefined;
      return candidates.find((candidate) => !pattern || pattern.test(candidate)) ?? candidates[0];
    }
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return false;
    default:
      return schema.default ?? 'sample';
  }
};

export const sampleFor = (schema: z.ZodType | undefined): unknown => {
  if (!schema) return undefined;
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return sampleOf(json);
};

/** A value for one path parameter that its schema accepts. */
export const pathValueFor = (schema: z.ZodType): string => {
  const candidates = [hexId(), 'SampleName', 'sample', '1', '1.0.0', '>=1.0.0', 'latest'];
  return candidates.find((candidate) => schema.safeParse(candidate).success) ?? 'sample';
};

/**
 * Bodies the generator cannot make valid on its own (a choice between alternative fields), so
 * that the permission check, not validation, answers.
 */
export const bodySamples: Record<string, unknown> = {
  'create-metric': {
    name: 'Isolation sample',
    description: 'Whether the sample holds.',
    metric_value: { type: 'boolean' },
  },
  // The operators' operations.
  'escalate-conversation': { reason: 'The user asks for a person.' },
  'send-operator-message': { message: 'Hello, I am taking over from the assistant.' },
  'send-operator-guidance': { guidance: 'Offer the premium plan.' },
  'hand-back-conversation': { outcome: 'resolved', note: 'Refund issued.' },
  // Phone numbers: an E.164 number and a Twilio account SID match patterns the generator does not.
  'create-phone-number': {
    phone_number: '+14155550100',
    service_id: 'f'.repeat(24),
    provider: 'twilio',
    twilio_account_sid: `AC${'0'.repeat(32)}`,
    twilio_auth_token: 'x'.repeat(32),
  },
  // Calls: E.164 numbers, as the phone numbers'.
  'create-outbound-call': { phone_to: '+14155550101', phone_from: '+14155550100', reason: 'appointment_reminder' },
  'transfer-call': { phone_to: '+14155550102', mode: 'cold' },
  // Simulation sessions and backtests: one of the alternative shapes each, valid as it stands.
  'create-simulation-session': { service_id: '0123456789abcdef01234567', version_set_name: 'release' },
  'step-simulation-session': { caller_text: 'Hello' },
  'fork-simulation-session': { alternatives: [{ caller_text: 'Hello' }] },
  'create-simulation-backtest': {
    service_id: '0123456789abcdef01234567',
    candidate_version_set: 'edge',
    conversation_ids: ['0123456789abcdef01234568'],
  },
  // An MCP server's registration (its listing is read: an unreachable one is refused, 400) and the MCP endpoint's initialize.
  'create-mcp-server': { name: 'sample', url: 'https://mcp.example.invalid/mcp', headers: {} },
  'send-mcp-message': {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'isolation', version: '1' } },
  },
};

/** Headers the generator cannot make from a schema that accepts any text: the MCP endpoint's Accept. */
export const headerSamples: Record<string, Record<string, string>> = {
  'send-mcp-message': { accept: 'application/json, text/event-stream' },
};

/** Only JSON bodies are generated (a raw body documented as JSON is one), and fetch sends no body with GET. */
export const sendsJsonSample = (operation: Operation): boolean =>
  ((operation.request.bodyType ?? 'json') === 'json' || operation.request.mediaType === 'application/json') &&
  operation.method !== 'GET';

/**
 * Calls an operation with sample values: `pathValues` for the path parameters it names (records
 * that exist, so permission checks run rather than "not found"), generated ones for the others,
 * a sample query, headers and body.
 */
export const callWithSample = async (
  operation: Operation,
  request: {
    orgId: string;
    headers: Record<string, string>;
    pathValues: Record<string, string>;
    /** Query parameters sent instead of the samples'. */
    query?: Record<string, string>;
  },
): Promise<{ status: number; headers: Headers; text: string }> => {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'organization') return request.orgId;
    const known = request.pathValues[name];
    if (known) return encodeURIComponent(known);
    const schema = operation.request.path?.shape[name];
    return encodeURIComponent(schema ? pathValueFor(schema as never) : 'sample');
  });
  const query = { ...((sampleFor(operation.request.query) ?? {}) as Record<string, string>), ...request.query };
  const extraHeaders = {
    ...Object.fromEntries(
      Object.entries((sampleFor(operation.request.headers) ?? {}) as Record<string, unknown>).map(([name, value]) => [
        name,
        String(value),
      ]),
    ),
    ...headerSamples[operation.operationId],
  };
  const body = bodySamples[operation.operationId] ?? sampleFor(operation.request.body);
  const isJson = sendsJsonSample(operation) && body !== undefined;
  const response = await fetch(apiUrl(path, query), {
    method: operation.method,
    headers: { ...extraHeaders, ...(isJson ? { 'content-type': 'application/json' } : {}), ...request.headers },
    body: isJson ? JSON.stringify(body) : undefined,
    redirect: 'manual',
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
};

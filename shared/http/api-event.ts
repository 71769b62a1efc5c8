import type { APIGatewayProxyEvent } from 'aws-lambda';
import { PayloadTooLargeError, ValidationError } from '../kernel/errors';

export type QueryValues = Record<string, string | string[]>;

/** Header names lower-cased; repeated headers joined with a comma as HTTP allows. */
export const normalizeHeaders = (event: APIGatewayProxyEvent): Record<string, string> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
    if (values && values.length > 0) headers[name.toLowerCase()] = values.join(', ');
  }
  return headers;
};

/**
 * Query parameters with repeats kept: a parameter given once is a string, repeated an
 * array. `id[]=a` is read as `id=a` because some clients encode arrays that way.
 */
export const normalizeQuery = (event: APIGatewayProxyEvent): QueryValues => {
  const query: QueryValues = {};
  const add = (rawName: string, value: string) => {
    const name = rawName.endsWith('[]') ? rawName.slice(0, -2) : rawName;
    const existing = query[name];
    if (existing === undefined) query[name] = rawName.endsWith('[]') ? [value] : value;
    else query[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  };
  if (event.multiValueQueryStringParameters) {
    for (const [name, values] of Object.entries(event.multiValueQueryStringParameters)) {
      for (const value of values ?? []) add(name, value);
    }
  } else {
    for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
      if (value !== undefined) add(name, value);
    }
  }
  return query;
};

export const rawBody = (event: APIGatewayProxyEvent): Buffer =>
  event.body === null || event.body === undefined
    ? Buffer.alloc(0)
    : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');

export const parseJsonBody = (body: Buffer): unknown => {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new ValidationError([
      { loc: ['body'], msg: `JSON decode error: ${(error as Error).message}`, type: 'json_invalid' },
    ]);
  }
};

const maxMultipartBytes = 10 * 1024 * 1024;

const formTypes = ['multipart/form-data', 'application/x-www-form-urlencoded'];

/**
 * Fields of a form body, parsed by the runtime's own Fetch implementation; a field given
 * twice keeps every value, and file parts are read as UTF-8 text. URL-encoded forms are
 * read too: the vendor's Python SDK sends a form without files (`initial_message_type=skip`)
 * that way, and the reference's form fields accept both encodings.
 */
export const parseMultipartBody = async (body: Buffer, contentType: string | undefined): Promise<Record<string, string[]>> => {
  if (!formTypes.some((type) => contentType?.toLowerCase().startsWith(type))) {
    throw new ValidationError([
      { loc: ['header', 'content-type'], msg: 'Expected multipart/form-data or application/x-www-form-urlencoded.', type: 'value_error' },
    ]);
  }
  if (body.length > maxMultipartBytes) throw new PayloadTooLargeError('The request body is larger than 10 MiB.');
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
  } catch (error) {
    throw new ValidationError([
      { loc: ['body'], msg: `Malformed multipart body: ${(error as Error).message}`, type: 'value_error' },
    ]);
  }
  const fields: Record<string, string[]> = {};
  for (const [name, value] of form.entries()) {
    const text = typeof value === 'string' ? value : await value.text();
    fields[name] = [...(fields[name] ?? []), text];
  }
  return fields;
};

/**
 * OAuth-style parameters: application/x-www-form-urlencoded (the last of a repeated name wins),
 * or, with a JSON content type, a JSON object whose string members are kept.
 */
export const parseFormBody = (body: Buffer, contentType: string | undefined): Record<string, string> => {
  const text = body.toString('utf8');
  if (!contentType?.toLowerCase().includes('application/json')) return Object.fromEntries(new URLSearchParams(text));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError([{ loc: ['body'], msg: 'Expected a JSON object of string parameters.', type: 'json_invalid' }]);
  }
  return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
};

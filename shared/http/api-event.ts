import type { APIGatewayProxyEvent } from 'aws-lambda';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../kernel/errors';

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

/**
 * The body's bytes. API Gateway has already buffered up to 10 MB; the operation's own limit
 * is checked on the encoded length first, so an oversized body is never decoded.
 */
export const rawBody = (event: APIGatewayProxyEvent, maxBytes: number): Buffer => {
  if (event.body === null || event.body === undefined) return Buffer.alloc(0);
  const encoding = event.isBase64Encoded ? 'base64' : 'utf8';
  if (Buffer.byteLength(event.body, encoding) > maxBytes) throw bodyTooLarge(maxBytes);
  return Buffer.from(event.body, encoding);
};

export const bodyTooLarge = (maxBytes: number): PayloadTooLargeError =>
  new PayloadTooLargeError(`The request body is larger than the ${maxBytes} bytes this operation accepts.`);

/**
 * JSON media types, and none at all (a body sent without a type is read as JSON). The
 * official SDKs send `application/json` (openapi-fetch, httpx), at times with a charset.
 */
const isJsonMediaType = (contentType: string | undefined): boolean => {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  return (
    mediaType === undefined ||
    mediaType === '' ||
    mediaType === 'application/json' ||
    /^application\/[\w.+-]+\+json$/.test(mediaType)
  );
};

export const parseJsonBody = (body: Buffer, contentType: string | undefined): unknown => {
  if (body.length === 0) return undefined;
  if (!isJsonMediaType(contentType))
    throw new UnsupportedMediaTypeError(`Expected an application/json body, not ${contentType}.`);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw new ValidationError([
      { loc: ['body'], msg: `JSON decode error: ${(error as Error).message}`, type: 'json_invalid' },
    ]);
  }
};

const formTypes = ['multipart/form-data', 'application/x-www-form-urlencoded'];

/**
 * Fields of a form body, parsed by the runtime's own Fetch implementation; a field given
 * twice keeps every value, and file parts are read as UTF-8 text. URL-encoded forms are
 * read too: the vendor's Python SDK sends a form without files (`initial_message_type=skip`)
 * that way, and the reference's form fields accept both encodings.
 */
export const parseMultipartBody = async (
  body: Buffer,
  contentType: string | undefined,
): Promise<Record<string, string[]>> => {
  // No body at all is a form without fields: its schema names what is missing.
  if (body.length === 0) return {};
  if (!formTypes.some((type) => contentType?.toLowerCase().startsWith(type))) {
    throw new UnsupportedMediaTypeError(
      `Expected multipart/form-data or application/x-www-form-urlencoded, not ${contentType}.`,
    );
  }
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
 * OAuth-style parameters: application/x-www-form-urlencoded (the last of a repeated name wins;
 * also a body sent without a type), or, with a JSON content type, a JSON object whose string
 * members are kept. Any other type is 415.
 */
export const parseFormBody = (body: Buffer, contentType: string | undefined): Record<string, string> => {
  const text = body.toString('utf8');
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (mediaType === undefined || mediaType === '' || mediaType === 'application/x-www-form-urlencoded') {
    return Object.fromEntries(new URLSearchParams(text));
  }
  if (!isJsonMediaType(contentType)) {
    throw new UnsupportedMediaTypeError(
      `Expected application/x-www-form-urlencoded or application/json, not ${contentType}.`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError([
      { loc: ['body'], msg: 'Expected a JSON object of string parameters.', type: 'json_invalid' },
    ]);
  }
  return Object.fromEntries(
    Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
};

import type { APIGatewayProxyEvent } from 'aws-lambda';
import busboy from 'busboy';
import { PayloadTooLargeError, ValidationError } from '../errors';

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

/** Text fields of a multipart/form-data body; a field given twice keeps every value. */
export const parseMultipartBody = (body: Buffer, contentType: string | undefined): Promise<Record<string, string[]>> =>
  new Promise((resolve, reject) => {
    if (!contentType?.toLowerCase().startsWith('multipart/form-data')) {
      reject(
        new ValidationError([
          { loc: ['header', 'content-type'], msg: 'Expected multipart/form-data.', type: 'value_error' },
        ]),
      );
      return;
    }
    if (body.length > maxMultipartBytes) {
      reject(new PayloadTooLargeError('The request body is larger than 10 MiB.'));
      return;
    }
    const fields: Record<string, string[]> = {};
    const add = (name: string, value: string) => {
      fields[name] = [...(fields[name] ?? []), value];
    };
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8' });
    } catch (error) {
      reject(new ValidationError([{ loc: ['body'], msg: (error as Error).message, type: 'value_error' }]));
      return;
    }
    parser.on('field', (name, value) => add(name, value));
    parser.on('file', (name, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => add(name, Buffer.concat(chunks).toString('utf8')));
    });
    parser.on('error', (error: Error) =>
      reject(new ValidationError([{ loc: ['body'], msg: error.message, type: 'value_error' }])),
    );
    parser.on('close', () => resolve(fields));
    parser.end(body);
  });

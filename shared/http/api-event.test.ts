import { describe, expect, it } from 'vitest';
import { UnsupportedMediaTypeError, ValidationError } from '../kernel/errors';
import { normalizeQuery, parseFormBody, parseJsonBody, parseMultipartBody } from './api-event';

const multipart = async (form: FormData) => {
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  return { body: Buffer.from(await request.arrayBuffer()), contentType: request.headers.get('content-type') ?? '' };
};

describe('parseMultipartBody', () => {
  it('reads text fields as UTF-8 and keeps repeated fields', async () => {
    // Prepare
    const form = new FormData();
    form.append('recorded_message', 'Grüß Gott, ¿qué tal? 👋');
    form.append('recorded_message', 'second');
    const { body, contentType } = await multipart(form);
    // Act
    const fields = await parseMultipartBody(body, contentType);
    // Assess
    expect(fields.recorded_message).toEqual(['Grüß Gott, ¿qué tal? 👋', 'second']);
  });

  it('reads a file part as text', async () => {
    const form = new FormData();
    form.append('recorded_message', new Blob(['from a file']), 'message.txt');
    const { body, contentType } = await multipart(form);
    expect((await parseMultipartBody(body, contentType)).recorded_message).toEqual(['from a file']);
  });

  it('reads a URL-encoded form, as the Python SDK sends a form without files', async () => {
    const body = Buffer.from('initial_message_type=skip&recorded_message=');
    const fields = await parseMultipartBody(body, 'application/x-www-form-urlencoded');
    expect(fields).toEqual({ initial_message_type: ['skip'], recorded_message: [''] });
  });

  it('rejects a body that is not a form with a 415', async () => {
    await expect(parseMultipartBody(Buffer.from('{}'), 'application/json')).rejects.toBeInstanceOf(
      UnsupportedMediaTypeError,
    );
  });

  it('rejects a malformed multipart body with a 422', async () => {
    await expect(parseMultipartBody(Buffer.from('garbage'), 'multipart/form-data; boundary=x')).rejects.toBeInstanceOf(
      ValidationError,
    );
  });
});

describe('parseJsonBody', () => {
  it.each(['application/json', 'application/json; charset=utf-8', 'application/merge-patch+json', undefined])(
    'reads a body sent as %s',
    (contentType) => {
      expect(parseJsonBody(Buffer.from('{"a":1}'), contentType)).toEqual({ a: 1 });
    },
  );

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/jsonx'])(
    'answers 415 to %s',
    (contentType) => {
      expect(() => parseJsonBody(Buffer.from('{"a":1}'), contentType)).toThrow(UnsupportedMediaTypeError);
    },
  );
});

describe('normalizeQuery', () => {
  it('keeps repeated values as arrays and reads id[] as id', () => {
    const query = normalizeQuery({
      multiValueQueryStringParameters: { id: ['a', 'b'], 'tag[]': ['x'], limit: ['5'] },
    } as never);
    expect(query).toEqual({ id: ['a', 'b'], tag: ['x'], limit: '5' });
  });
});

describe('parseFormBody', () => {
  it('reads URL-encoded parameters, the last of a repeated name winning', () => {
    const form = parseFormBody(
      Buffer.from('grant_type=refresh_token&refresh_token=a%2Bb&refresh_token=c'),
      'application/x-www-form-urlencoded',
    );
    expect(form).toEqual({ grant_type: 'refresh_token', refresh_token: 'c' });
  });

  it('reads the string members of a JSON object and rejects anything else with a 422', () => {
    expect(parseFormBody(Buffer.from('{"grant_type":"refresh_token","expires_in":5}'), 'application/json')).toEqual({
      grant_type: 'refresh_token',
    });
    for (const body of ['[]', 'null', '{not json', '']) {
      expect(() => parseFormBody(Buffer.from(body), 'application/json; charset=utf-8')).toThrow(ValidationError);
    }
  });
});

import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, apiUrl } from '../support/client';
import { createOrganization, rootSession, type Session } from '../support/identity';

let admin: Session;
beforeAll(async () => {
  ({ session: admin } = await createOrganization(await rootSession()));
});

const roleBody = (description: string) =>
  JSON.stringify({ role_name: `r-${Date.now()}`, description, permission_grants: [], frontend_view: 'client' });

/**
 * Streams a body of up to `totalBytes` in chunks, without a Content-Length, and stops sending
 * as soon as the platform answers; reports the status and how much had been sent by then.
 */
const streamBody = (path: string, headers: Record<string, string>, totalBytes: number) =>
  new Promise<{ status: number; sentBytes: number }>((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sentBytes = 0;
    let answered = false;
    const outgoing = httpRequest(apiUrl(path), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
    });
    outgoing.on('response', (response) => {
      answered = true;
      response.resume();
      resolve({ status: response.statusCode ?? 0, sentBytes });
      outgoing.destroy();
    });
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    const sendMore = () => {
      while (!answered && sentBytes < totalBytes) {
        sentBytes += chunk.length;
        if (!outgoing.write(chunk)) return outgoing.once('drain', sendMore);
      }
      if (!answered) outgoing.end();
    };
    sendMore();
  });

describe('create-role', () => {
  it('answers 413 to a JSON body over 1 MiB', async () => {
    // Act
    const response = await api(`/v1/${admin.orgId}/role/`, {
      token: admin.token,
      headers: { 'content-type': 'application/json' },
      raw: roleBody('x'.repeat(1024 * 1024)),
    });

    // Assess
    expect(response.status).toBe(413);
  });

  it('answers 415 to a body that is not JSON', async () => {
    // Act
    const response = await api(`/v1/${admin.orgId}/role/`, {
      token: admin.token,
      headers: { 'content-type': 'text/plain' },
      raw: roleBody('Plain text.'),
    });

    // Assess
    expect(response.status).toBe(415);
  });

  it('accepts application/json with a charset, as httpx and fetch may send it', async () => {
    // Act
    const response = await api(`/v1/${admin.orgId}/role/`, {
      token: admin.token,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      raw: roleBody('JSON with a charset.'),
    });

    // Assess
    expect(response.status).toBe(201);
  });

  it('answers 413 before an oversized body has arrived', async () => {
    // Act
    const response = await streamBody(
      `/v1/${admin.orgId}/role/`,
      { authorization: `Bearer ${admin.token}` },
      64 * 1024 * 1024,
    );

    // Assess
    expect(response.status).toBe(413);
    expect(response.sentBytes).toBeLessThan(16 * 1024 * 1024);
  });

  it('answers 401 to an unauthenticated body before reading it', async () => {
    // Act
    const response = await streamBody(`/v1/${admin.orgId}/role/`, {}, 64 * 1024 * 1024);

    // Assess
    expect(response.status).toBe(401);
    expect(response.sentBytes).toBeLessThan(16 * 1024 * 1024);
  });
});

describe('interact-with-conversation', () => {
  it('answers 415 to a JSON body instead of a form', async () => {
    // Act
    const response = await api(`/v1/${admin.orgId}/conversation/${'a'.repeat(24)}/interact`, {
      token: admin.token,
      query: { request_format: 'text', response_format: 'text' },
      body: { recorded_message: 'Hello' },
    });

    // Assess
    expect(response.status).toBe(415);
  });
});

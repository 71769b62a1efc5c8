import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { harness } from '../support/client';
import { createService } from '../support/conversations';
import { createOrganization, createUserSession, organizationKey, type Session } from '../support/identity';
import { createUnion, expectPythonParsable, interactUnion } from '../support/python-sdk-rules';

/**
 * Requests shaped exactly as the vendor's official SDKs send them (TypeScript: openapi-fetch
 * over fetch; Python: httpx), and assertions on what those SDKs read from the answers.
 * Nothing here goes through the test client's conveniences: paths, headers, query strings
 * and bodies are written out as the SDKs produce them.
 */

let orgId: string;
let admin: Session;
let user: Session;
let serviceId: string;
let key: { api_key_id: string; api_key: string };

beforeAll(async () => {
  ({ orgId, session: admin } = await createOrganization());
  ({ serviceId } = await createService(admin));
  user = await createUserSession(admin, 'DefaultUserRole');
  key = organizationKey(orgId);
});

/** `${baseUrl}/v1/${orgId}...` as both SDKs build it; the query string is written by the caller. */
const send = (path: string, init: RequestInit = {}) => fetch(`${harness().baseUrl}/v1/${orgId}${path}`, init);

/** The query string openapi-fetch writes by default: arrays exploded (`a=1&a=2`), values through encodeURIComponent. */
const openapiFetchQuery = (query: Record<string, string | number | boolean | string[]>): string =>
  Object.entries(query)
    .flatMap(([name, value]) => [value].flat().map((item) => `${name}=${encodeURIComponent(String(item))}`))
    .join('&');

/** What httpx sends on every request besides what the SDK adds. */
const httpxHeaders = { accept: '*/*', 'accept-encoding': 'gzip, deflate', 'user-agent': 'python-httpx/0.28.1' };

/** The TypeScript SDK's error body reading: the first of message, error, detail. */
const sdkErrorMessage = (body: Record<string, unknown>): unknown =>
  ['message', 'error', 'detail'].map((name) => body[name]).find(Boolean);

/** Splits an NDJSON body as both SDKs do: on line ends, trimmed, empty lines skipped. */
const readNdjson = async (response: Response): Promise<Record<string, unknown>[]> => {
  const events: Record<string, unknown>[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body ?? []) {
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    const lines = buffered.split(/\r\n|\r|\n/);
    buffered = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') events.push(JSON.parse(line.trim()));
  }
  if (buffered.trim() !== '') events.push(JSON.parse(buffered.trim()));
  return events;
};

const typeScriptSignIn = (userId: string) =>
  send('/user/signin_with_api_key', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'x-api-key': key.api_key,
      'x-api-key-id': key.api_key_id,
      'x-user-id': userId,
    },
  });

const pythonSignIn = (userId: string) =>
  send('/user/signin_with_api_key', {
    method: 'POST',
    headers: {
      ...httpxHeaders,
      'content-length': '0',
      'x-api-key': key.api_key,
      'x-api-key-id': key.api_key_id,
      'x-user-id': userId,
    },
  });

/** A multipart body as httpx writes it for `data={...}` plus `files={"recorded_message": ("message.txt", ..., "text/plain; charset=utf-8")}`. */
const httpxMultipart = (fields: Record<string, string>, text: string): { body: Buffer; contentType: string } => {
  const boundary = randomBytes(16).toString('hex');
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="recorded_message"; filename="message.txt"\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n`,
  );
  return {
    body: Buffer.from(`${parts.join('')}--${boundary}--\r\n`, 'utf8'),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
};

/** The TypeScript SDK's text interaction: a FormData with one Blob part named recorded_message, no Content-Type of its own. */
const typeScriptForm = (text: string): FormData => {
  const form = new FormData();
  form.append('recorded_message', new Blob([text], { type: 'text/plain; charset=utf-8' }), 'message.txt');
  return form;
};

const bearer = (session: Session) => ({ Authorization: `Bearer ${session.token}` });

let typeScriptConversation: string;
let pythonConversation: string;

describe('sign-in as the SDKs do it', () => {
  it('signs in with the TypeScript SDK request (Content-Type: application/json and no body)', async () => {
    // Act
    const response = await typeScriptSignIn(user.userId);

    // Assess
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id_token: string; expires_at: string };
    expect(typeof body.id_token).toBe('string');
    // The SDK refreshes when expires_at is within five minutes: it must parse and lie further ahead.
    expect(new Date(body.expires_at).getTime() - Date.now()).toBeGreaterThan(5 * 60_000);
    const users = await send('/user/', { headers: { Authorization: `Bearer ${body.id_token}` } });
    expect(users.status).toBe(200);
  });

  it('signs in with the Python SDK request and answers an expires_at with a UTC offset (pydantic AwareDatetime)', async () => {
    // Act
    const response = await pythonSignIn(user.userId);

    // Assess
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id_token: string; expires_at: string };
    expect(body.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
    const users = await send('/user/', { headers: { ...httpxHeaders, Authorization: `Bearer ${body.id_token}` } });
    expect(users.status).toBe(200);
  });

  it('answers a rate-limited sign-in with 429 and the Retry-After and X-RateLimit-* headers the SDKs read', async () => {
    // Prepare: a key of its own, whose failure budget no other test shares; right sign-ins hand back
    // their token and are not limited, so the limit a client meets is the one on wrong secrets.
    const limited = await createUserSession(admin, 'DefaultUserRole');
    const ownKey = (await (
      await send('/organization/api_key/', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${admin.token}` },
        body: JSON.stringify({ duration: 'P1D', role_name: 'DefaultUserRole' }),
      })
    ).json()) as { api_key_id: string; api_key: string };
    const signIn = (secret: string) =>
      send('/user/signin_with_api_key', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'x-api-key': secret,
          'x-api-key-id': ownKey.api_key_id,
          'x-user-id': limited.userId,
        },
      });
    for (let attempt = 0; attempt < 5; attempt += 1) expect((await signIn('wrong')).status).toBe(401);

    // Act
    const response = await signIn(ownKey.api_key);

    // Assess
    expect(response.status).toBe(429);
    // Both SDKs retry a POST on 429 only when Retry-After is given, in seconds or as an HTTP date.
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(Number.parseInt(response.headers.get('x-ratelimit-limit') ?? '', 10)).toBe(5);
    expect(Number.parseInt(response.headers.get('x-ratelimit-remaining') ?? '', 10)).toBe(0);
    // The TypeScript SDK reads X-RateLimit-Reset as epoch seconds.
    const reset = Number.parseInt(response.headers.get('x-ratelimit-reset') ?? '', 10) * 1000;
    expect(reset).toBeGreaterThan(Date.now() - 1000);
    // The bucket is full again once 5 tokens have come back at 5 a minute.
    expect(reset).toBeLessThanOrEqual(Date.now() + 60_000 + 1000);
    expect(typeof sdkErrorMessage((await response.json()) as Record<string, unknown>)).toBe('string');
  });
});

describe('list calls as the SDKs encode them', () => {
  it('accepts array query parameters encoded as the TypeScript SDK encodes them', async () => {
    // Prepare
    const other = await createUserSession(admin, 'DefaultUserRole');
    const query = openapiFetchQuery({
      user_id: [user.userId, other.userId],
      sort_by: ['-email'],
      is_verified: true,
      limit: 10,
    });

    // Act
    const response = await send(`/user/?${query}`, {
      headers: { ...bearer(admin), 'Content-Type': 'application/json' },
    });

    // Assess
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      users: { user_id: string; email: string }[];
      has_more: boolean;
      continuation_token: unknown;
    };
    const emails = body.users.map((listed) => listed.email);
    expect(new Set(body.users.map((listed) => listed.user_id))).toEqual(new Set([user.userId, other.userId]));
    expect(emails).toEqual([...emails].sort().reverse());
    expect(body).toMatchObject({ has_more: false, continuation_token: null });
  });

  it('reads a + sort prefix percent-encoded as %2B, as both SDKs send it', async () => {
    // Act
    const response = await send(`/user/?sort_by=%2Bemail&sort_by=-first_name`, {
      headers: { ...httpxHeaders, ...bearer(admin) },
    });

    // Assess
    expect(response.status).toBe(200);
    const emails = ((await response.json()) as { users: { email: string }[] }).users.map((listed) => listed.email);
    expect(emails).toEqual([...emails].sort());
  });
});

describe('create, interact and finish a conversation as the SDKs stream and send them', () => {
  it('streams a new conversation to the TypeScript SDK request (Accept: application/x-ndjson, JSON body)', async () => {
    // Act
    const response = await send(`/conversation/?${openapiFetchQuery({ response_format: 'text' })}`, {
      method: 'POST',
      headers: { ...bearer(user), Accept: 'application/x-ndjson', 'Content-Type': 'application/json' },
      body: JSON.stringify({ service_id: serviceId, service_version_set_name: 'release' }),
    });

    // Assess
    expect(response.status).toBe(201);
    const events = await readNdjson(response);
    expectPythonParsable(events, createUnion);
    expect(events[0]).toMatchObject({ type: 'conversation-created' });
    expect(events.at(-1)).toMatchObject({ type: 'interaction-complete', conversation_completed: false });
    typeScriptConversation = String(events[0]?.conversation_id);
  });

  it('takes a text message as the TypeScript SDK sends it (a multipart Blob part named recorded_message)', async () => {
    // Act
    const response = await send(
      `/conversation/${typeScriptConversation}/interact?request_format=text&response_format=text`,
      {
        method: 'POST',
        headers: { ...bearer(user), Accept: 'application/x-ndjson' },
        body: typeScriptForm('I need help with my printer'),
      },
    );

    // Assess
    expect(response.status).toBe(200);
    const events = await readNdjson(response);
    expectPythonParsable(events, interactUnion);
    expect(events[0]).toMatchObject({ type: 'user-message-available', user_message: 'I need help with my printer' });
    const pieces = events.filter((event) => event.type === 'new-message').map((event) => event.message);
    expect(events.at(-1)).toMatchObject({ type: 'interaction-complete', full_message: pieces.join('') });
  });

  it('finishes on a TypeScript SDK request that carries Content-Type: application/json and no body', async () => {
    // Act
    const response = await send(`/conversation/${typeScriptConversation}/finish/`, {
      method: 'POST',
      headers: { ...bearer(user), 'Content-Type': 'application/json' },
    });

    // Assess
    expect(response.status).toBe(204);
  });
  it('streams a new conversation to the Python SDK request (query from model_dump, httpx JSON body)', async () => {
    // Act
    const response = await send(`/conversation/?response_format=text&current_agent_action_type=%5E.%2A%24`, {
      method: 'POST',
      headers: { ...httpxHeaders, ...bearer(user), accept: 'application/x-ndjson', 'content-type': 'application/json' },
      body: JSON.stringify({ service_id: serviceId, service_version_set_name: 'release', tags: {} }),
    });

    // Assess
    expect(response.status).toBe(201);
    const events = await readNdjson(response);
    expectPythonParsable(events, createUnion);
    expect(events[0]).toMatchObject({ type: 'conversation-created' });
    pythonConversation = String(events[0]?.conversation_id);
  });

  it('takes a text message as the Python SDK sends it (httpx multipart with initial_message_type and a file part)', async () => {
    // Prepare
    const { body, contentType } = httpxMultipart(
      { initial_message_type: 'user-message' },
      'Grüße! I need help with my printer',
    );

    // Act
    const response = await send(
      `/conversation/${pythonConversation}/interact?request_format=text&response_format=text`,
      {
        method: 'POST',
        headers: { ...httpxHeaders, ...bearer(user), accept: 'application/x-ndjson', 'content-type': contentType },
        body,
      },
    );

    // Assess
    expect(response.status).toBe(200);
    const events = await readNdjson(response);
    expectPythonParsable(events, interactUnion);
    expect(events[0]).toMatchObject({
      type: 'user-message-available',
      user_message: 'Grüße! I need help with my printer',
    });
    expect(events.at(-1)).toMatchObject({ type: 'interaction-complete' });
  });

  it('takes a skip as the Python SDK sends it (a URL-encoded form, since it carries no file)', async () => {
    // Act
    const response = await send(
      `/conversation/${pythonConversation}/interact?request_format=text&response_format=text`,
      {
        method: 'POST',
        headers: {
          ...httpxHeaders,
          ...bearer(user),
          accept: 'application/x-ndjson',
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'initial_message_type=skip&recorded_message=',
      },
    );

    // Assess
    expect(response.status).toBe(200);
    const events = await readNdjson(response);
    expectPythonParsable(events, interactUnion);
    expect(events.map((event) => event.type)).not.toContain('user-message-available');
    expect(events.at(-1)).toMatchObject({ type: 'interaction-complete' });
  });

  it('finishes on the Python SDK request (POST .../finish/ with no body and no Content-Type)', async () => {
    // Act
    const response = await send(`/conversation/${pythonConversation}/finish/`, {
      method: 'POST',
      headers: { ...httpxHeaders, 'content-length': '0', ...bearer(user) },
    });

    // Assess
    expect(response.status).toBe(204);
  });

  it('ends the session inside the types the Python SDK accepts, with conversation_completed on the last event', async () => {
    // Prepare
    const created = await send('/conversation/?response_format=text&current_agent_action_type=%5E.%2A%24', {
      method: 'POST',
      headers: { ...httpxHeaders, ...bearer(user), accept: 'application/x-ndjson', 'content-type': 'application/json' },
      body: JSON.stringify({ service_id: serviceId, service_version_set_name: 'release', tags: {} }),
    });
    const conversationId = String((await readNdjson(created))[0]?.conversation_id);
    const { body, contentType } = httpxMultipart(
      { initial_message_type: 'user-message' },
      "Thanks, that's all. Goodbye!",
    );

    // Act
    const response = await send(`/conversation/${conversationId}/interact?request_format=text&response_format=text`, {
      method: 'POST',
      headers: { ...httpxHeaders, ...bearer(user), accept: 'application/x-ndjson', 'content-type': contentType },
      body,
    });

    // Assess
    const events = await readNdjson(response);
    expectPythonParsable(events, interactUnion);
    expect(events.at(-1)).toMatchObject({ type: 'interaction-complete', conversation_completed: true });
    const listed = await send(`/conversation/?id=${conversationId}`, { headers: bearer(user) });
    expect(((await listed.json()) as { conversations: unknown[] }).conversations[0]).toMatchObject({
      id: conversationId,
      is_finished: true,
    });
  });

  it('lists both conversations by repeated id parameters, newest first, with is_finished=true', async () => {
    // Act
    const query = openapiFetchQuery({
      id: [typeScriptConversation, pythonConversation],
      sort_by: ['-created_at'],
      is_finished: true,
    });
    const response = await send(`/conversation/?${query}`, { headers: bearer(user) });

    // Assess
    expect(response.status).toBe(200);
    const body = (await response.json()) as { conversations: { id: string }[] };
    expect(body.conversations.map((conversation) => conversation.id)).toEqual([
      pythonConversation,
      typeScriptConversation,
    ]);
  });
});

describe('error bodies as the SDKs map them', () => {
  it('answers an unknown conversation with 404 and a detail string (NotFoundError with that message)', async () => {
    // Act
    const response = await send(`/conversation/${'a'.repeat(24)}/finish/`, { method: 'POST', headers: bearer(user) });

    // Assess
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toContain('application/json');
    const message = sdkErrorMessage((await response.json()) as Record<string, unknown>);
    expect(typeof message).toBe('string');
    expect(message).not.toBe('');
  });

  it('answers an unknown path with 404 and a JSON detail', async () => {
    // Act
    const response = await send('/no_such_resource/', { headers: bearer(user) });

    // Assess
    expect(response.status).toBe(404);
    expect(await response.json()).toHaveProperty('detail');
  });

  it('answers an invalid query with 422 and detail as a list of {loc, msg, type} (ValidationError)', async () => {
    // Act
    const response = await send('/user/?limit=many', { headers: { ...httpxHeaders, ...bearer(admin) } });

    // Assess
    expect(response.status).toBe(422);
    const body = (await response.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] };
    expect(body.detail).toEqual([
      expect.objectContaining({ loc: ['query', 'limit'], msg: expect.any(String), type: expect.any(String) }),
    ]);
  });

  it('answers an interaction without recorded_message with 422 before any stream starts', async () => {
    // Prepare
    const form = new FormData();
    form.append('initial_message_type', 'user-message');

    // Act
    const response = await send(
      `/conversation/${typeScriptConversation}/interact?request_format=text&response_format=text`,
      {
        method: 'POST',
        headers: { ...bearer(user), Accept: 'application/x-ndjson' },
        body: form,
      },
    );

    // Assess
    expect(response.status).toBe(422);
    const body = (await response.json()) as { detail: { loc: unknown[] }[] };
    expect(body.detail.map((issue) => issue.loc[0])).toContain('body');
  });
});

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import type { PlatformCredentials } from '../../infra/local/platform';
import { organizationBody } from '../integration/support/identity';

/**
 * A minimal HTTP client of the platform for the bench, with fetch only: the integration
 * support modules read their base URL from vitest's `inject`, which a plain script cannot use
 * (their pure pieces, such as an organization's body, are shared).
 */
export interface Session {
  baseUrl: string;
  orgId: string;
  userId: string;
  token: string;
}

export interface ApiInit {
  method?: string;
  token?: string;
  body?: unknown;
  /** A body sent as is (multipart forms, audio). */
  raw?: FormData | Uint8Array;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

const urlOf = (baseUrl: string, path: string, query: Record<string, string> = {}): string => {
  const url = new URL(path, baseUrl);
  for (const [name, value] of Object.entries(query)) url.searchParams.append(name, value);
  return url.toString();
};

const requestInit = (init: ApiInit): RequestInit => {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const body = init.body !== undefined ? JSON.stringify(init.body) : init.raw;
  return { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, body };
};

/** One JSON request; throws unless the status is the expected one. */
export const call = async (
  baseUrl: string,
  what: string,
  path: string,
  init: ApiInit,
  expected: number,
  // biome-ignore lint/suspicious/noExplicitAny: fixture responses are read field by field
): Promise<any> => {
  const response = await fetch(urlOf(baseUrl, path, init.query), requestInit(init));
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${what}: expected ${expected}, got ${response.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
};

export type StreamedEvent = Record<string, unknown> & { type: string };

export interface TimedStream {
  status: number;
  /** performance.now() when the request was handed to fetch. */
  sentAt: number;
  /** Each NDJSON line with the performance.now() at which its end reached the client. */
  events: { at: number; event: StreamedEvent }[];
  /** The body when the status is not a success (an error document, not a stream). */
  errorText?: string;
  /** The Retry-After header of a refusal. */
  retryAfter?: string | null;
}

/** Sends a request answered with NDJSON and reads it to the end, timing each event's arrival. */
export const streamTimed = async (baseUrl: string, path: string, init: ApiInit): Promise<TimedStream> => {
  const sentAt = performance.now();
  const response = await fetch(urlOf(baseUrl, path, init.query), requestInit(init));
  if (response.status >= 300 || !response.body) {
    return {
      status: response.status,
      sentAt,
      events: [],
      errorText: await response.text(),
      retryAfter: response.headers.get('retry-after'),
    };
  }
  const events: TimedStream['events'] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body) {
    const at = performance.now();
    buffered += decoder.decode(chunk as Uint8Array, { stream: true });
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line !== '') events.push({ at, event: JSON.parse(line) as StreamedEvent });
      newline = buffered.indexOf('\n');
    }
  }
  if (buffered.trim() !== '') events.push({ at: performance.now(), event: JSON.parse(buffered) as StreamedEvent });
  return { status: response.status, sentAt, events };
};

/** Signs in with an API key (the operation allows 5 per minute per key and user: once per user here). */
export const signIn = async (
  baseUrl: string,
  orgId: string,
  key: { api_key_id: string; api_key: string },
  userId: string,
): Promise<Session> => {
  const body = await call(
    baseUrl,
    'sign in with API key',
    `/v1/${orgId}/user/signin_with_api_key`,
    { method: 'POST', headers: { 'x-api-key': key.api_key, 'x-api-key-id': key.api_key_id, 'x-user-id': userId } },
    200,
  );
  return { baseUrl, orgId, userId, token: body.id_token as string };
};

export const rootSession = (baseUrl: string, credentials: PlatformCredentials): Promise<Session> =>
  signIn(baseUrl, credentials.org_id, credentials, credentials.user_id);

/**
 * A new user of the root organization with DefaultUserRole (or `roleName`): invited, verified
 * through the returned link, and signed in with the root organization's API key (as the
 * integration fixtures do for the root organization).
 */
export const createUser = async (
  admin: Session,
  credentials: PlatformCredentials,
  roleName = 'DefaultUserRole',
): Promise<Session> => {
  const suffix = randomBytes(5).toString('hex');
  const invited = await call(
    admin.baseUrl,
    'invite user',
    `/v1/${admin.orgId}/user/`,
    {
      method: 'POST',
      token: admin.token,
      body: {
        first_name: 'Bench',
        last_name: `User ${suffix}`,
        email: `bench-${suffix}@example.com`,
        role_name: roleName,
      },
    },
    201,
  );
  const verified = await fetch(invited.verify_link as string);
  if (verified.status !== 200) throw new Error(`verify link: ${verified.status} ${await verified.text()}`);
  await verified.arrayBuffer();
  return signIn(admin.baseUrl, admin.orgId, credentials, invited.user_id as string);
};

/**
 * A new organization, created by the root organization's platform administrator (`X-ORG-ID`), and
 * a session of its super administrator (signed in with a key of the organization).
 */
export const createOrganization = async (admin: Session): Promise<Session> => {
  const orgId = `bench-${randomBytes(5).toString('hex')}`;
  const crossOrg = { 'x-org-id': admin.orgId };
  const path = `/v1/${orgId}`;
  const asAdmin = { token: admin.token, headers: crossOrg };
  await call(
    admin.baseUrl,
    'create organization',
    `${path}/organization/`,
    // Creating an organization names its database cluster (the reference's required header).
    {
      method: 'PUT',
      token: admin.token,
      headers: { ...crossOrg, 'x-database-cluster-name': 'default' },
      body: organizationBody(),
    },
    201,
  );
  const users = await call(admin.baseUrl, 'list users', `${path}/user/`, asAdmin, 200);
  const superUser = (users.users as { user_id: string; role: string }[]).find(
    (user) => user.role === 'DefaultSuperAdministratorRole',
  );
  if (!superUser) throw new Error('the new organization has no super administrator');
  const key = await call(
    admin.baseUrl,
    'create API key',
    `${path}/organization/api_key/`,
    { ...asAdmin, body: { name: 'bench', duration: 'P1D', role_name: 'DefaultSuperAdministratorRole' } },
    201,
  );
  return signIn(admin.baseUrl, orgId, key, superUser.user_id);
};

/** An active service over a new agent and the sample state machine (greet → triage → help or goodbye) unless another is given. */
export const createService = async (
  admin: Session,
  machineVersion: unknown = sampleStateMachineVersion(),
): Promise<string> => {
  const { baseUrl, orgId, token } = admin;
  const suffix = randomBytes(4).toString('hex');
  const base = `/v1/${orgId}/organization`;
  const agent = await call(
    baseUrl,
    'create agent',
    `${base}/agent`,
    { token, body: { agent_name: `Ada ${suffix}` } },
    201,
  );
  await call(
    baseUrl,
    'create agent version',
    `${base}/agent/${agent.id}/`,
    { token, body: sampleAgentVersionBody() },
    201,
  );
  const machine = await call(
    baseUrl,
    'create state machine',
    `${base}/service_hierarchical_state_machine`,
    { token, body: { state_machine_name: `Support ${suffix}` } },
    201,
  );
  await call(
    baseUrl,
    'create state machine version',
    `${base}/service_hierarchical_state_machine/${machine.id}/`,
    { token, body: machineVersion },
    201,
  );
  const service = await call(
    baseUrl,
    'create service',
    `/v1/${orgId}/service/`,
    {
      token,
      body: {
        agent_id: agent.id,
        service_hierarchical_state_machine_id: machine.id,
        name: `Bench ${suffix}`,
        description: 'Helps and says goodbye.',
        is_active: true,
      },
    },
    201,
  );
  return service.id as string;
};

/** Streams a new conversation's opening turn (`response_format=text`). */
export const startConversation = (user: Session, serviceId: string): Promise<TimedStream> =>
  streamTimed(user.baseUrl, `/v1/${user.orgId}/conversation/`, {
    method: 'POST',
    token: user.token,
    body: { service_id: serviceId },
    query: { response_format: 'text' },
  });

/** Sends one text message (multipart, one `recorded_message` field) and streams the agent's turn. */
export const interact = (user: Session, conversationId: string, text: string): Promise<TimedStream> => {
  const form = new FormData();
  form.append('recorded_message', text);
  form.append('initial_message_type', 'user-message');
  return streamTimed(user.baseUrl, `/v1/${user.orgId}/conversation/${conversationId}/interact`, {
    method: 'POST',
    token: user.token,
    raw: form,
    query: { request_format: 'text', response_format: 'text' },
  });
};

/** Runs `task` over `items` with at most `limit` in flight. */
export const mapLimit = async <T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> => {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
};

import { sampleAgentVersionBody } from '../../../shared/agents/fixtures';
import { sampleStateMachineVersion } from '../../../shared/state-machines/fixtures';
import type { StateMachineVersionBody } from '../../../shared/state-machines/schemas';
import { api, type QueryValue, streamEvents } from './client';
import type { Session } from './identity';

/**
 * Conversation fixtures: a service on the sample state machine (greet → triage → help or
 * goodbye), and helpers that create and talk to conversations over HTTP.
 */

const created = (what: string, response: { status: number; text: string; body: { id?: string } }): string => {
  if (response.status !== 201 || !response.body.id) throw new Error(`${what}: ${response.status} ${response.text}`);
  return response.body.id;
};

/** An active service with an agent and a state machine (the sample one unless given). */
export const createService = async (
  admin: Session,
  machine: StateMachineVersionBody = sampleStateMachineVersion(),
): Promise<{ serviceId: string; agentId: string; machineId: string }> => {
  const base = `/v1/${admin.orgId}/organization`;
  const suffix = Math.random().toString(36).slice(2, 8);
  const agentId = created(
    'create agent',
    await api(`${base}/agent`, { method: 'POST', token: admin.token, body: { agent_name: `Ada ${suffix}` } }),
  );
  const version = await api(`${base}/agent/${agentId}/`, { method: 'POST', token: admin.token, body: sampleAgentVersionBody() });
  if (version.status !== 201) throw new Error(`create agent version: ${version.status} ${version.text}`);
  const machineId = created(
    'create state machine',
    await api(`${base}/service_hierarchical_state_machine`, {
      method: 'POST',
      token: admin.token,
      body: { state_machine_name: `Support ${suffix}` },
    }),
  );
  const machineVersion = await api(`${base}/service_hierarchical_state_machine/${machineId}/`, {
    method: 'POST',
    token: admin.token,
    body: machine,
  });
  if (machineVersion.status !== 201) throw new Error(`create state machine version: ${machineVersion.status} ${machineVersion.text}`);
  const serviceId = created(
    'create service',
    await api(`/v1/${admin.orgId}/service/`, {
      method: 'POST',
      token: admin.token,
      body: {
        agent_id: agentId,
        service_hierarchical_state_machine_id: machineId,
        name: `Support ${suffix}`,
        description: 'Helps and says goodbye.',
        is_active: true,
      },
    }),
  );
  return { serviceId, agentId, machineId };
};

export type StreamedEvent = Record<string, unknown> & { type: string };

export const startConversation = async (
  session: Session,
  body: Record<string, unknown>,
  query: Record<string, QueryValue> = {},
) => {
  const response = await streamEvents(`/v1/${session.orgId}/conversation/`, {
    method: 'POST',
    token: session.token,
    body,
    query: { response_format: 'text', ...query },
  });
  const events = response.events.map(({ event }) => event as StreamedEvent);
  const first = events[0];
  return { ...response, events, conversationId: first?.type === 'conversation-created' ? String(first.conversation_id) : '' };
};

/** A multipart form with one text message, as the reference's clients send it. */
export const textForm = (text: string, fields: Record<string, string | string[]> = {}): FormData => {
  const form = new FormData();
  form.append('recorded_message', text);
  form.append('initial_message_type', 'user-message');
  for (const [name, value] of Object.entries(fields)) for (const item of [value].flat()) form.append(name, item);
  return form;
};

export const interact = async (
  session: Session,
  conversationId: string,
  form: FormData | string,
  query: Record<string, QueryValue> = {},
) => {
  const response = await streamEvents(`/v1/${session.orgId}/conversation/${conversationId}/interact`, {
    method: 'POST',
    token: session.token,
    raw: typeof form === 'string' ? textForm(form) : form,
    query: { request_format: 'text', response_format: 'text', ...query },
  });
  return { ...response, events: response.events.map(({ event }) => event as StreamedEvent), timed: response.events };
};

export const typesOf = (events: StreamedEvent[]): string[] => events.map((event) => event.type);

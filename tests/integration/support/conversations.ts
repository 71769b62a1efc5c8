import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import type { StateMachineVersionBody } from '#shared/state-machine/schemas';
import { type QueryValue, streamAndDisconnect, streamEvents } from './client';
import * as fixtures from './fixtures';
import type { Session } from './identity';

/**
 * Conversation fixtures: a service on the sample state machine (greet → triage → help or
 * goodbye), and helpers that create and talk to conversations over HTTP.
 */

/** An active service with the sample agent version and a state machine (the sample one unless given). */
export const createService = async (
  admin: Session,
  machine: StateMachineVersionBody = sampleStateMachineVersion(),
): Promise<{ serviceId: string; agentId: string; machineId: string }> => {
  const agentId = await fixtures.createAgent(admin, { body: sampleAgentVersionBody() });
  const machineId = await fixtures.createStateMachine(admin, { body: machine });
  const { serviceId } = await fixtures.createService(admin, {
    agentId,
    stateMachineId: machineId,
    body: { description: 'Helps and says goodbye.' },
  });
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
  return {
    ...response,
    events,
    conversationId: first?.type === 'conversation-created' ? String(first.conversation_id) : '',
  };
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

/**
 * Interacts and disconnects once `dropAfter` events have arrived, as a client whose connection
 * breaks: the events read before, all of them if the stream ended first.
 */
export const interactAndDisconnect = async (
  session: Session,
  conversationId: string,
  text: string,
  dropAfter: number,
  query: Record<string, QueryValue> = {},
): Promise<StreamedEvent[]> =>
  (await streamAndDisconnect(
    `/v1/${session.orgId}/conversation/${conversationId}/interact`,
    { token: session.token, raw: textForm(text), query: { request_format: 'text', response_format: 'text', ...query } },
    dropAfter,
  )) as StreamedEvent[];

/** `GET …/conversation/{id}/events`: the stored events after `query.after` (or the header), read to the end. */
export const conversationEvents = async (
  session: Session,
  conversationId: string,
  query: Record<string, QueryValue> = {},
  headers: Record<string, string> = {},
) => {
  const response = await streamEvents(`/v1/${session.orgId}/conversation/${conversationId}/events`, {
    token: session.token,
    query,
    headers,
  });
  return { ...response, events: response.events.map(({ event }) => event as StreamedEvent) };
};

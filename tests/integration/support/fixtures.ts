import { randomBytes } from 'node:crypto';
import { sampleAgentVersionBody } from '#shared/agent/fixtures';
import type { AgentVersionBody } from '#shared/agent/schemas';
import { sampleStateMachineVersion } from '#shared/state-machine/fixtures';
import type { StateMachineVersionBody } from '#shared/state-machine/schemas';
import { api, expectStatus } from './client';
import { createUserSession, type Session } from './identity';

/**
 * Domain fixtures for integration tests: agents, state machines and services made through
 * the HTTP surface, so every area starts from records the platform itself wrote.
 */

export { sampleAgentVersionBody, sampleStateMachineVersion };

/** A name no other test in the organization uses. */
export const uniqueName = (prefix: string): string => `${prefix} ${randomBytes(4).toString('hex')}`;

/**
 * Agents and state machines are created alike: a named head at `/organization/{collection}`,
 * then `versions` versions of it, version n with `versionBody(n)`. Returns the head's id.
 */
const createVersioned = async (
  session: Session,
  what: string,
  collection: string,
  head: Record<string, string>,
  versions: number,
  versionBody: (version: number) => unknown,
): Promise<string> => {
  const created = await api(`/v1/${session.orgId}/organization/${collection}`, { token: session.token, body: head });
  expectStatus(`create ${what}`, created, 201);
  for (let version = 1; version <= versions; version += 1) {
    const response = await api(`/v1/${session.orgId}/organization/${collection}/${created.body.id}/`, {
      token: session.token,
      body: versionBody(version),
    });
    expectStatus(`create ${what} version`, response, 201);
  }
  return created.body.id as string;
};

/** A new agent, with one (complete) version unless `versions` is 0; `body` is every version's body if given. */
export const createAgent = (
  session: Session,
  options: { name?: string; versions?: number; body?: AgentVersionBody } = {},
): Promise<string> =>
  createVersioned(
    session,
    'agent',
    'agent',
    { agent_name: options.name ?? uniqueName('Agent') },
    options.versions ?? 1,
    (version) => options.body ?? sampleAgentVersionBody({ background: `Version ${version}.` }),
  );

/** A new service hierarchical state machine, with one valid version (the sample one unless `body` is given) unless `versions` is 0. */
export const createStateMachine = (
  session: Session,
  options: { name?: string; versions?: number; body?: StateMachineVersionBody } = {},
): Promise<string> =>
  createVersioned(
    session,
    'state machine',
    'service_hierarchical_state_machine',
    { state_machine_name: options.name ?? uniqueName('Flow') },
    options.versions ?? 1,
    () => options.body ?? sampleStateMachineVersion(),
  );

export interface ServiceFixture {
  serviceId: string;
  agentId: string;
  stateMachineId: string;
}

/**
 * A new service over a new agent and state machine (one version each, unless given), active
 * unless told otherwise. `body` overrides fields of the create-service request.
 */
export const createService = async (
  session: Session,
  options: { agentId?: string; stateMachineId?: string; body?: Record<string, unknown> } = {},
): Promise<ServiceFixture> => {
  const agentId = options.agentId ?? (await createAgent(session));
  const stateMachineId = options.stateMachineId ?? (await createStateMachine(session));
  const response = await api(`/v1/${session.orgId}/service/`, {
    token: session.token,
    body: {
      agent_id: agentId,
      service_hierarchical_state_machine_id: stateMachineId,
      name: uniqueName('Service'),
      description: 'A service made by a test.',
      is_active: true,
      ...options.body,
    },
  });
  expectStatus('create service', response, 201);
  return { serviceId: response.body.id as string, agentId, stateMachineId };
};

/** A custom role with the given grants (action Allow unless given), created by `owner`; returns its name. */
export const createRole = async (
  owner: Session,
  grants: { permission_name: string; conditions: Record<string, unknown>; action?: 'Allow' | 'Deny' }[],
  frontendView: 'client' | 'admin' = 'client',
): Promise<string> => {
  const roleName = uniqueName('Role').replace(' ', '-');
  const response = await api(`/v1/${owner.orgId}/role/`, {
    token: owner.token,
    body: {
      role_name: roleName,
      description: 'A role made by a test.',
      permission_grants: grants.map((grant) => ({ action: 'Allow', ...grant })),
      frontend_view: frontendView,
      is_base_role: false,
      inherited_from: null,
    },
  });
  expectStatus('create role', response, 201);
  return roleName;
};

/** A session of a new user of `owner`'s organization whose role is a new custom role with these grants. */
export const createGrantedSession = async (
  owner: Session,
  grants: Parameters<typeof createRole>[1],
  /** `admin` opens the web app's console. */
  frontendView: 'client' | 'admin' = 'client',
): Promise<Session & { email: string }> => createUserSession(owner, await createRole(owner, grants, frontendView));

/** Records that exist, for path parameters of these names, so requests made from samples get past "not found". */
export const knownPathValues = (admin: Session, service: ServiceFixture): Record<string, string> => ({
  agent_id: service.agentId,
  service_id: service.serviceId,
  service_hierarchical_state_machine_id: service.stateMachineId,
  state_machine_id: service.stateMachineId,
  requested_user_id: admin.userId,
  user_id: admin.userId,
  role_name: 'DefaultUserRole',
});

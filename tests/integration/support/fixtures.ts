import { randomBytes } from 'node:crypto';
import { sampleAgentVersionBody } from '../../../shared/agents/fixtures';
import { sampleStateMachineVersion } from '../../../shared/state-machines/fixtures';
import { api } from './client';
import type { Session } from './identity';

/**
 * Domain fixtures for integration tests: agents, state machines and services made through
 * the HTTP surface, so every area starts from records the platform itself wrote.
 */

export { sampleAgentVersionBody, sampleStateMachineVersion };

const expectStatus = (what: string, response: { status: number; text: string }, status: number) => {
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`);
};

/** A name no other test in the organization uses. */
export const uniqueName = (prefix: string): string => `${prefix} ${randomBytes(4).toString('hex')}`;

/** A new agent, with one (complete) version unless `versions` is 0. */
export const createAgent = async (session: Session, options: { name?: string; versions?: number } = {}): Promise<string> => {
  const created = await api(`/v1/${session.orgId}/organization/agent`, {
    token: session.token,
    body: { agent_name: options.name ?? uniqueName('Agent') },
  });
  expectStatus('create agent', created, 201);
  for (let version = 0; version < (options.versions ?? 1); version += 1) {
    const response = await api(`/v1/${session.orgId}/organization/agent/${created.body.id}/`, {
      token: session.token,
      body: sampleAgentVersionBody({ background: `Version ${version + 1}.` }),
    });
    expectStatus('create agent version', response, 201);
  }
  return created.body.id as string;
};

/** A new service hierarchical state machine, with one valid version unless `versions` is 0. */
export const createStateMachine = async (
  session: Session,
  options: { name?: string; versions?: number } = {},
): Promise<string> => {
  const created = await api(`/v1/${session.orgId}/organization/service_hierarchical_state_machine`, {
    token: session.token,
    body: { state_machine_name: options.name ?? uniqueName('Flow') },
  });
  expectStatus('create state machine', created, 201);
  for (let version = 0; version < (options.versions ?? 1); version += 1) {
    const response = await api(
      `/v1/${session.orgId}/organization/service_hierarchical_state_machine/${created.body.id}/`,
      { token: session.token, body: sampleStateMachineVersion() },
    );
    expectStatus('create state machine version', response, 201);
  }
  return created.body.id as string;
};

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

/**
 * A custom role with the given grants (action Allow unless given), created by `owner`, whose
 * name is returned for `createUserSession`.
 */
export const createRole = async (
  owner: Session,
  grants: { permission_name: string; conditions: Record<string, unknown>; action?: 'Allow' | 'Deny' }[],
): Promise<string> => {
  const roleName = uniqueName('Role').replace(' ', '-');
  const response = await api(`/v1/${owner.orgId}/role/`, {
    token: owner.token,
    body: {
      role_name: roleName,
      description: 'A role made by a test.',
      permission_grants: grants.map((grant) => ({ action: 'Allow', ...grant })),
      frontend_view: 'client',
      is_base_role: false,
      inherited_from: null,
    },
  });
  expectStatus('create role', response, 201);
  return roleName;
};

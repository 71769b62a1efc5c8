import { createAgent, createAgentVersion } from '../agent/agents';
import { sampleAgentVersionBody } from '../agent/fixtures';
import type { Caller } from '../kernel/caller';
import { newId } from '../kernel/ids';
import { sampleStateMachineVersion } from '../state-machine/fixtures';
import { createStateMachine, createStateMachineVersion } from '../state-machine/state-machines';
import { createServiceRequest } from './schemas';
import { createService } from './services';

/**
 * Records for the domain tests that run against DynamoDB Local, written through the domain
 * functions by a made-up user whose every permission check passes.
 */
export const caller: Caller = {
  userId: 'user',
  homeOrgId: 'org',
  orgId: 'org',
  roleId: 'role',
  roleName: 'DefaultSuperAdministratorRole',
  grants: [{ action: 'Allow', permission_name: '*', conditions: {} }],
  email: 'user@example.com',
  isVerified: true,
  tokenType: 'Bearer',
};

export interface AgentAndMachine {
  orgId: string;
  agentId: string;
  machineId: string;
}

/** A fresh organization with an agent and a state machine, one sample version each. */
export const prepareAgentAndMachine = async (): Promise<AgentAndMachine> => {
  const orgId = `org-${newId()}`;
  const agent = await createAgent(orgId, caller, 'Ada');
  await createAgentVersion(orgId, caller, agent.id, sampleAgentVersionBody());
  const machine = await createStateMachine(orgId, caller, 'Support flow');
  await createStateMachineVersion(orgId, caller, machine.id, sampleStateMachineVersion(), { dryRun: false });
  return { orgId, agentId: agent.id, machineId: machine.id };
};

/** A service over that agent and state machine; `extra` adds or replaces request fields. */
export const createSampleService = (
  { orgId, agentId, machineId }: AgentAndMachine,
  name: string,
  isActive: boolean,
  extra: Record<string, unknown> = {},
) =>
  createService(
    orgId,
    caller,
    createServiceRequest.parse({
      agent_id: agentId,
      service_hierarchical_state_machine_id: machineId,
      name,
      description: 'A service.',
      is_active: isActive,
      ...extra,
    }),
  );

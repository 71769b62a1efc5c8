import { hasActiveServiceUsingAgent, hasActiveServiceUsingStateMachine } from '../data/service-repository';

/** Whether an active service uses the agent; such an agent cannot be deprecated. */
export const isAgentUsedByActiveService = (orgId: string, agentId: string): Promise<boolean> =>
  hasActiveServiceUsingAgent(orgId, agentId);

/** Whether an active service uses the state machine; such a machine cannot be deprecated. */
export const isStateMachineUsedByActiveService = (orgId: string, machineId: string): Promise<boolean> =>
  hasActiveServiceUsingStateMachine(orgId, machineId);

/**
 * Whether a simulation unit test uses the service; such a service cannot be deactivated.
 * Simulations do not exist yet, so nothing uses a service. When they arrive, this asks their
 * repository (by an index of unit tests per service) and the rule holds without other changes.
 */
export const isServiceUsedBySimulation = async (_orgId: string, _serviceId: string): Promise<boolean> => false;

/**
 * Whether a simulation unit test uses the version set; such a set cannot be deleted.
 * Simulations do not exist yet (see {@link isServiceUsedBySimulation}).
 */
export const isVersionSetUsedBySimulation = async (
  _orgId: string,
  _serviceId: string,
  _versionSetName: string,
): Promise<boolean> => false;

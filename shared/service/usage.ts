import { agents } from '../agent/agent-repository';
import { stateMachines } from '../state-machine/state-machine-repository';

/*
 * Which records are in use, for the rules that forbid deprecating, deactivating or deleting them.
 * Active use of agents and state machines is counted on their records by the service writes
 * (see `saveService`), and deprecation is conditioned on the same count.
 */

/** Whether an active service uses the agent; such an agent cannot be deprecated. */
export const isAgentUsedByActiveService = async (orgId: string, agentId: string): Promise<boolean> =>
  ((await agents.get(orgId, agentId, true))?.active_services ?? 0) > 0;

/** Whether an active service uses the state machine; such a machine cannot be deprecated. */
export const isStateMachineUsedByActiveService = async (orgId: string, machineId: string): Promise<boolean> =>
  ((await stateMachines.get(orgId, machineId, true))?.active_services ?? 0) > 0;

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

import { getAgent } from '../agent/index';
import { requireUnused, usageTargets } from '../data/usage-links';
import { getStateMachine } from '../state-machine/index';

/*
 * Which records are in use, for the rules that forbid deprecating, deactivating or deleting them.
 * Active use of agents and state machines is counted on their records by the service writes
 * (see `saveService`), and deprecation is conditioned on the same count.
 */

/** Whether an active service uses the agent; such an agent cannot be deprecated. */
export const isAgentUsedByActiveService = async (orgId: string, agentId: string): Promise<boolean> =>
  ((await getAgent(orgId, agentId, true))?.active_services ?? 0) > 0;

/** Whether an active service uses the state machine; such a machine cannot be deprecated. */
export const isStateMachineUsedByActiveService = async (orgId: string, machineId: string): Promise<boolean> =>
  ((await getStateMachine(orgId, machineId, true))?.active_services ?? 0) > 0;

/**
 * 400, naming the unit test, while a simulation unit test uses the service; such a service
 * cannot be deactivated. Unit tests move the service's revision when they start using it, so a
 * deactivation racing one fails as stale and checks again.
 */
export const requireServiceUnusedBySimulation = (orgId: string, serviceId: string): Promise<void> =>
  requireUnused(orgId, usageTargets.service(serviceId), `Service ${serviceId}`);

/** 400, naming the unit test, while a simulation unit test uses the version set; such a set cannot be deleted. */
export const requireVersionSetUnusedBySimulation = (
  orgId: string,
  serviceId: string,
  versionSetName: string,
): Promise<void> =>
  requireUnused(
    orgId,
    usageTargets.versionSet(serviceId, versionSetName),
    `Version set '${versionSetName}' of service ${serviceId}`,
  );

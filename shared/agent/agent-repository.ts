import { z } from 'zod';
import { defineVersionedEntity } from '../data/versioned-entity';
import { agentVersionRecord } from './schemas';

/** A stored agent version: the listed record plus its internal id. */
const storedAgentVersion = agentVersionRecord.extend({ id: z.string() });
export type StoredAgentVersion = z.infer<typeof storedAgentVersion>;

/** Agents: heads `AGENT`, name guards `AGENT_NAME`, versions `AGENT_VERSION`. */
export const agents = defineVersionedEntity({
  entity: 'agent',
  token: 'AGENT',
  label: 'agent',
  version: storedAgentVersion,
});

/**
 * Version `version` of an agent, or undefined when the agent or that version does not exist.
 * Versions are immutable, so a conversation may keep what it read for its whole life.
 */
export const getAgentVersion = (
  orgId: string,
  agentId: string,
  version: number,
): Promise<StoredAgentVersion | undefined> => agents.getVersion(orgId, agentId, version);

/** What other capabilities read of agents: heads by id, and the count of active services using one (services keep it). */
export const { get: getAgent, getMany: getAgents, activeServiceDelta: agentActiveServiceDelta } = agents;

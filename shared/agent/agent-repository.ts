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
 * What other capabilities read of agents: heads by id, a version (undefined when the agent or that
 * version does not exist; versions are immutable, so a conversation may keep what it read for its
 * whole life), and the count of active services using one (services keep it).
 */
export const {
  get: getAgent,
  getMany: getAgents,
  getVersion: getAgentVersion,
  activeServiceDelta: agentActiveServiceDelta,
} = agents;

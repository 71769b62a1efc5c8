import type { z } from 'zod';
import type { creatorInfo } from '../kernel/schemas';
import { agents } from './agent-repository';
import type { Paged } from '../data/paging';
import type { HeadListQuery, HeadView, VersionedHead, VersionListQuery } from '../data/versioned-entity';
import { newId, nowIso } from '../kernel/ids';
import type { AgentVersionBody, AgentVersionRecord } from './schemas';
import { agentVersionContent } from './version-content';

/** The user behind a change, as records store it. */
export type Creator = z.infer<typeof creatorInfo>;

/** Checks the caller's permission on a record once it is loaded; throws ForbiddenError. */
export type Authorize<T> = (record: T) => void;

/** What permission grant conditions can name on an agent or a state machine. */
export const versionedAttributes = (head: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>, idName: string) => ({
  id: head.id,
  [idName]: head.id,
  name: head.name,
  deprecated: head.deprecated,
});

export const agentAttributes = (agent: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>) =>
  versionedAttributes(agent, 'agent_id');

/** Creates an agent without versions; 409 when the name is taken in the organization. */
export const createAgent = (orgId: string, name: string, creator: Creator): Promise<{ id: string }> =>
  agents.create(orgId, name, creator);

export const listAgents = (orgId: string, query: HeadListQuery): Promise<Paged<HeadView>> => agents.list(orgId, query);

export const createAgentVersion = async (
  orgId: string,
  agentId: string,
  body: AgentVersionBody,
  options: { expectedVersion?: number; creator: Creator; authorize: Authorize<VersionedHead> },
): Promise<{ id: string; version: number; created_at: string }> => {
  const created = await agents.appendVersion(orgId, agentId, {
    expectedVersion: options.expectedVersion,
    authorize: options.authorize,
    build: (latest, next) => ({
      id: newId(),
      org_id: orgId,
      agent_id: agentId,
      version: next,
      ...agentVersionContent(body, latest),
      created_at: nowIso(),
      creator: options.creator,
    }),
  });
  return { id: created.id, version: created.version, created_at: created.created_at };
};

export const listAgentVersions = (
  orgId: string,
  agentId: string,
  query: VersionListQuery,
  authorize: Authorize<VersionedHead>,
): Promise<Paged<AgentVersionRecord>> => agents.listVersions(orgId, agentId, query, authorize);

/**
 * Deprecates an agent (the reference's "delete"): versions are kept and running conversations
 * continue, but no service can start using it. Fails with 400 while an active service uses it
 * (the rule of `isAgentUsedByActiveService`, enforced by the conditional write).
 */
export const deprecateAgent = (orgId: string, agentId: string, authorize: Authorize<VersionedHead>): Promise<void> =>
  agents.deprecate(orgId, agentId, authorize);

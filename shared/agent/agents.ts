import type { Paged } from '../data/paging';
import type { HeadListQuery, HeadView, VersionListQuery } from '../data/versioned-entity';
import type { VersionedHead } from '../data/versioned-head';
import { type Caller, creatorOf } from '../kernel/caller';
import type { NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import {
  asIfMissing,
  hasPermission,
  type PermissionName,
  permissionCheck,
  requirePermission,
} from '../kernel/permissions';
import { announceFrameworkResourceChange } from '../webhook/events';
import { agents } from './agent-repository';
import type { AgentVersionBody, AgentVersionRecord } from './schemas';
import { agentVersionContent } from './version-content';

/** A list query whose visible records the domain decides from the caller's permissions. */
export type HeadListRequest = Omit<HeadListQuery, 'visible'>;

type HeadAttributes = (head: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>) => Record<string, unknown>;

/** How permissions apply to one kind of head (agents, state machines). */
export interface HeadAccess {
  /** The permission to see a head at all. */
  read: PermissionName;
  attributesOf: HeadAttributes;
  notFound: (id: string) => NotFoundError;
}

/**
 * Checks `permission` on an agent or a state machine once the repository has loaded it. A caller
 * who may not even see the head gets the answer for a missing one, so its existence does not leak.
 */
export const requireOnHead =
  (caller: Caller, permission: PermissionName, access: HeadAccess) =>
  (head: VersionedHead): void =>
    asIfMissing(
      () => requirePermission(caller, permission, access.attributesOf(head)),
      () => access.notFound(head.id),
      () => hasPermission(caller, access.read, access.attributesOf(head)),
    );

/** Whether the caller may see an agent or a state machine (list filtering). */
export const visibleHeads = (caller: Caller, permission: PermissionName, attributesOf: HeadAttributes) => {
  const permitted = permissionCheck(caller, permission);
  return (head: HeadView): boolean => permitted(attributesOf(head));
};

/** What permission grant conditions can name on an agent or a state machine. */
export const versionedAttributes = (head: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>, idName: string) => ({
  id: head.id,
  [idName]: head.id,
  name: head.name,
  deprecated: head.deprecated,
});

export const agentAttributes = (agent: Pick<VersionedHead, 'id' | 'name' | 'deprecated'>) =>
  versionedAttributes(agent, 'agent_id');

const agentAccess: HeadAccess = {
  read: 'Organization:GetAgent',
  attributesOf: agentAttributes,
  notFound: agents.notFound,
};

/** Creates an agent without versions; 409 when the name is taken in the organization. */
export const createAgent = async (orgId: string, caller: Caller, name: string): Promise<{ id: string }> => {
  requirePermission(caller, 'Organization:CreateAgent', { name });
  const created = await agents.create(orgId, name, creatorOf(caller));
  await announceFrameworkResourceChange(orgId, { resourceType: 'agent', resourceId: created.id, change: 'created' });
  return created;
};

/** The agents the caller may see. */
export const listAgents = (orgId: string, caller: Caller, query: HeadListRequest): Promise<Paged<HeadView>> =>
  agents.list(orgId, { ...query, visible: visibleHeads(caller, 'Organization:GetAgent', agentAttributes) });

export const createAgentVersion = async (
  orgId: string,
  caller: Caller,
  agentId: string,
  body: AgentVersionBody,
  options: { expectedVersion?: number } = {},
): Promise<{ id: string; version: number; created_at: string }> => {
  const created = await agents.appendVersion(orgId, agentId, {
    expectedVersion: options.expectedVersion,
    authorize: requireOnHead(caller, 'Organization:CreateAgentVersion', agentAccess),
    build: (latest, next) => ({
      id: newId(),
      org_id: orgId,
      agent_id: agentId,
      version: next,
      ...agentVersionContent(body, latest),
      created_at: nowIso(),
      creator: creatorOf(caller),
    }),
  });
  await announceFrameworkResourceChange(orgId, {
    resourceType: 'agent',
    resourceId: agentId,
    change: 'updated',
    version: created.version,
  });
  return { id: created.id, version: created.version, created_at: created.created_at };
};

export const listAgentVersions = (
  orgId: string,
  caller: Caller,
  agentId: string,
  query: VersionListQuery,
): Promise<Paged<AgentVersionRecord>> =>
  agents.listVersions(orgId, agentId, query, requireOnHead(caller, 'Organization:GetAgent', agentAccess));

/**
 * Deprecates an agent (the reference's "delete"): versions are kept and running conversations
 * continue, but no service can start using it. Fails with 400 while an active service uses it
 * (the rule of `isAgentUsedByActiveService`, enforced by the conditional write).
 */
export const deprecateAgent = async (orgId: string, caller: Caller, agentId: string): Promise<void> => {
  await agents.deprecate(orgId, agentId, requireOnHead(caller, 'Organization:DeleteAgent', agentAccess));
  await announceFrameworkResourceChange(orgId, { resourceType: 'agent', resourceId: agentId, change: 'deleted' });
};

import {
  agentAttributes,
  createAgent,
  createAgentVersion,
  deprecateAgent,
  listAgents,
  listAgentVersions,
} from '#shared/agent/agents';
import { type Caller, creatorOf, hasPermission, requirePermission } from '#shared/kernel/caller';
import { pageBody } from '#shared/data/paging';
import type { VersionedHead } from '#shared/data/versioned-entity';
import { parseSortBy, parseVersionFilter } from '#shared/kernel/list-params';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import {
  createStateMachine,
  createStateMachineVersion,
  deleteStateMachine,
  listStateMachines,
  listStateMachineVersions,
  stateMachineAttributes,
} from '#shared/state-machine/state-machines';

/** A check of `permission` on an agent once the domain has loaded it. */
const onAgent = (caller: Caller, permission: string) => (agent: VersionedHead) =>
  requirePermission(caller, permission, agentAttributes(agent));
const onMachine = (caller: Caller, permission: string) => (machine: VersionedHead) =>
  requirePermission(caller, permission, stateMachineAttributes(machine));

const versionQuery = (query: { version?: string; sort_by?: string[]; limit: number; continuation_token: number }) => ({
  versions: parseVersionFilter(query.version),
  descending: parseSortBy(query.sort_by, ['version'])[0]?.direction === 'desc',
  limit: query.limit,
  continuationToken: query.continuation_token,
});

export const handler = httpHandler(
  implementGroup('agent', {
    'create-agent': async ({ path, body, caller }) => {
      requirePermission(caller, 'Organization:CreateAgent', { name: body.agent_name });
      return createAgent(path.organization, body.agent_name, creatorOf(caller));
    },

    'get-agents': async ({ path, query, caller }) => {
      const page = await listAgents(path.organization, {
        ids: query.id,
        deprecated: query.deprecated,
        visible: (agent) => hasPermission(caller, 'Organization:GetAgent', agentAttributes(agent)),
        limit: query.limit,
        continuationToken: query.continuation_token,
      });
      return pageBody('agents', page);
    },

    'create-agent-version': async ({ path, query, body, caller }) =>
      createAgentVersion(path.organization, path.agent_id, body, {
        expectedVersion: query.version,
        creator: creatorOf(caller),
        authorize: onAgent(caller, 'Organization:CreateAgentVersion'),
      }),

    'delete-agent': async ({ path, caller }) => {
      await deprecateAgent(path.organization, path.agent_id, onAgent(caller, 'Organization:DeleteAgent'));
      return null;
    },

    'get-agent-versions': async ({ path, query, caller }) => {
      const page = await listAgentVersions(
        path.organization,
        path.agent_id,
        versionQuery(query),
        onAgent(caller, 'Organization:GetAgent'),
      );
      return pageBody('agent_versions', page);
    },

    'create-service-hierarchical-state-machine': async ({ path, body, caller }) => {
      requirePermission(caller, 'Organization:CreateServiceHierarchicalStateMachine', { name: body.state_machine_name });
      return createStateMachine(path.organization, body.state_machine_name, creatorOf(caller));
    },

    'get-service-hierarchical-state-machines': async ({ path, query, caller }) => {
      const page = await listStateMachines(path.organization, {
        ids: query.id,
        deprecated: query.deprecated,
        visible: (machine) =>
          hasPermission(caller, 'Organization:GetServiceHierarchicalStateMachine', stateMachineAttributes(machine)),
        limit: query.limit,
        continuationToken: query.continuation_token,
      });
      return pageBody('service_hierarchical_state_machines', page);
    },

    'create-service-hierarchical-state-machine-version': async ({ path, query, body, caller }) =>
      createStateMachineVersion(path.organization, path.service_hierarchical_state_machine_id, body, {
        expectedVersion: query.version,
        dryRun: query.dry_run ?? false,
        creator: creatorOf(caller),
        authorize: onMachine(caller, 'Organization:CreateServiceHierarchicalStateMachineVersion'),
      }),

    'delete-service-hierarchical-state-machine': async ({ path, caller }) => {
      await deleteStateMachine(
        path.organization,
        path.state_machine_id,
        onMachine(caller, 'Organization:DeleteServiceHierarchicalStateMachine'),
      );
      return null;
    },

    'get-service-hierarchical-state-machine-versions': async ({ path, query, caller }) => {
      const page = await listStateMachineVersions(
        path.organization,
        path.service_hierarchical_state_machine_id,
        versionQuery(query),
        onMachine(caller, 'Organization:GetServiceHierarchicalStateMachine'),
      );
      return pageBody('state_machine_versions', page);
    },
  }),
);

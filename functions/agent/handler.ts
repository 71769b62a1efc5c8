import { createAgent, createAgentVersion, deprecateAgent, listAgents, listAgentVersions } from '#shared/agent/agents';
import { agentOperations } from '#shared/agent/operations';
import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { pageRequest, versionListParams as versionQuery } from '#shared/kernel/list-params';
import { stateMachineOperations } from '#shared/state-machine/operations';
import {
  createStateMachine,
  createStateMachineVersion,
  deleteStateMachine,
  listStateMachines,
  listStateMachineVersions,
} from '#shared/state-machine/state-machines';

export const handler = httpHandler(
  implementGroup('agent', [agentOperations, stateMachineOperations], {
    'create-agent': ({ path, body, caller }) => createAgent(path.organization, caller, body.agent_name),

    'get-agents': async ({ path, query, caller }) => {
      const page = await listAgents(path.organization, caller, {
        ids: query.id,
        deprecated: query.deprecated,
        ...pageRequest(query),
      });
      return pageBody('agents', page);
    },

    'create-agent-version': ({ path, query, body, caller }) =>
      createAgentVersion(path.organization, caller, path.agent_id, body, { expectedVersion: query.version }),

    'delete-agent': ({ path, caller }) => deprecateAgent(path.organization, caller, path.agent_id).then(() => null),

    'get-agent-versions': async ({ path, query, caller }) => {
      const page = await listAgentVersions(path.organization, caller, path.agent_id, versionQuery(query));
      return pageBody('agent_versions', page);
    },

    'create-service-hierarchical-state-machine': ({ path, body, caller }) =>
      createStateMachine(path.organization, caller, body.state_machine_name),

    'get-service-hierarchical-state-machines': async ({ path, query, caller }) => {
      const page = await listStateMachines(path.organization, caller, {
        ids: query.id,
        deprecated: query.deprecated,
        ...pageRequest(query),
      });
      return pageBody('service_hierarchical_state_machines', page);
    },

    'create-service-hierarchical-state-machine-version': ({ path, query, body, caller }) =>
      createStateMachineVersion(path.organization, caller, path.service_hierarchical_state_machine_id, body, {
        expectedVersion: query.version,
        dryRun: query.dry_run ?? false,
      }),

    'delete-service-hierarchical-state-machine': ({ path, caller }) =>
      deleteStateMachine(path.organization, caller, path.state_machine_id).then(() => null),

    'get-service-hierarchical-state-machine-versions': async ({ path, query, caller }) => {
      const page = await listStateMachineVersions(
        path.organization,
        caller,
        path.service_hierarchical_state_machine_id,
        versionQuery(query),
      );
      return pageBody('state_machine_versions', page);
    },
  }),
);

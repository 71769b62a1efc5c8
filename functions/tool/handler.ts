import { pageBody } from '#shared/data/paging';
import { httpHandler, implementGroup } from '#shared/http/http-handler';
import { pageRequest } from '#shared/kernel/list-params';
import { modifyToolEnvvars } from '#shared/tool/environment';
import { listToolInvocations, searchToolInvocations } from '#shared/tool/invocations';
import { createMcpServer, deleteMcpServer, listMcpServers, refreshMcpServer } from '#shared/tool/mcp-servers';
import { toolOperations } from '#shared/tool/operations';
import { publishToolVersion } from '#shared/tool/publishing';
import { scaffoldRelease } from '#shared/tool/scaffold';
import { createTool, deprecateTool, listTools, modifyTool } from '#shared/tool/tools';
import { deprecateToolVersions, listToolVersions, toolVersionView } from '#shared/tool/versions';

const invocationFilters = (query: {
  tool_id?: string[];
  invocation_source_type?: string[];
  conversation_id?: string[];
  simulation_unit_test_set_run_id?: string[];
  succeeded?: boolean;
}) => ({
  toolIds: query.tool_id,
  sourceTypes: query.invocation_source_type,
  conversationIds: query.conversation_id,
  runIds: query.simulation_unit_test_set_run_id,
  succeeded: query.succeeded,
});

export const handler = httpHandler(
  implementGroup('tool', [toolOperations], {
    'get-tool-scaffold-release': async () => scaffoldRelease(),

    'create-tool': ({ path, body, caller }) => createTool(path.organization, caller, body),

    'get-tools': async ({ path, query }) => {
      const { page, filterValues } = await listTools(path.organization, {
        ids: query.id,
        deprecated: query.deprecated,
        sortBy: query.sort_by,
        tags: query.tag,
        ...pageRequest(query),
      });
      return { ...pageBody('tools', page), filter_values: filterValues };
    },

    'get-tool-invocations': async ({ path, query, caller }) => {
      const page = await listToolInvocations(path.organization, caller, {
        ...invocationFilters(query),
        versions: query.version,
        sortBy: query.sort_by,
        ...pageRequest(query),
      });
      return pageBody('tool_invocations', page);
    },

    'search-tool-invocations': async ({ path, query, caller }) => ({
      tool_invocations: await searchToolInvocations(path.organization, caller, {
        ...invocationFilters(query),
        text: query.query,
        fields: query.query_against,
      }),
    }),

    'create-mcp-server': ({ path, body, caller }) => createMcpServer(path.organization, caller, body),

    'get-mcp-servers': async ({ path, query, caller }) =>
      pageBody('mcp_servers', await listMcpServers(path.organization, caller, pageRequest(query))),

    'refresh-mcp-server': ({ path, caller }) => refreshMcpServer(path.organization, caller, path.mcp_server_id),

    'delete-mcp-server': ({ path, caller }) => deleteMcpServer(path.organization, caller, path.mcp_server_id),

    'deprecate-tool-version': ({ path, caller }) =>
      deprecateToolVersions(path.organization, caller, path.tool_id, path.version),

    'deprecate-tool': ({ path, caller }) => deprecateTool(path.organization, caller, path.tool_id),

    'modify-tool': ({ path, body, caller }) => modifyTool(path.organization, caller, path.tool_id, body),

    'modify-tool-envvars': ({ path, body, caller }) => modifyToolEnvvars(path.organization, caller, path.tool_id, body),

    'publish-tool-version': ({ path, body, caller }) =>
      publishToolVersion(path.organization, caller, path.tool_id, body),

    'get-tool-versions': async ({ path, query }) => {
      const { page, filterValues } = await listToolVersions(path.organization, path.tool_id, {
        deprecated: query.deprecated,
        versions: query.versions,
        sortBy: query.sort_by,
        creators: query.creator,
        ...pageRequest(query),
      });
      return { ...pageBody('tool_versions', page, toolVersionView), filter_values: filterValues };
    },
  }),
);

import { sealSecrets } from '../auth/secret-box';
import { listFingerprint, pageOf } from '../data/paging';
import type { Caller } from '../kernel/caller';
import { creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { announceFrameworkResourceChange } from '../webhook/events';
import type { McpConnection } from './mcp-client';
import {
  connectionOf,
  type ListedTool,
  type Listing,
  listingFailure,
  listMcpServerTools,
  organizationToolName,
} from './mcp-exchanges';
import {
  addMcpServerTool,
  changeMcpServerTool,
  insertMcpServer,
  type McpServerRecord,
  mcpHeaderContext,
  mcpServers,
  queryMcpServers,
  removeMcpServer,
  requireMcpServer,
  retireMcpServerTool,
  type StepOutcome,
} from './mcp-server-repository';
import type { McpServerToolsReport } from './schemas';
import {
  getTool,
  getToolVersion,
  listAllToolVersions,
  markToolVersionsDeprecated,
  type StoredToolVersion,
  type ToolRecord,
} from './tool-repository';
import { formatVersion, type ToolVersion } from './version-constraint';

/**
 * MCP servers whose tools become the organization's tools. Registering a server reads its listing
 * (`tools/list`); each tool it lists becomes a tool (`{server}__{tool}`), versioned per distinct
 * input schema (1.0.0 first, the next major for each change), which state machines use like any
 * tool, by `tool_id` and `version_constraint`. A refresh reads the listing again: new tools are
 * added, changed schemas get a version, tools no longer listed are deprecated. Deleting the server
 * deprecates its tools and erases its record with its sealed headers. Calls go to the server
 * (`callMcpServerTool`, from `runToolVersion`).
 */

const serverAttributes = (server: Pick<McpServerRecord, 'id' | 'name'>) => ({
  id: server.id,
  mcp_server_id: server.id,
  name: server.name,
});

export const mcpServerView = (server: McpServerRecord) => ({
  id: server.id,
  org_id: server.org_id,
  name: server.name,
  url: server.url,
  header_names: Object.keys(server.headers).sort(),
  tools: Object.entries(server.tools).map(([mcpName, toolId]) => ({ tool_id: toolId, mcp_tool_name: mcpName })),
  created_at: server.created_at,
  updated_at: server.updated_at,
  refreshed_at: server.refreshed_at,
  creator: server.creator,
  updated_by: server.updated_by,
});

/** The server's listing; a server that cannot be listed is the caller's to fix (400), nothing is written. */
const readListing = async (connection: McpConnection): Promise<Listing> => {
  try {
    return await listMcpServerTools(connection);
  } catch (error) {
    throw new BadRequestError(listingFailure(connection, error));
  }
};

const sameSchema = (a: Record<string, unknown>, b: Record<string, unknown>): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/** A JSON value with its object keys sorted, so two schemas compare by content. */
const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  );
};

/** A version of a server's tool: nothing built, deployed as soon as it exists (the server runs it). */
const mcpToolVersion = (
  tool: ToolRecord,
  version: ToolVersion,
  listed: ListedTool,
  caller: Caller,
): StoredToolVersion => {
  const at = nowIso();
  return {
    id: newId(),
    org_id: tool.org_id,
    created_at: at,
    updated_at: at,
    tool_id: tool.id,
    version,
    required_envvars: [],
    required_secret_envvars: [],
    input_schema: listed.inputSchema,
    tool_repo: 'team',
    tool_commit_hash: '',
    amigo_scaffold_commit_hash: '',
    project_directory: '',
    lambda_version: 0,
    creator: creatorOf(caller),
    updated_by: creatorOf(caller),
    deprecated: false,
    status: 'deployed',
    build_error: null,
    language: 'mcp',
    entry: listed.mcpName,
    artifact_key: '',
    runtime_ref: `mcp:${tool.mcp?.server_id ?? ''}`,
    build_id: null,
  };
};

const newMcpTool = (server: McpServerRecord, listed: ListedTool, name: string, caller: Caller): ToolRecord => {
  const at = nowIso();
  return {
    id: newId(),
    org_id: server.org_id,
    name,
    description: listed.description,
    tags: {},
    deprecated: false,
    envvars: {},
    deleted_envvars: {},
    latest_version: { major: 1, minor: 0, patch: 0 },
    last_valid_commit: null,
    mcp: { server_id: server.id, tool_name: listed.mcpName },
    created_at: at,
    updated_at: at,
    creator: creatorOf(caller),
    updated_by: creatorOf(caller),
    revision: 0,
  };
};

type Report = McpServerToolsReport & { created: string[] };

/** The server is moved on by another change: the sync starts over from what it reads then. */
const movedOn = Symbol('moved on');

/**
 * Brings the organization's tools in line with the server's listing, one transaction per tool,
 * each conditioned on the server's revision: a concurrent refresh makes this one start over, so
 * no tool is made twice, and a sync cut short is finished by the next.
 */
const syncServerTools = async (
  orgId: string,
  caller: Caller,
  serverId: string,
  listing: Listing,
): Promise<{ server: McpServerRecord; report: Report }> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    let server = await requireMcpServer(orgId, serverId, true);
    const report: Report = { tools: [], skipped: [...listing.skipped], retired: [], created: [] };
    const advance = (outcome: StepOutcome): McpServerRecord => {
      if (outcome === 'moved' || outcome === 'name-taken') throw movedOn;
      return outcome.server;
    };
    try {
      const listedNames = new Set(listing.tools.map((listed) => listed.mcpName));
      for (const [mcpName, toolId] of Object.entries(server.tools)) {
        if (listedNames.has(mcpName)) continue;
        const tool = await getTool(orgId, toolId, true);
        server = advance(await retireMcpServerTool(server, mcpName, tool, creatorOf(caller)));
        if (tool) await markToolVersionsDeprecated(await listAllToolVersions(orgId, tool.id));
        report.retired.push({ tool_id: toolId, mcp_tool_name: mcpName });
      }
      for (const listed of listing.tools) {
        const known = server.tools[listed.mcpName];
        const tool = known ? await getTool(orgId, known, true) : undefined;
        if (tool && !tool.deprecated) {
          const latest = tool.latest_version ? await getToolVersion(orgId, tool.id, tool.latest_version) : undefined;
          const schemaChanged = !latest || !sameSchema(latest.input_schema, listed.inputSchema);
          if (schemaChanged || tool.description !== listed.description) {
            const version = schemaChanged
              ? mcpToolVersion(
                  tool,
                  { major: (tool.latest_version?.major ?? 0) + 1, minor: 0, patch: 0 },
                  listed,
                  caller,
                )
              : undefined;
            const next: ToolRecord = {
              ...tool,
              description: listed.description,
              latest_version: version?.version ?? tool.latest_version,
              updated_at: nowIso(),
              updated_by: creatorOf(caller),
            };
            server = advance(await changeMcpServerTool(server, tool, next, version));
            report.tools.push({
              tool_id: tool.id,
              mcp_tool_name: listed.mcpName,
              name: tool.name,
              version: formatVersion(next.latest_version ?? { major: 1, minor: 0, patch: 0 }),
            });
          } else {
            report.tools.push({
              tool_id: tool.id,
              mcp_tool_name: listed.mcpName,
              name: tool.name,
              version: formatVersion(latest.version),
            });
          }
          continue;
        }
        // A name another tool holds is tried once more with the server's tool's id in it, then given up.
        let added: McpServerRecord | undefined;
        for (const disambiguator of [undefined, newId().slice(-6)]) {
          const made = newMcpTool(
            server,
            listed,
            organizationToolName(server.name, listed.mcpName, disambiguator),
            caller,
          );
          const outcome = await addMcpServerTool(
            server,
            made,
            mcpToolVersion(made, made.latest_version as ToolVersion, listed, caller),
          );
          if (outcome === 'name-taken') continue;
          added = advance(outcome);
          report.tools.push({ tool_id: made.id, mcp_tool_name: listed.mcpName, name: made.name, version: '1.0.0' });
          report.created.push(made.id);
          break;
        }
        if (added) server = added;
        else
          report.skipped.push({
            mcp_tool_name: listed.mcpName,
            reason: `the organization already has a tool named ${organizationToolName(server.name, listed.mcpName)}`,
          });
      }
      return { server, report };
    } catch (error) {
      if (error !== movedOn) throw error;
    }
  }
  throw new ConflictError(`MCP server ${serverId} is being changed at the same time; retry.`);
};

const announceTools = async (orgId: string, report: Report): Promise<void> => {
  const changes = [
    ...report.created.map((id) => ({ id, change: 'created' as const })),
    ...report.retired.map((retired) => ({ id: retired.tool_id, change: 'deleted' as const })),
  ];
  for (const { id, change } of changes)
    await announceFrameworkResourceChange(orgId, { resourceType: 'tool', resourceId: id, change });
};

const answerOf = ({ created: _created, ...report }: Report): McpServerToolsReport => report;

/**
 * `create-mcp-server`: reads the server's listing first (400 when it cannot be read: nothing is
 * kept), then keeps the server, its headers sealed, and makes each listed tool a tool.
 */
export const createMcpServer = async (
  orgId: string,
  caller: Caller,
  body: { name: string; url: string; headers: Record<string, string> },
): Promise<{ id: string } & McpServerToolsReport> => {
  requirePermission(caller, 'Tool:CreateMcpServer', { name: body.name });
  const listing = await readListing({ url: body.url, headers: body.headers });
  const id = newId();
  const at = nowIso();
  await insertMcpServer({
    id,
    org_id: orgId,
    name: body.name,
    url: body.url,
    headers: await sealSecrets(mcpHeaderContext(orgId, id), body.headers),
    tools: {},
    created_at: at,
    updated_at: at,
    refreshed_at: at,
    creator: creatorOf(caller),
    updated_by: creatorOf(caller),
    revision: 0,
  });
  const { report } = await syncServerTools(orgId, caller, id, listing);
  await announceTools(orgId, report);
  return { id, ...answerOf(report) };
};

/** `get-mcp-servers`: the organization's servers, their header values never shown. */
export const listMcpServers = async (
  orgId: string,
  caller: Caller,
  query: { limit: number; continuationToken: number },
) => {
  requirePermission(caller, 'Tool:GetMcpServer');
  return pageOf(
    orgId,
    () => listFingerprint('mcp-servers', {}),
    query.continuationToken,
    (startKey) => queryMcpServers(orgId, { limit: query.limit, startKey }),
    (item) => mcpServerView(mcpServers.parse(item)),
  );
};

/** `refresh-mcp-server`: reads the listing again and brings the server's tools in line with it. */
export const refreshMcpServer = async (
  orgId: string,
  caller: Caller,
  serverId: string,
): Promise<McpServerToolsReport> => {
  const server = await requireMcpServer(orgId, serverId);
  requirePermission(caller, 'Tool:ModifyMcpServer', serverAttributes(server));
  const listing = await readListing(await connectionOf(server));
  const { report } = await syncServerTools(orgId, caller, serverId, listing);
  await mcpServers.setFields(orgId, server, { refreshed_at: nowIso() });
  await announceTools(orgId, report);
  return answerOf(report);
};

/**
 * `delete-mcp-server`: deprecates each of the server's tools (their invocations stay listed), then
 * erases the server's record, and its sealed headers with it.
 */
export const deleteMcpServer = async (orgId: string, caller: Caller, serverId: string): Promise<void> => {
  const first = await requireMcpServer(orgId, serverId, true);
  requirePermission(caller, 'Tool:DeleteMcpServer', serverAttributes(first));
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const { server, report } = await syncServerTools(orgId, caller, serverId, { tools: [], skipped: [] });
    await announceTools(orgId, report);
    if (await removeMcpServer(server)) return;
  }
  throw new ConflictError(`MCP server ${serverId} is being changed at the same time; retry.`);
};

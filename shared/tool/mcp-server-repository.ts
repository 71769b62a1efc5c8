import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { uniqueName } from '../data/key-parts';
import { failedConditions, type Item, queryPage, type TransactItem, transactWrite } from '../data/table';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { creatorInfo } from '../kernel/schemas';
import { releaseToolName, type StoredToolVersion, type ToolRecord, tools, toolVersions } from './tool-repository';

/**
 * MCP servers an organization registered (`MCP_SERVER`, their names unique while registered:
 * `MCP_SERVER_NAME`). Each keeps its headers sealed and the tools it serves, by the name the
 * server gives each, with the organization's tool each became. Every change of a server's tools
 * is one transaction with the server's record, conditioned on its revision, so two refreshes
 * never make one tool twice.
 */
export const mcpServerRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  url: z.string(),
  /** Header names and their values, each value sealed for the server (`mcpHeaderContext`). */
  headers: z.record(z.string(), z.string()),
  /** The organization's tool (id) each of the server's tools became, by the server's name for it. */
  tools: z.record(z.string(), z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  refreshed_at: z.string(),
  creator: creatorInfo,
  updated_by: creatorInfo,
  revision: z.number().int(),
});
export type McpServerRecord = z.infer<typeof mcpServerRecord>;

export const mcpServers = defineEntity({
  name: 'mcp-server',
  token: 'MCP_SERVER',
  schema: mcpServerRecord,
  sort: (server: { id: string }) => server.id,
  guards: { name: uniqueName('MCP_SERVER_NAME', (server) => ({ id: server.id })) },
});

/** The context a server's header values are sealed for: they open for this server only. */
export const mcpHeaderContext = (orgId: string, serverId: string) => `${orgId}#mcp-server#${serverId}`;

export const mcpServerNotFound = (id: string) => new NotFoundError(`MCP server ${id} does not exist.`);

export const getMcpServer = (orgId: string, id: string, consistent = false): Promise<McpServerRecord | undefined> =>
  mcpServers.get(orgId, { id }, consistent);

export const requireMcpServer = async (orgId: string, id: string, consistent = false): Promise<McpServerRecord> => {
  const server = await getMcpServer(orgId, id, consistent);
  if (!server) throw mcpServerNotFound(id);
  return server;
};

/** A page of the organization's servers, in registration order. */
export const queryMcpServers = (orgId: string, options: { limit: number; startKey?: Item }) =>
  queryPage(mcpServers.query(orgId, {}), options);

/** Thrown when the server moved on (another refresh) while a change was made: the caller reads it again. */
export const mcpServerMoved = new Error('MCP server revision moved');

/** The server's record moving to the next revision with `tools` changed, if it is still at the one read. */
const serverStep = (
  server: McpServerRecord,
  change: { set?: [string, string]; remove?: string } = {},
): TransactItem => {
  const toolName = change.set?.[0] ?? change.remove;
  return {
    Update: {
      Key: mcpServers.key(server.org_id, server),
      UpdateExpression: [
        `SET revision = :next, updated_at = :at${change.set ? ', #tools.#tool = :toolId' : ''}`,
        ...(change.remove ? ['REMOVE #tools.#tool'] : []),
      ].join(' '),
      ConditionExpression: 'revision = :revision',
      ...(toolName === undefined ? {} : { ExpressionAttributeNames: { '#tools': 'tools', '#tool': toolName } }),
      ExpressionAttributeValues: {
        ':revision': server.revision,
        ':next': server.revision + 1,
        ':at': nowIso(),
        ...(change.set ? { ':toolId': change.set[1] } : {}),
      },
    },
  };
};

/** The server as its record is after a step. */
const stepped = (server: McpServerRecord, tools: Record<string, string>): McpServerRecord => ({
  ...server,
  tools,
  revision: server.revision + 1,
});

/** Stores a newly registered server (its tools come after, a step each, as a refresh adds them). */
export const insertMcpServer = (server: McpServerRecord): Promise<void> =>
  transactWrite(
    [mcpServers.create(server.org_id, server), mcpServers.guardPut(server.org_id, 'name', server)],
    () => new ConflictError(`An MCP server named '${server.name}' already exists.`),
  );

/** Outcome of one step of a refresh: done, the server moved on, or the tool's name is taken. */
export type StepOutcome = { server: McpServerRecord } | 'moved' | 'name-taken';

/** Writes one step; `nameGuard` is the position of the tool's name guard among `items`, when it claims one. */
const step = async (items: TransactItem[], next: McpServerRecord, nameGuard?: number): Promise<StepOutcome> => {
  let outcome: StepOutcome = { server: next };
  await transactWrite(items, (error) => {
    const failed = failedConditions(error);
    outcome = nameGuard !== undefined && failed.length === 1 && failed[0] === nameGuard ? 'name-taken' : 'moved';
    return mcpServerMoved;
  }).catch((error: unknown) => {
    if (error !== mcpServerMoved) throw error;
  });
  return outcome;
};

/** A tool the server now lists: the tool, its name guard and its first version, with the server's record. */
export const addMcpServerTool = (
  server: McpServerRecord,
  tool: ToolRecord,
  version: StoredToolVersion,
): Promise<StepOutcome> => {
  const mcpName = tool.mcp?.tool_name ?? tool.name;
  return step(
    [
      tools.create(server.org_id, tool),
      tools.guardPut(server.org_id, 'name', tool),
      toolVersions.create(server.org_id, version),
      serverStep(server, { set: [mcpName, tool.id] }),
    ],
    stepped(server, { ...server.tools, [mcpName]: tool.id }),
    1,
  );
};

/** A listed tool's change: its description, and for a changed input schema its new version, with the server's record. */
export const changeMcpServerTool = (
  server: McpServerRecord,
  tool: ToolRecord,
  next: ToolRecord,
  version: StoredToolVersion | undefined,
): Promise<StepOutcome> =>
  step(
    [
      ...(version ? [toolVersions.create(server.org_id, version)] : []),
      {
        Put: {
          Item: tools.item(server.org_id, { ...next, revision: tool.revision + 1 }),
          ConditionExpression: 'revision = :toolRevision',
          ExpressionAttributeValues: { ':toolRevision': tool.revision },
        },
      },
      serverStep(server),
    ],
    stepped(server, server.tools),
  );

/**
 * A tool the server no longer lists (or the server's deletion): the tool deprecated and its name
 * freed, with the server's record (its versions are marked after, by the caller).
 */
export const retireMcpServerTool = (
  server: McpServerRecord,
  mcpName: string,
  tool: ToolRecord | undefined,
  updatedBy: ToolRecord['updated_by'],
): Promise<StepOutcome> => {
  const { [mcpName]: _retired, ...kept } = server.tools;
  const toolItems: TransactItem[] =
    tool && !tool.deprecated
      ? [
          {
            Put: {
              Item: tools.item(server.org_id, {
                ...tool,
                deprecated: true,
                updated_at: nowIso(),
                updated_by: updatedBy,
                revision: tool.revision + 1,
              }),
              ConditionExpression: 'revision = :toolRevision',
              ExpressionAttributeValues: { ':toolRevision': tool.revision },
            },
          },
          releaseToolName(tool),
        ]
      : [];
  return step([...toolItems, serverStep(server, { remove: mcpName })], stepped(server, kept));
};

/** Removes a server whose tools are all retired, with its name guard (and so its sealed headers). */
export const removeMcpServer = async (server: McpServerRecord): Promise<boolean> => {
  let removed = true;
  await transactWrite(
    [
      {
        Delete: {
          Key: mcpServers.key(server.org_id, server),
          ConditionExpression: 'revision = :revision',
          ExpressionAttributeValues: { ':revision': server.revision },
        },
      },
      { Delete: { Key: mcpServers.guardKey(server.org_id, 'name', server.name) } },
    ],
    () => {
      removed = false;
      return mcpServerMoved;
    },
  ).catch((error: unknown) => {
    if (error !== mcpServerMoved) throw error;
  });
  return removed;
};

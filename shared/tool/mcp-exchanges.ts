import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { openSecrets } from '../auth/secret-box';
import { unstorableIssues } from '../kernel/storable-values';
import { type McpConnection, McpExchangeError, withMcpServer } from './mcp-client';
import { getMcpServer, type McpServerRecord, mcpHeaderContext } from './mcp-server-repository';
import { inputValidator } from './project';
import { maxToolNameLength } from './schemas';
import { maskOutcome, maskSecrets } from './secret-masking';
import type { ToolRecord } from './tool-repository';
import { type SandboxOutcome, sandboxLimits } from './tool-runtime';

/**
 * The two exchanges the platform has with a registered MCP server: reading its listing
 * (`tools/list`, when the server is registered or refreshed) and calling one of its tools
 * (`tools/call`, when a conversation or `invoke-tool-version` runs the tool). Both go through
 * `withMcpServer`, so both are bounded in time and size and keep to the egress rules.
 */

/** At most this many of a server's tools become tools of the organization; the rest are reported skipped. */
export const maxServerTools = 100;
const maxListingPages = 10;
/** How long reading a listing may take: registration and refresh answer within a buffered request. */
const listingTimeoutMs = 10_000;
/** The longest output a call may give (characters); a longer one fails the invocation. */
export const maxOutputChars = 64_000;
const maxDescriptionChars = 4096;
const maxInputSchemaChars = 64 * 1024;

/** A tool of the server's listing that may become a tool of the organization. */
export interface ListedTool {
  mcpName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface Listing {
  tools: ListedTool[];
  skipped: { mcp_tool_name: string; reason: string }[];
}

/** Why a listed tool cannot become a tool of the organization, if it cannot. */
const refusalOf = async (tool: Tool): Promise<string | undefined> => {
  if (tool.name.length === 0 || tool.name.length > 128) return 'its name is empty or longer than 128 characters';
  const schema = tool.inputSchema as Record<string, unknown>;
  if (JSON.stringify(schema).length > maxInputSchemaChars)
    return `its input schema is longer than ${maxInputSchemaChars} characters`;
  const [unstorable] = unstorableIssues(schema, ['inputSchema']);
  if (unstorable) return `its input schema cannot be kept (${unstorable.loc.join('.')}: ${unstorable.msg})`;
  try {
    await inputValidator(schema);
  } catch (error) {
    return (error as Error).message;
  }
  return undefined;
};

/** The server's tools (`tools/list`, page after page), those that can be kept and those that cannot. */
export const listMcpServerTools = async (connection: McpConnection): Promise<Listing> => {
  const listed = await withMcpServer(connection, listingTimeoutMs, async (client, signal) => {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < maxListingPages && tools.length <= maxServerTools; page += 1) {
      const result = await client.listTools(cursor ? { cursor } : undefined, { signal });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  });
  const listing: Listing = { tools: [], skipped: [] };
  const seen = new Set<string>();
  for (const tool of listed) {
    const refusal = seen.has(tool.name)
      ? 'the server lists it twice'
      : listing.tools.length >= maxServerTools
        ? `the server lists more than ${maxServerTools} tools`
        : await refusalOf(tool);
    seen.add(tool.name);
    if (refusal) listing.skipped.push({ mcp_tool_name: tool.name, reason: refusal });
    else
      listing.tools.push({
        mcpName: tool.name,
        description: (tool.description ?? tool.title ?? '').slice(0, maxDescriptionChars),
        inputSchema: tool.inputSchema as Record<string, unknown>,
      });
  }
  return listing;
};

/** The organization's name for a server's tool: `{server}__{tool}`, lowercased, and within the tool name limit. */
export const organizationToolName = (serverName: string, mcpName: string, disambiguator?: string): string => {
  const name = `${serverName}__${mcpName.toLowerCase().replace(/[^a-z0-9_]+/g, '_')}`;
  if (!disambiguator && name.length <= maxToolNameLength) return name;
  const suffix = `_${disambiguator ?? 'x'}`;
  return `${name.slice(0, maxToolNameLength - suffix.length)}${suffix}`;
};

/** The server's connection, its headers opened: only the exchanges see them. */
export const connectionOf = async (server: McpServerRecord): Promise<McpConnection> => ({
  url: server.url,
  headers: await openSecrets(mcpHeaderContext(server.org_id, server.id), server.headers),
});

/** The text a call's result gives the model: its text blocks, a note for other blocks, else its structured content. */
const outputOf = (result: CallToolResult): string => {
  const parts = result.content.map((block) => {
    switch (block.type) {
      case 'text':
        return block.text;
      case 'resource':
        return 'text' in block.resource ? block.resource.text : `[resource ${block.resource.uri}]`;
      case 'resource_link':
        return `[resource ${block.uri}]`;
      default:
        return `[${block.type} ${block.mimeType}]`;
    }
  });
  if (parts.length === 0 && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
};

const failed = (exceptionType: string, message: string): SandboxOutcome['status'] => ({
  succeeded: false,
  exception_message: message,
  exception_type: exceptionType,
  exception_stack_trace: [],
});

/** What a call answered, as a tool run's status: its output, or the failure the model is told of. */
const statusOf = (result: CallToolResult): SandboxOutcome['status'] => {
  const output = outputOf(result);
  if (output.length > maxOutputChars)
    return failed('OutputTooLarge', `The MCP tool's output is longer than ${maxOutputChars} characters.`);
  if (result.isError) return failed('McpToolError', output || 'The MCP tool reported an error.');
  return { succeeded: true, output };
};

/**
 * Calls a server's tool (`tools/call`) with the server's stored headers, within the tools' timeout
 * (`TOOL_TIMEOUT_SECONDS`). Never throws: an error result (`isError`), an unreachable or refused
 * server and an answer that is not MCP each fail this one run, as a tool's exception does, and
 * the header values are masked out of whatever is kept.
 */
export const callMcpServerTool = async (
  tool: ToolRecord,
  inputParameters: Record<string, unknown>,
): Promise<SandboxOutcome> => {
  const started = performance.now();
  const server = tool.mcp ? await getMcpServer(tool.org_id, tool.mcp.server_id) : undefined;
  const outcome = (status: SandboxOutcome['status']): SandboxOutcome => ({
    status,
    duration_ms: Math.round(performance.now() - started),
    stdout: '',
    stderr: '',
  });
  if (!server || !tool.mcp)
    return outcome(failed('McpServerRefused', `The MCP server of tool ${tool.name} is no longer registered.`));
  const connection = await connectionOf(server);
  const { timeoutMs } = sandboxLimits();
  const mcpName = tool.mcp.tool_name;
  try {
    const result = await withMcpServer(connection, timeoutMs, (client, signal) =>
      client.callTool({ name: mcpName, arguments: inputParameters }, undefined, { signal, timeout: timeoutMs }),
    );
    return maskOutcome(outcome(statusOf(result as CallToolResult)), Object.values(connection.headers));
  } catch (error) {
    const failure =
      error instanceof McpExchangeError
        ? failed(error.kind, error.message)
        : failed('McpServerError', (error as Error).message);
    return maskOutcome(outcome(failure), Object.values(connection.headers));
  }
};

/** A listing's failure as the caller is told it (the header values masked out). */
export const listingFailure = (connection: McpConnection, error: unknown): string =>
  maskSecrets(
    `The MCP server at ${connection.url} could not be listed: ${(error as Error).message}`,
    Object.values(connection.headers),
  );

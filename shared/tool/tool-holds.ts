/**
 * A publish holds its tool (`operation_in_progress`, `{id}|{until}`) until the version is deployed
 * or refused: other publishes and deprecations get 409 meanwhile.
 */
import { BadRequestError, ConflictError } from '../kernel/errors';
import { mutateTool, type ToolRecord } from './tool-repository';

/** A publish or deprecation holds the tool for at most this long, so a lost build cannot block it forever. */
const operationHoldMs = 20 * 60 * 1000;

const inProgress = (tool: ToolRecord): boolean =>
  tool.operation_in_progress !== null && Date.parse(tool.operation_in_progress.split('|')[1] ?? '') > Date.now();

export const refuseWhileBusy = (tool: ToolRecord): void => {
  if (inProgress(tool))
    throw new ConflictError(`A related operation is in progress on tool ${tool.id}; retry when it has finished.`);
};

/** A tool an MCP server serves changes only through its server (`mcp-servers.ts`): refresh or delete it. */
export const refuseMcpTool = (tool: ToolRecord): void => {
  if (tool.mcp)
    throw new BadRequestError(
      `Tool ${tool.id} is served by MCP server ${tool.mcp.server_id}: its versions follow the server's listing (refresh the server) and it goes with the server.`,
    );
};

/** `{id}|{until}`: who holds the tool, and until when at the latest. */
export const holdFor = (operation: string): string =>
  `${operation}|${new Date(Date.now() + operationHoldMs).toISOString()}`;

/** Reads the tool for a write that only the holder of `hold` may make (409 otherwise). */
export const requireHeld = (tool: ToolRecord, hold: string): void => {
  if (tool.operation_in_progress !== hold)
    throw new ConflictError(`A related operation is in progress on tool ${tool.id}; retry when it has finished.`);
};

export const releaseHold = async (orgId: string, toolId: string, hold: string): Promise<void> => {
  await mutateTool(orgId, toolId, (tool) => ({
    next: tool.operation_in_progress === hold ? { ...tool, operation_in_progress: null } : tool,
  }));
};

/**
 * A publish holds its tool until the version it published is deployed or refused: other publishes
 * and deprecations get 409 meanwhile. The hold is the tool's lease (`shared/data/lease.ts`), taken
 * and given back in the tool's own revision-guarded writes, each also conditioned by the lease:
 * the take on the lease seen free, the holder's writes on its fencing token. The version records
 * that token (`hold_token`), so only the deployment of the version the hold published gives it
 * back: one that ends after the hold ran out and another publish took the tool leaves it held.
 */
import { fencedBy, isLeaseHeld, leaseTakeAfter, storedLeaseOf, withLeaseReleased } from '../data/lease';
import type { Condition } from '../data/table';
import { BadRequestError, ConflictError } from '../kernel/errors';
import type { ToolRecord } from './tool-repository';

/** A publish holds the tool for at most this long, so a lost build cannot block it forever. */
const toolHoldMs = 20 * 60 * 1000;

const busy = (tool: ToolRecord) =>
  new ConflictError(`A related operation is in progress on tool ${tool.id}; retry when it has finished.`);

export const refuseWhileBusy = (tool: ToolRecord): void => {
  if (isLeaseHeld(storedLeaseOf(tool))) throw busy(tool);
};

/** A tool an MCP server serves changes only through its server (`mcp-servers.ts`): refresh or delete it. */
export const refuseMcpTool = (tool: ToolRecord): void => {
  if (tool.mcp)
    throw new BadRequestError(
      `Tool ${tool.id} is served by MCP server ${tool.mcp.server_id}: its versions follow the server's listing (refresh the server) and it goes with the server.`,
    );
};

/** A change of the tool (`mutateTool`): the tool to write, and what its write is conditioned on besides the revision. */
export interface HoldChange {
  next: ToolRecord;
  condition?: Condition;
}

/** The tool held by a new publish (409 while held), and the hold's fencing token. */
export const holdTool = (tool: ToolRecord): HoldChange & { token: number } => {
  refuseWhileBusy(tool);
  const take = leaseTakeAfter(storedLeaseOf(tool), toolHoldMs);
  return { next: { ...tool, ...take.attributes }, condition: take.condition, token: take.token };
};

/** The fence of a write only the holder of `token` may make; 409 when the tool is not held under it. */
export const requireHeld = (tool: ToolRecord, token: number): Condition => {
  const lease = storedLeaseOf(tool);
  if (lease.token !== token || lease.untilMs === undefined) throw busy(tool);
  return fencedBy(token);
};

/** The tool with the hold of `token` given back; unchanged when it is not held under that token. */
export const releaseTool = (tool: ToolRecord, token: number): HoldChange => {
  const lease = storedLeaseOf(tool);
  if (lease.token !== token || lease.untilMs === undefined) return { next: tool };
  return { next: withLeaseReleased(tool, token), condition: fencedBy(token) };
};

import { keysPage, listFingerprint, pageOf } from '../data/paging';
import { type Item, queryPage } from '../data/table';
import type { Caller } from '../kernel/caller';
import { creatorOf } from '../kernel/caller';
import { BadRequestError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { matchesTags, parseSortBy, parseTagFilters } from '../kernel/list-params';
import { requirePermission } from '../kernel/permissions';
import { announceFrameworkResourceChange } from '../webhook/events';
import { maxToolNameLength } from './schemas';
import { refuseMcpTool, refuseWhileBusy } from './tool-holds';
import {
  createToolRecord,
  listAllToolVersions,
  markToolVersionsDeprecated,
  mutateTool,
  releaseToolName,
  type ToolRecord,
  tools,
} from './tool-repository';

export const toolAttributes = (tool: Pick<ToolRecord, 'id' | 'name' | 'deprecated'>) => ({
  id: tool.id,
  tool_id: tool.id,
  name: tool.name,
  deprecated: tool.deprecated,
});

export const toolView = (tool: ToolRecord) => ({
  id: tool.id,
  org_id: tool.org_id,
  created_at: tool.created_at,
  updated_at: tool.updated_at,
  name: tool.name,
  description: tool.description,
  deprecated: tool.deprecated,
  envvars: Object.keys(tool.envvars)
    .filter((name) => !tool.envvars[name]?.is_secret)
    .sort(),
  secret_envvars: Object.keys(tool.envvars)
    .filter((name) => tool.envvars[name]?.is_secret)
    .sort(),
  tags: Object.entries(tool.tags).map(([key, value]) => ({ key, value })),
  creator: tool.creator,
  updated_by: tool.updated_by,
  mcp_server_id: tool.mcp?.server_id ?? null,
  mcp_tool_name: tool.mcp?.tool_name ?? null,
});

export const createTool = async (
  orgId: string,
  caller: Caller,
  body: { name: string; description: string; tags: Record<string, string | null> },
): Promise<{ id: string }> => {
  requirePermission(caller, 'Tool:CreateTool', { name: body.name });
  if (body.name.length > maxToolNameLength)
    throw new BadRequestError(`The tool name is too long (at most ${maxToolNameLength} characters).`);
  const at = nowIso();
  const id = newId();
  await createToolRecord({
    id,
    org_id: orgId,
    name: body.name,
    description: body.description,
    tags: body.tags,
    deprecated: false,
    envvars: {},
    deleted_envvars: {},
    latest_version: null,
    last_valid_commit: null,
    mcp: null,
    created_at: at,
    updated_at: at,
    creator: creatorOf(caller),
    updated_by: creatorOf(caller),
    revision: 0,
  });
  await announceFrameworkResourceChange(orgId, { resourceType: 'tool', resourceId: id, change: 'created' });
  return { id };
};

export interface ToolListQuery {
  ids?: string[];
  deprecated?: boolean;
  sortBy?: string[];
  tags?: string[];
  limit: number;
  continuationToken: number;
}

/** Tools are listed to every member (the reference names no permission for reading them). */
export const listTools = async (orgId: string, query: ToolListQuery) => {
  const sort = parseSortBy(query.sortBy, ['name', 'deprecated'])[0];
  const tagFilters = parseTagFilters(query.tags);
  const keep = (item: Item) => {
    const tool = tools.parse(item);
    return (
      (query.deprecated === undefined || tool.deprecated === query.deprecated) && matchesTags(tool.tags, tagFilters)
    );
  };
  const forward = sort?.direction !== 'desc';
  const filters = { ids: query.ids, deprecated: query.deprecated, sort, tagFilters };
  const page = await pageOf(
    orgId,
    () => listFingerprint('tools', filters),
    query.continuationToken,
    (startKey) =>
      query.ids && query.ids.length > 0
        ? keysPage(
            query.ids.map((id) => tools.key(orgId, { id })),
            startKey,
            { limit: query.limit, keep },
          )
        : queryPage(
            sort
              ? tools.queryIndex(orgId, sort.field as 'name' | 'deprecated', {}, { forward })
              : tools.query(orgId, {}),
            {
              limit: query.limit,
              startKey,
              keep,
            },
          ),
    (item) => toolView(tools.parse(item)),
  );
  const filterValues =
    query.continuationToken === 0
      ? {
          tags: [
            ...new Set(page.items.flatMap((tool) => tool.tags.map((tag) => `${tag.key}:${tag.value ?? ''}`))),
          ].sort(),
        }
      : null;
  return { page, filterValues };
};

export const modifyTool = async (
  orgId: string,
  caller: Caller,
  toolId: string,
  changes: { description?: string | null; tags?: Record<string, string | null> | null },
): Promise<void> => {
  await mutateTool(orgId, toolId, (tool) => {
    requirePermission(caller, 'Tool:ModifyTool', toolAttributes(tool));
    return {
      next: {
        ...tool,
        description: changes.description ?? tool.description,
        tags: changes.tags ?? tool.tags,
        updated_at: nowIso(),
        updated_by: creatorOf(caller),
      },
    };
  });
  await announceFrameworkResourceChange(orgId, { resourceType: 'tool', resourceId: toolId, change: 'updated' });
};

/**
 * Deprecates a tool and every version of it, and frees its name. The head is marked first (it is
 * what version resolution reads), under the tool's lock, so a publish cannot slip in between.
 */
export const deprecateTool = async (orgId: string, caller: Caller, toolId: string): Promise<void> => {
  const deprecated = await mutateTool(orgId, toolId, (tool) => {
    requirePermission(caller, 'Tool:DeleteTool', toolAttributes(tool));
    refuseWhileBusy(tool);
    refuseMcpTool(tool);
    if (tool.deprecated) return { next: tool };
    return {
      next: { ...tool, deprecated: true, updated_at: nowIso(), updated_by: creatorOf(caller) },
      extra: [releaseToolName(tool)],
    };
  });
  await markToolVersionsDeprecated(await listAllToolVersions(orgId, deprecated.id));
  await announceFrameworkResourceChange(orgId, { resourceType: 'tool', resourceId: toolId, change: 'deleted' });
};

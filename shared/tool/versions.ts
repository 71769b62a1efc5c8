import { listFingerprint, type Paged, pageOf } from '../data/paging';
import { type Item, queryPage } from '../data/table';
import type { Caller } from '../kernel/caller';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { parseSortBy } from '../kernel/list-params';
import { requirePermission } from '../kernel/permissions';
import { announceFrameworkResourceChange } from '../webhook/events';
import { refuseMcpTool, refuseWhileBusy } from './tool-holds';
import {
  getToolVersion,
  listAllToolVersions,
  markToolVersionsDeprecated,
  requireTool,
  type StoredToolVersion,
  type ToolRecord,
  toolVersions,
} from './tool-repository';
import { toolAttributes } from './tools';
import { parseVersion, parseVersionConstraint } from './version-constraint';

export const toolVersionView = (version: StoredToolVersion) => {
  const {
    language: _language,
    entry: _entry,
    artifact_key: _artifactKey,
    runtime_ref: _runtimeRef,
    build_id: _buildId,
    hold_token: _holdToken,
    ...listed
  } = version;
  return listed;
};

/** Deprecates the versions matching a PEP 440 constraint. */
export const deprecateToolVersions = async (
  orgId: string,
  caller: Caller,
  toolId: string,
  constraint: string,
): Promise<void> => {
  const tool = await requireTool(orgId, toolId, true);
  requirePermission(caller, 'Tool:ModifyTool', toolAttributes(tool));
  refuseWhileBusy(tool);
  refuseMcpTool(tool);
  const matches = parseVersionConstraint(constraint);
  if (!matches) throw new BadRequestError(`'${constraint}' is not a version specifier.`);
  await markToolVersionsDeprecated(
    (await listAllToolVersions(orgId, toolId)).filter((version) => matches(version.version)),
  );
  await announceFrameworkResourceChange(orgId, { resourceType: 'tool', resourceId: toolId, change: 'updated' });
};

/** The versions that count against the active limit and keep their variables required: neither deprecated nor failed. */
export const activeVersions = (versions: StoredToolVersion[]) =>
  versions.filter((version) => !version.deprecated && version.status !== 'failed');

export interface VersionListQuery {
  deprecated?: boolean;
  versions?: string;
  sortBy?: string[];
  creators?: string[];
  limit: number;
  continuationToken: number;
}

export const listToolVersions = async (orgId: string, toolId: string, query: VersionListQuery) => {
  await requireTool(orgId, toolId);
  const sort = parseSortBy(query.sortBy, ['created_at', 'version.major'])[0];
  const matches = query.versions ? parseVersionConstraint(query.versions) : undefined;
  const creators = new Set(query.creators ?? []);
  const keep = (item: Item) => {
    const version = toolVersions.parse(item);
    return (
      (query.deprecated === undefined || version.deprecated === query.deprecated) &&
      (!matches || matches(version.version)) &&
      (creators.size === 0 || creators.has(`${version.creator.org_id},${version.creator.user_id}`))
    );
  };
  const filters = {
    toolId,
    deprecated: query.deprecated,
    versions: query.versions,
    sort,
    creators: [...creators].sort(),
  };
  const page: Paged<StoredToolVersion> = await pageOf(
    orgId,
    () => listFingerprint('tool-versions', filters),
    query.continuationToken,
    (startKey) =>
      queryPage(toolVersions.query(orgId, {}, { prefix: `${toolId}#`, forward: sort?.direction !== 'desc' }), {
        limit: query.limit,
        startKey,
        keep,
      }),
    toolVersions.parse,
  );
  const filterValues =
    query.continuationToken === 0
      ? {
          creators: [
            ...new Map(
              page.items.map((version) => [`${version.creator.org_id},${version.creator.user_id}`, version.creator]),
            ).values(),
          ].map((creator) => ({ user_id: creator.user_id, user_org_id: creator.org_id })),
        }
      : null;
  return { page, filterValues };
};

/** A version addressed by its number; 404 when the tool or the version does not exist. */
export const requireToolVersion = async (orgId: string, toolId: string, versionText: string) => {
  const tool = await requireTool(orgId, toolId);
  const number = parseVersion(versionText);
  const version = number ? await getToolVersion(orgId, toolId, number) : undefined;
  if (!version) throw new NotFoundError(`Version ${versionText} of tool ${toolId} does not exist.`);
  return { tool, version };
};

/** The highest deployed, non-deprecated version matching the constraint, of a tool that is not deprecated. */
export const resolveToolVersion = async (
  orgId: string,
  toolId: string,
  constraint: string,
): Promise<{ tool: ToolRecord; version: StoredToolVersion } | undefined> => {
  const tool = await requireTool(orgId, toolId).catch(() => undefined);
  const matches = parseVersionConstraint(constraint);
  if (!tool || tool.deprecated || !matches) return undefined;
  const candidates = (await listAllToolVersions(orgId, toolId)).filter(
    (version) => !version.deprecated && version.status === 'deployed' && matches(version.version),
  );
  const version = candidates.at(-1);
  return version ? { tool, version } : undefined;
};

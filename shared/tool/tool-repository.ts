import { z } from 'zod';
import { defineEntity } from '../data/entity';
import { uniqueName } from '../data/key-parts';
import { leaseFields } from '../data/lease';
import { writeIfUnchanged } from '../data/revisions';
import { type Condition, queryAll, transactWrite } from '../data/table';
import { ConflictError, NotFoundError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { sortableValue } from '../kernel/list-params';
import { creatorInfo } from '../kernel/schemas';
import { toolInvocationInstance, toolVersionInstance } from './schemas';
import { type ToolVersion, toolVersion } from './version-constraint';

/**
 * Tools: the head (`TOOL`, with its environment variables, secret values sealed), a name guard
 * (`TOOL_NAME`, held only while the tool is not deprecated), versions (`TOOL_VERSION`, keyed by
 * tool and zero-padded version) and invocations (`TOOL_INVOCATION`, in creation order).
 */
const envVarRecord = z.object({
  is_secret: z.boolean(),
  /** The value, sealed (`secret-box.ts`) when secret. */
  value: z.string(),
});

export const toolRecord = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string(),
  tags: z.record(z.string(), z.string().nullable()),
  deprecated: z.boolean(),
  envvars: z.record(z.string(), envVarRecord),
  /** Names deleted lately, with when: inserting one again answers 409 for a while (the reference's rule). */
  deleted_envvars: z.record(z.string(), z.string()),
  latest_version: toolVersion.nullable(),
  /** The commit of the last version that built, which a new version may not predate. */
  last_valid_commit: z.string().nullable(),
  /** The hold of the publish running on the tool (`tool-holds.ts`): others get 409 until it ends. */
  ...leaseFields,
  /**
   * A tool an MCP server serves (`mcp-servers.ts`): the server and the name it gives the tool.
   * Its versions are the input schemas the server has listed; a call goes to the server.
   */
  mcp: z.object({ server_id: z.string(), tool_name: z.string() }).nullable().default(null),
  created_at: z.string(),
  updated_at: z.string(),
  creator: creatorInfo,
  updated_by: creatorInfo,
  /** Optimistic concurrency: every write is conditioned on the revision it read. */
  revision: z.number().int(),
});
export type ToolRecord = z.infer<typeof toolRecord>;

export const tools = defineEntity({
  name: 'tool',
  token: 'TOOL',
  schema: toolRecord,
  sort: (tool: { id: string }) => tool.id,
  indexes: {
    name: { index: 'gsi1', sort: (tool: Pick<ToolRecord, 'id' | 'name'>) => `${sortableValue(tool.name)}#${tool.id}` },
    deprecated: {
      index: 'gsi2',
      sort: (tool: Pick<ToolRecord, 'id' | 'name' | 'deprecated'>) =>
        `${sortableValue(tool.deprecated)}#${sortableValue(tool.name)}#${tool.id}`,
    },
  },
  guards: {
    name: uniqueName('TOOL_NAME', (tool) => ({ id: tool.id })),
  },
});

export const storedToolVersion = toolVersionInstance.extend({
  /** `node` (bundled to one ES module), `python` (the project's files), or `mcp` (an MCP server's tool: nothing built). */
  language: z.enum(['node', 'python', 'mcp']),
  /** The module the runtime loads: the bundle's file, or Python's `module:function`. */
  entry: z.string(),
  /** Where the builder put the artifact in the artifact bucket. */
  artifact_key: z.string(),
  /** How the runtime addresses the deployed version (a Lambda version ARN in AWS); null until deployed. */
  runtime_ref: z.string().nullable(),
  /** The managed build (CodeBuild) the version waits for while `deploying`; null when built in-process. */
  build_id: z.string().nullable().default(null),
  /** The fencing token of the tool's hold its publish took, which its deployment gives back (`tool-holds.ts`). */
  hold_token: z.number().int().optional(),
});
export type StoredToolVersion = z.infer<typeof storedToolVersion>;

const versionSort = (version: ToolVersion) =>
  `${sortableValue(version.major)}.${sortableValue(version.minor)}.${sortableValue(version.patch)}`;

export const toolVersions = defineEntity({
  name: 'tool-version',
  token: 'TOOL_VERSION',
  schema: storedToolVersion,
  sort: (of: { tool_id: string; version: ToolVersion }) => `${of.tool_id}#${versionSort(of.version)}`,
});

export const toolInvocations = defineEntity({
  name: 'tool-invocation',
  token: 'TOOL_INVOCATION',
  schema: toolInvocationInstance,
  sort: (invocation: { id: string }) => invocation.id,
});

export const toolNotFound = (id: string) => new NotFoundError(`Tool ${id} does not exist.`);

export const getTool = (orgId: string, id: string, consistent = false): Promise<ToolRecord | undefined> =>
  tools.get(orgId, { id }, consistent);

export const requireTool = async (orgId: string, id: string, consistent = false): Promise<ToolRecord> => {
  const tool = await getTool(orgId, id, consistent);
  if (!tool) throw toolNotFound(id);
  return tool;
};

export const createToolRecord = async (tool: ToolRecord): Promise<void> => {
  await transactWrite(
    [tools.create(tool.org_id, tool), tools.guardPut(tool.org_id, 'name', tool)],
    () => new ConflictError(`A tool named '${tool.name}' already exists.`),
  );
};

/** What a change of the tool writes: the tool, items committed with it, and a condition besides the revision. */
export interface ToolChange {
  next: ToolRecord;
  extra?: Parameters<typeof transactWrite>[0];
  condition?: Condition;
}

/** Stores `next` if the tool is still at `current.revision` (and `condition` holds); extra transaction items go with it. */
export const replaceTool = (current: ToolRecord, { next, extra = [], condition }: ToolChange): Promise<boolean> =>
  writeIfUnchanged(tools.replacement(current.org_id, next, current, condition), extra);

/**
 * Changes a tool with `change` (which may throw a domain error), retrying when another write
 * got there first. `extra` items (a version record, a guard's removal) commit with it; a change
 * that leaves the tool as it is writes nothing.
 */
export const mutateTool = async (
  orgId: string,
  id: string,
  change: (tool: ToolRecord) => Promise<ToolChange> | ToolChange,
): Promise<ToolRecord> => {
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = await requireTool(orgId, id, true);
    const changed = await change(current);
    if (changed.next === current && !changed.extra?.length) return current;
    if (await replaceTool(current, changed)) return changed.next;
  }
  throw new ConflictError(`Tool ${id} is being changed at the same time; retry.`);
};

/** The transaction item that frees a deprecated tool's name. */
export const releaseToolName = (tool: ToolRecord) => ({
  Delete: { Key: tools.guardKey(tool.org_id, 'name', tool.name) },
});

export const getToolVersion = (
  orgId: string,
  toolId: string,
  version: ToolVersion,
): Promise<StoredToolVersion | undefined> => toolVersions.get(orgId, { tool_id: toolId, version });

/** Every version of a tool, oldest first (a tool keeps at most a few hundred). */
export const listAllToolVersions = async (orgId: string, toolId: string): Promise<StoredToolVersion[]> =>
  (await queryAll(toolVersions.query(orgId, {}, { prefix: `${toolId}#` }))).map(toolVersions.parse);

/** Marks deprecated those of the versions that are not yet; one deleted meanwhile is left alone. */
export const markToolVersionsDeprecated = async (versions: StoredToolVersion[]): Promise<void> => {
  for (const version of versions.filter((candidate) => !candidate.deprecated)) {
    await toolVersions.setFields(version.org_id, version, { deprecated: true, updated_at: nowIso() });
  }
};

/**
 * Sets fields of a version still `deploying` (and matching `expected`, such as the build it waits
 * for); returns whether it was, so a repeated build or deployment result changes nothing.
 */
export const updateDeployingVersion = (
  version: StoredToolVersion,
  fields: Partial<StoredToolVersion>,
  expected: Partial<StoredToolVersion> = {},
): Promise<boolean> =>
  toolVersions.setFields(
    version.org_id,
    version,
    { ...fields, updated_at: nowIso() },
    { ...expected, status: 'deploying' },
  );

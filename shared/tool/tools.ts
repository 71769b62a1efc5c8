import { openSecret, sealSecret } from '../auth/secret-box';
import { queueToolBuild } from '../aws/queues';
import { keysPage, listFingerprint, type Paged, pageOf } from '../data/paging';
import { type Item, queryPage } from '../data/table';
import type { Caller } from '../kernel/caller';
import { creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { matchesTags, parseSortBy, parseTagFilters } from '../kernel/list-params';
import { requirePermission } from '../kernel/permissions';
import { getOrganization } from '../organization/index';
import { announceFrameworkResourceChange } from '../webhook/events';
import type { BuiltProject } from './project';
import type { EnvVarChanges } from './schemas';
import { maxToolNameLength } from './schemas';
import { repositoryName } from './source-repository';
import { storeArtifact, toolBuilder } from './tool-build';
import {
  createToolRecord,
  getToolVersion,
  listAllToolVersions,
  markToolVersionDeprecated,
  mutateTool,
  releaseToolName,
  requireTool,
  type StoredToolVersion,
  type ToolRecord,
  tools,
  toolVersions,
  updateDeployingVersion,
} from './tool-repository';
import { bumpVersion, formatVersion, parseVersion, parseVersionConstraint } from './version-constraint';

/** At most this many versions of a tool are active (not deprecated, not failed) at once. */
export const maxActiveVersions = 3;
/** A deleted environment variable's name cannot be inserted again for this long (the reference's "recently deleted"). */
export const envVarReuseDelayMs = 15 * 60 * 1000;
/** A publish or deprecation holds the tool for at most this long, so a lost build cannot block it forever. */
const operationHoldMs = 20 * 60 * 1000;

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
});

export const toolVersionView = (version: StoredToolVersion) => {
  const {
    language: _language,
    entry: _entry,
    artifact_key: _artifactKey,
    runtime_ref: _runtimeRef,
    build_id: _buildId,
    ...listed
  } = version;
  return listed;
};

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
    operation_in_progress: null,
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

const inProgress = (tool: ToolRecord): boolean =>
  tool.operation_in_progress !== null && Date.parse(tool.operation_in_progress.split('|')[1] ?? '') > Date.now();

const refuseWhileBusy = (tool: ToolRecord): void => {
  if (inProgress(tool))
    throw new ConflictError(`A related operation is in progress on tool ${tool.id}; retry when it has finished.`);
};

/** `{id}|{until}`: who holds the tool, and until when at the latest. */
const holdFor = (operation: string): string => `${operation}|${new Date(Date.now() + operationHoldMs).toISOString()}`;

const setVersionsDeprecated = async (versions: StoredToolVersion[]): Promise<void> => {
  for (const version of versions.filter((candidate) => !candidate.deprecated)) {
    await markToolVersionDeprecated(version);
  }
};

/**
 * Deprecates a tool and every version of it, and frees its name. The head is marked first (it is
 * what version resolution reads), under the tool's lock, so a publish cannot slip in between.
 */
export const deprecateTool = async (orgId: string, caller: Caller, toolId: string): Promise<void> => {
  const deprecated = await mutateTool(orgId, toolId, (tool) => {
    requirePermission(caller, 'Tool:DeleteTool', toolAttributes(tool));
    refuseWhileBusy(tool);
    if (tool.deprecated) return { next: tool };
    return {
      next: { ...tool, deprecated: true, updated_at: nowIso(), updated_by: creatorOf(caller) },
      extra: [releaseToolName(tool)],
    };
  });
  await setVersionsDeprecated(await listAllToolVersions(orgId, deprecated.id));
  await announceFrameworkResourceChange(orgId, { resourceType: 'tool', resourceId: toolId, change: 'deleted' });
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
  const matches = parseVersionConstraint(constraint);
  if (!matches) throw new BadRequestError(`'${constraint}' is not a version specifier.`);
  await setVersionsDeprecated((await listAllToolVersions(orgId, toolId)).filter((version) => matches(version.version)));
  await announceFrameworkResourceChange(orgId, { resourceType: 'tool', resourceId: toolId, change: 'updated' });
};

const activeVersions = (versions: StoredToolVersion[]) =>
  versions.filter((version) => !version.deprecated && version.status !== 'failed');

export const modifyToolEnvvars = async (
  orgId: string,
  caller: Caller,
  toolId: string,
  changes: EnvVarChanges,
): Promise<void> => {
  const names = [...changes.inserts, ...changes.updates, ...changes.deletes].map((change) => change.name);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated)
    throw new BadRequestError(`The environment variable ${repeated} appears more than once in the request.`);
  const required = new Set(
    activeVersions(await listAllToolVersions(orgId, toolId)).flatMap((version) => [
      ...version.required_envvars,
      ...version.required_secret_envvars,
    ]),
  );
  await mutateTool(orgId, toolId, async (tool) => {
    requirePermission(caller, 'Tool:ModifyTool', toolAttributes(tool));
    const envvars = { ...tool.envvars };
    const deleted = Object.fromEntries(
      Object.entries(tool.deleted_envvars).filter(([, at]) => Date.parse(at) + envVarReuseDelayMs > Date.now()),
    );
    for (const update of changes.updates) {
      const current = envvars[update.name];
      if (!current) throw new BadRequestError(`The environment variable ${update.name} does not exist.`);
      envvars[update.name] = {
        is_secret: current.is_secret,
        value: current.is_secret ? await sealSecret(orgId, update.value) : update.value,
      };
    }
    for (const { name } of changes.deletes) {
      if (!envvars[name]) throw new BadRequestError(`The environment variable ${name} does not exist.`);
      if (required.has(name))
        throw new BadRequestError(
          `The environment variable ${name} is required by a non-deprecated version of the tool.`,
        );
      delete envvars[name];
      deleted[name] = nowIso();
    }
    for (const insert of changes.inserts) {
      if (envvars[insert.name]) throw new ConflictError(`The environment variable ${insert.name} already exists.`);
      if (deleted[insert.name]) {
        throw new ConflictError(
          `The environment variable ${insert.name} was deleted recently; it can be inserted again later.`,
        );
      }
      envvars[insert.name] = {
        is_secret: insert.is_secret,
        value: insert.is_secret ? await sealSecret(orgId, insert.value) : insert.value,
      };
    }
    if (Object.keys(envvars).length > 50) throw new BadRequestError('A tool has at most 50 environment variables.');
    return {
      next: { ...tool, envvars, deleted_envvars: deleted, updated_at: nowIso(), updated_by: creatorOf(caller) },
    };
  });
};

/** The tool's environment: every variable, secret ones opened. Only the runtime sees it. */
export const toolEnvironment = async (tool: ToolRecord): Promise<Record<string, string>> =>
  Object.fromEntries(
    await Promise.all(
      Object.entries(tool.envvars).map(async ([name, variable]) => [
        name,
        variable.is_secret ? await openSecret(tool.org_id, variable.value) : variable.value,
      ]),
    ),
  );

/** The secret values of a tool's environment, to mask wherever a run's output is kept or shown. */
export const secretValuesOf = async (tool: ToolRecord): Promise<string[]> =>
  Promise.all(
    Object.values(tool.envvars)
      .filter((variable) => variable.is_secret)
      .map((variable) => openSecret(tool.org_id, variable.value)),
  );

/** The repository an organization's `repo` names: its team's (or its own), or the deployment's main one. */
export const repositoryOf = async (orgId: string, repo: 'team' | 'main'): Promise<string> => {
  const organization = await getOrganization(orgId);
  if (!organization) throw new NotFoundError(`Organization ${orgId} does not exist.`);
  return repositoryName(orgId, organization.devops_team_name, repo);
};

/** Where one build's artifact goes: under the organization's prefix (`toolArtifactPrefix`), named by the build. */
export const artifactKeyOf = (orgId: string, toolId: string, build: string) =>
  `tools/${orgId}/${toolId}/${build}.json.gz`;

type Declared = Pick<BuiltProject, 'required_envvars' | 'required_secret_envvars'>;

const missingVariables = (tool: ToolRecord, declared: Declared): string[] => [
  ...declared.required_envvars.filter((name) => tool.envvars[name]?.is_secret !== false),
  ...declared.required_secret_envvars.filter((name) => tool.envvars[name]?.is_secret !== true),
];

/** Why a built project cannot become a version of `tool` (400), if it cannot: an older commit, or missing variables. */
export const refusalOf = (
  tool: ToolRecord,
  declared: Declared,
  commit: string,
  predatesLastValid: boolean,
): string | undefined => {
  if (predatesLastValid) return `Commit ${commit} is older than the last valid commit ${tool.last_valid_commit}.`;
  const missing = missingVariables(tool, declared);
  if (missing.length > 0)
    return `The environment variables required by the tool version do not exist on the tool (or differ in secrecy): ${missing.join(', ')}.`;
  return undefined;
};

const refuseFourthVersion = async (orgId: string, toolId: string): Promise<void> => {
  if (activeVersions(await listAllToolVersions(orgId, toolId)).length >= maxActiveVersions)
    throw new BadRequestError(`Tool ${toolId} already has ${maxActiveVersions} active versions; deprecate one first.`);
};

/** Reads the tool for a write that only the holder of `hold` may make (409 otherwise). */
const requireHeld = (tool: ToolRecord, hold: string): void => {
  if (tool.operation_in_progress !== hold)
    throw new ConflictError(`A related operation is in progress on tool ${tool.id}; retry when it has finished.`);
};

/**
 * Publishes the next version of a tool from the project at the head of the repository's default
 * branch. The tool is held first (409 to other publishes and deprecations until the version is
 * deployed or refused); then the builder (`tool-builder.ts`) builds the project:
 * - in-process, the answer refuses with 400 an older commit, missing variables or a failed build
 *   (with the build's error); the version is recorded `deploying` with its artifact, and the
 *   builder worker deploys it (`deployPublishedVersion`);
 * - with CodeBuild, the version is recorded `deploying` while the build runs; the builder worker
 *   records the build's outcome when CodeBuild reports it (`completeManagedBuild`): a refusal or
 *   a failed build as `failed` with its reason in `build_error`, else it deploys the version.
 */
export const publishToolVersion = async (
  orgId: string,
  caller: Caller,
  toolId: string,
  body: { project_path: string; bump_type: 'major' | 'minor' | 'patch'; repo: 'team' | 'main' },
): Promise<{ new_version: string }> => {
  const before = await requireTool(orgId, toolId, true);
  requirePermission(caller, 'Tool:ModifyTool', toolAttributes(before));
  if (before.deprecated) throw new BadRequestError(`Tool ${toolId} is deprecated; no version can be published.`);
  refuseWhileBusy(before);
  const repository = await repositoryOf(orgId, body.repo);
  const operation = newId();
  const hold = holdFor(operation);
  const held = await mutateTool(orgId, toolId, async (tool) => {
    refuseWhileBusy(tool);
    await refuseFourthVersion(orgId, toolId);
    return { next: { ...tool, operation_in_progress: hold } };
  });
  const artifactKey = artifactKeyOf(orgId, toolId, operation);
  let recorded: StoredToolVersion | undefined;
  try {
    const started = await (await toolBuilder()).build({
      orgId,
      toolId,
      repository,
      projectPath: body.project_path,
      lastValidCommit: held.last_valid_commit,
      artifactKey,
    });
    const at = nowIso();
    const versionOf = (tool: ToolRecord): StoredToolVersion => ({
      id: newId(),
      org_id: orgId,
      created_at: at,
      updated_at: at,
      tool_id: toolId,
      version: bumpVersion(tool.latest_version, body.bump_type),
      ...unbuiltVersionFields,
      tool_repo: body.repo,
      project_directory: body.project_path,
      lambda_version: 0,
      creator: creatorOf(caller),
      updated_by: creatorOf(caller),
      deprecated: false,
      status: 'deploying',
      build_error: null,
      artifact_key: artifactKey,
      runtime_ref: null,
      build_id: started.state === 'started' ? started.buildId : null,
    });
    await mutateTool(orgId, toolId, async (tool) => {
      requireHeld(tool, hold);
      let version = versionOf(tool);
      if (started.state === 'built') {
        const { commit, built, predatesLastValid } = started.result;
        const refusal = refusalOf(tool, built, commit, predatesLastValid);
        if (refusal) throw new BadRequestError(refusal);
        version = { ...version, ...builtFields(commit, built) };
        await storeArtifact(artifactKey, built.artifact);
      }
      recorded = version;
      return {
        next: {
          ...tool,
          latest_version: version.version,
          last_valid_commit: version.tool_commit_hash === '' ? tool.last_valid_commit : version.tool_commit_hash,
          updated_at: at,
          updated_by: creatorOf(caller),
        },
        extra: [toolVersions.create(orgId, version)],
      };
    });
  } catch (error) {
    await releaseHold(orgId, toolId, hold);
    throw error;
  }
  const version = recorded as StoredToolVersion;
  const versionText = formatVersion(version.version);
  if (version.build_id === null) {
    try {
      await queueToolBuild({ type: 'tool-version-published', org_id: orgId, tool_id: toolId, version: versionText });
    } catch (error) {
      await finishDeployment(version, { status: 'failed', build_error: 'The deployment could not be queued.' });
      throw error;
    }
  }
  return { new_version: versionText };
};

/**
 * What a version holds of the fields a build determines until CodeBuild reports (`deploying`):
 * values of the reference's types (`tool_commit_hash` is a required string there, not nullable),
 * so the SDKs read a building version like any other.
 */
export const unbuiltVersionFields = {
  required_envvars: [],
  required_secret_envvars: [],
  input_schema: { type: 'object' },
  tool_commit_hash: '',
  amigo_scaffold_commit_hash: '',
  language: 'node',
  entry: '',
} as const satisfies Partial<StoredToolVersion>;

/** The version fields a build determines. */
export const builtFields = (commit: string, built: Omit<BuiltProject, 'artifact'>) => ({
  tool_commit_hash: commit,
  amigo_scaffold_commit_hash: commit,
  required_envvars: built.required_envvars,
  required_secret_envvars: built.required_secret_envvars,
  input_schema: built.input_schema,
  language: built.language,
  entry: built.entry,
});

const releaseHold = async (orgId: string, toolId: string, hold: string): Promise<void> => {
  await mutateTool(orgId, toolId, (tool) => ({
    next: tool.operation_in_progress === hold ? { ...tool, operation_in_progress: null } : tool,
  }));
};

/**
 * Records what a managed build built on its `deploying` version, and the commit as the tool's
 * last valid one. Conditioned on the version still waiting for that build: a repeat records
 * nothing and returns undefined.
 */
export const recordManagedBuild = async (
  version: StoredToolVersion,
  commit: string,
  built: Omit<BuiltProject, 'artifact'>,
): Promise<StoredToolVersion | undefined> => {
  const fields = builtFields(commit, built);
  if (!(await updateDeployingVersion(version, fields, { build_id: version.build_id }))) return undefined;
  await mutateTool(version.org_id, version.tool_id, (tool) => ({ next: { ...tool, last_valid_commit: commit } }));
  return { ...version, ...fields };
};

/**
 * Records how a deployment ended and releases the tool. Conditioned on `deploying`, so a repeat
 * changes nothing and announces nothing.
 */
export const finishDeployment = async (
  version: StoredToolVersion,
  outcome:
    | { status: 'deployed'; runtime_ref: string; lambda_version: number }
    | { status: 'failed'; build_error: string },
): Promise<void> => {
  const applied = await updateDeployingVersion(
    version,
    outcome.status === 'deployed'
      ? { status: outcome.status, runtime_ref: outcome.runtime_ref, lambda_version: outcome.lambda_version }
      : { status: outcome.status, build_error: outcome.build_error },
  );

  await mutateTool(version.org_id, version.tool_id, (tool) => ({ next: { ...tool, operation_in_progress: null } }));
  if (applied && outcome.status === 'deployed') {
    await announceFrameworkResourceChange(version.org_id, {
      resourceType: 'tool',
      resourceId: version.tool_id,
      change: 'updated',
    });
  }
};

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

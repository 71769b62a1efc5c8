import { queueToolBuild } from '../aws/queues';
import type { Caller } from '../kernel/caller';
import { creatorOf } from '../kernel/caller';
import { BadRequestError, NotFoundError } from '../kernel/errors';
import { newId, nowIso } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import { getOrganization } from '../organization/index';
import { announceFrameworkResourceChange } from '../webhook/events';
import { toolBuilder } from './deployment-builder';
import type { BuiltProject } from './project';
import { repositoryName } from './source-repository';
import { storeArtifact } from './tool-build';
import { holdTool, refuseMcpTool, refuseWhileBusy, releaseTool, requireHeld } from './tool-holds';
import {
  listAllToolVersions,
  mutateTool,
  requireTool,
  type StoredToolVersion,
  type ToolRecord,
  toolVersions,
  updateDeployingVersion,
} from './tool-repository';
import { toolAttributes } from './tools';
import { bumpVersion, formatVersion } from './version-constraint';
import { activeVersions } from './versions';

/** At most this many versions of a tool are active (not deprecated, not failed) at once. */
export const maxActiveVersions = 3;

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

/**
 * Publishes the next version of a tool from the project at the head of the repository's default
 * branch. The tool is held first (409 to other publishes and deprecations until the version is
 * deployed or refused); then the builder of this deployment (`deployment-builder.ts`) builds the project:
 * - in-process, the answer refuses with 400 an older commit, missing variables or a failed build
 *   (with the build's error); the version is recorded `deploying` with its artifact, and the
 *   builder worker deploys it (`deployPublishedVersion`, `deployments.ts`);
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
  refuseMcpTool(before);
  refuseWhileBusy(before);
  const repository = await repositoryOf(orgId, body.repo);
  const operation = newId();
  let holdToken = 0;
  const held = await mutateTool(orgId, toolId, async (tool) => {
    refuseWhileBusy(tool);
    await refuseFourthVersion(orgId, toolId);
    const hold = holdTool(tool);
    holdToken = hold.token;
    return hold;
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
      hold_token: holdToken,
    });
    await mutateTool(orgId, toolId, async (tool) => {
      const fence = requireHeld(tool, holdToken);
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
        condition: fence,
      };
    });
  } catch (error) {
    await mutateTool(orgId, toolId, (tool) => releaseTool(tool, holdToken));
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
 * Releases the tool and records how a deployment ended. Conditioned on `deploying`, so a repeat
 * changes nothing and announces nothing. The tool is released first: a worker killed between
 * the two leaves the version `deploying`, and the redelivered message finishes it; the other
 * order would leave the tool held (409 to publishes) until its hold expires.
 */
export const finishDeployment = async (
  version: StoredToolVersion,
  outcome:
    | { status: 'deployed'; runtime_ref: string; lambda_version: number }
    | { status: 'failed'; build_error: string },
): Promise<void> => {
  // A version published before holds were fenced names none: nothing of its is held.
  const token = version.hold_token;
  if (token !== undefined) await mutateTool(version.org_id, version.tool_id, (tool) => releaseTool(tool, token));
  const applied = await updateDeployingVersion(
    version,
    outcome.status === 'deployed'
      ? { status: outcome.status, runtime_ref: outcome.runtime_ref, lambda_version: outcome.lambda_version }
      : { status: outcome.status, build_error: outcome.build_error },
  );
  if (applied && outcome.status === 'deployed') {
    await announceFrameworkResourceChange(version.org_id, {
      resourceType: 'tool',
      resourceId: version.tool_id,
      change: 'updated',
    });
  }
};

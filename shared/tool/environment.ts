import { openSecret, sealSecret } from '../auth/secret-box';
import type { Caller } from '../kernel/caller';
import { creatorOf } from '../kernel/caller';
import { BadRequestError, ConflictError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { requirePermission } from '../kernel/permissions';
import type { EnvVarChanges } from './schemas';
import { refuseMcpTool } from './tool-holds';
import { listAllToolVersions, mutateTool, type ToolRecord } from './tool-repository';
import { toolAttributes } from './tools';
import { activeVersions } from './versions';

/** A deleted environment variable's name cannot be inserted again for this long (the reference's "recently deleted"). */
export const envVarReuseDelayMs = 15 * 60 * 1000;

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
    refuseMcpTool(tool);
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

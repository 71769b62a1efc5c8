import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { deleteObjects } from '../aws/bucket';
import { toolRuntime } from './deployment-runtime';
import { repositoryName } from './source-repository';

/** The artifact bucket prefix of an organization's tool builds. */
export const toolArtifactPrefix = (orgId: string) => `tools/${orgId}/`;

/**
 * Erases what an organization's tools keep outside the table: build artifacts, what the runtime
 * deployed (functions, unpacked code) and, locally, its own tool repository (a team's repository
 * is shared with the team's other organizations and stays). Idempotent.
 */
export const eraseOrganizationTools = async (orgId: string): Promise<void> => {
  await deleteObjects(toolArtifactPrefix(orgId));
  await (await toolRuntime()).eraseOrganization(orgId);
  const localRoot = process.env.TOOL_REPOSITORY_ROOT;
  if (localRoot) await rm(join(localRoot, repositoryName(orgId, null, 'team')), { recursive: true, force: true });
};

import { buildErrorLine, storeBuildOutput } from '#shared/tool/codebuild-builder';
import { buildToolProject } from '#shared/tool/tool-build';

/**
 * The tool build job that the CodeBuild project runs (`infra/constructs/tool-build.ts` bundles
 * it as an asset): the same build steps as the in-process builder, on the request CodeBuild was
 * started with (`buildVariablesOf`). It stores the artifact and its manifest, or prints the
 * build's error and its status on one marked line and fails the build, for the builder worker
 * (or a waiting test) to read.
 */
const variable = (name: string): string => process.env[name] ?? '';

try {
  const artifactKey = variable('TOOL_ARTIFACT_KEY');
  const result = await buildToolProject({
    orgId: variable('TOOL_ORG_ID'),
    toolId: variable('TOOL_ID'),
    repository: variable('TOOL_REPOSITORY'),
    projectPath: variable('TOOL_PROJECT_PATH'),
    branch: variable('TOOL_BRANCH') || undefined,
    lastValidCommit: variable('TOOL_LAST_VALID_COMMIT') || null,
    artifactKey,
  });
  await storeBuildOutput(artifactKey, result);
  console.log(`Built commit ${result.commit} into ${artifactKey}.`);
} catch (error) {
  console.error(buildErrorLine(error));
  process.exitCode = 1;
}

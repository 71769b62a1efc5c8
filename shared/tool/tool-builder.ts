import { type BuiltProject, buildProject } from './project';
import { readProject } from './source-repository';

/**
 * Where tool projects are built: the port the publish operation calls. Both adapters run the
 * same build steps ({@link buildToolProject}: read the project at the tip of a branch, pin the
 * commit, bundle or install); they differ in where and when.
 * - In-process (`npm start`, the default): the steps run in the request, whose answer carries a
 *   failed build's error (400).
 * - CodeBuild (`TOOL_BUILDER=codebuild`, `codebuild-builder.ts`): a Lambda has neither git nor
 *   Python, so a CodeBuild project runs the steps (`functions/builds/tool.ts`) and its state
 *   change reaches the `tool-build` queue; the builder worker then records or deploys the result.
 */
export interface ToolBuildRequest {
  orgId: string;
  toolId: string;
  /** The repository's name (`repositoryName`). */
  repository: string;
  projectPath: string;
  /** The branch to build; the default branch when absent. */
  branch?: string;
  /** The commit of the tool's last valid version, which the built commit may not predate. */
  lastValidCommit: string | null;
  /** Where the artifact goes in the artifact bucket (the organization's prefix). */
  artifactKey: string;
}

/** What the build steps report: the pinned commit, the built project, and its place in history. */
export interface ToolBuildResult {
  commit: string;
  built: BuiltProject;
  /** Whether the commit is older than `lastValidCommit` (an ancestor of it). */
  predatesLastValid: boolean;
}

export type ToolBuildStart = { state: 'built'; result: ToolBuildResult } | { state: 'started'; buildId: string };

export interface ToolBuilder {
  /** Builds now (`built`), or starts a build whose outcome arrives later on the `tool-build` queue (`started`). */
  build(request: ToolBuildRequest): Promise<ToolBuildStart>;
}

/** The build steps, one source of truth for both adapters. A project that cannot build throws `BuildError` (400). */
export const buildToolProject = async (request: ToolBuildRequest): Promise<ToolBuildResult> => {
  const snapshot = await readProject(request.repository, request.projectPath, request.branch);
  const built = await buildProject(snapshot.files);
  return {
    commit: snapshot.commit,
    built,
    predatesLastValid: request.lastValidCommit !== null && (await snapshot.predates(request.lastValidCommit)),
  };
};

export const inProcessBuilder: ToolBuilder = {
  build: async (request) => ({ state: 'built', result: await buildToolProject(request) }),
};

/** The builder of this deployment: CodeBuild in AWS (`TOOL_BUILDER=codebuild`), in-process otherwise. */
export const toolBuilder = async (): Promise<ToolBuilder> =>
  process.env.TOOL_BUILDER === 'codebuild' ? (await import('./codebuild-builder')).codeBuildBuilder : inProcessBuilder;

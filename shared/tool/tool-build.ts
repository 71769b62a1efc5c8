import { writeObject } from '../aws/bucket';
import { type BuiltProject, buildProject } from './project';
import { readProject } from './source-repository';

/**
 * Where tool projects are built: the port publish-tool-version and test-tool call, through the
 * builder of this deployment (`deployment-builder.ts`). Both adapters run the same build steps
 * ({@link buildToolProject}: read the project at the tip of a branch, pin the commit, bundle or
 * install); they differ in where and when.
 * - In-process (`npm start`, the default, `in-process-builder.ts`): the steps run in the request,
 *   whose answer carries a failed build's error (400).
 * - CodeBuild (`TOOL_BUILDER=codebuild`, `codebuild-builder.ts`): a Lambda has neither git nor
 *   Python, so a CodeBuild project runs the steps (`functions/builds/tool.ts`). A publish returns
 *   at once and the build's state change reaches the `tool-build` queue, where the builder worker
 *   records or deploys the result; a test waits for the build (`buildAndWait`).
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

/** A build that ended well, its artifact already stored at the request's `artifactKey`: what it built, bytes aside. */
export type StoredToolBuild = Omit<ToolBuildResult, 'built'> & { built: Omit<BuiltProject, 'artifact'> };

export type ToolBuildStart = { state: 'built'; result: ToolBuildResult } | { state: 'started'; buildId: string };

export interface ToolBuilder {
  /** Builds now (`built`), or starts a build whose outcome arrives later on the `tool-build` queue (`started`). */
  build(request: ToolBuildRequest): Promise<ToolBuildStart>;
  /**
   * Builds and waits for the end, at most `deadlineMs`: the artifact is then stored at
   * `request.artifactKey`. A build that fails throws its error (`BuildError`, 400; 404 for a
   * missing branch or project directory); one still running at the deadline is stopped and
   * throws 503.
   */
  buildAndWait(request: ToolBuildRequest, deadlineMs: number): Promise<StoredToolBuild>;
  /** Deletes what a build stored at `artifactKey` (a test's artifact, once used). Idempotent. */
  discard(artifactKey: string): Promise<void>;
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

export const storeArtifact = (key: string, artifact: Buffer): Promise<void> =>
  writeObject(key, artifact, 'application/gzip');

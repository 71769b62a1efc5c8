import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ensureLocalRepository } from '#shared/tool/source-repository';
import { api, eventually, expectStatus, harness } from './client';
import { uniqueName } from './fixtures';
import type { Session } from './identity';

/**
 * Tool fixtures: commits to the local tool repository the platform reads (the test
 * organizations share the team `test-team`), and tools published from it.
 */
const run = promisify(execFile);
export const testTeamRepository = 'test-team';

const git = async (args: string[]) => {
  const path = await ensureLocalRepository(harness().toolRepositoryRoot, testTeamRepository);
  const { stdout } = await run('git', ['-c', 'user.name=Test', '-c', 'user.email=test@localhost', ...args], {
    cwd: path,
  });
  return stdout.trim();
};

/** Commits files (path → content) under a project directory; returns the commit. */
export const commitProject = async (projectPath: string, files: Record<string, string>): Promise<string> => {
  const root = await ensureLocalRepository(harness().toolRepositoryRoot, testTeamRepository);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, projectPath, path)), { recursive: true });
    await writeFile(join(root, projectPath, path), content);
  }
  await git(['add', '--all']);
  await git(['commit', '--quiet', '--allow-empty', '-m', `Update ${projectPath}`]);
  return git(['rev-parse', 'HEAD']);
};

/** Moves the default branch to a commit (to make its head older than a published one). */
export const resetBranchTo = (commit: string) => git(['reset', '--quiet', '--hard', commit]);

/** A JavaScript tool project whose handler body is `code` (it receives `input` and `context`). */
export const nodeProject = (code: string, declaration: Record<string, unknown> = {}): Record<string, string> => ({
  'package.json': JSON.stringify({
    name: 'fixture',
    type: 'module',
    amigo: { entry: 'index.js', input_schema: { type: 'object' }, ...declaration },
  }),
  'index.js': `export const handler = async (input, context) => {\n${code}\n};\n`,
});

export const toolsPath = (orgId: string) => `/v1/${orgId}/tool/`;
export const toolPath = (orgId: string, toolId: string) => `/v1/${orgId}/tool/${toolId}`;

export const createTool = async (session: Session, body: Record<string, unknown> = {}): Promise<string> => {
  const response = await api(toolsPath(session.orgId), {
    token: session.token,
    body: { name: uniqueName('tool').replace(' ', '_'), description: 'A test tool.', tags: {}, ...body },
  });
  expectStatus('create tool', response, 201);
  return response.body.id as string;
};

export const setEnvvars = async (
  session: Session,
  toolId: string,
  inserts: { name: string; value: string; is_secret: boolean }[],
) => {
  const response = await api(`${toolPath(session.orgId, toolId)}/envvar`, { token: session.token, body: { inserts } });
  expectStatus('insert environment variables', response, 204);
};

/** Waits until a published version is deployed (or failed) and returns it. */
export const deployedVersion = (session: Session, toolId: string, version: string) =>
  eventually(async () => {
    const listed = await api(`${toolPath(session.orgId, toolId)}/version`, {
      token: session.token,
      query: { versions: `==${version}` },
    });
    const found = (listed.body.tool_versions as { status: string }[] | undefined)?.[0];
    return found && found.status !== 'deploying' ? (found as Record<string, unknown>) : undefined;
  }, 30_000);

/** Publishes a project and waits for the deployment; returns the version text. */
export const publishAndDeploy = async (
  session: Session,
  toolId: string,
  projectPath: string,
  bumpType = 'major',
): Promise<string> => {
  const published = await api(`${toolPath(session.orgId, toolId)}/version`, {
    token: session.token,
    body: { project_path: projectPath, bump_type: bumpType },
  });
  expectStatus('publish tool version', published, 201);
  const deployed = await deployedVersion(session, toolId, published.body.new_version);
  if (deployed.status !== 'deployed') throw new Error(`version not deployed: ${JSON.stringify(deployed)}`);
  return published.body.new_version as string;
};

export const invoke = (session: Session, toolId: string, version: string, inputs: Record<string, unknown>[]) =>
  api(`${toolPath(session.orgId, toolId)}/version/${version}/invoke`, {
    token: session.token,
    body: { inputs: inputs.map((input_parameters) => ({ input_parameters })) },
  });

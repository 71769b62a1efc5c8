import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { config } from '../kernel/config';
import { NotFoundError } from '../kernel/errors';
import { type ProjectFiles, sampleProjects } from './sample-projects';

/**
 * The organization's tool repository, read with the git CLI. Organizations with the same
 * `devops_team_name` share one (`team`); `main` is the deployment's shared repository.
 *
 * - Locally (`TOOL_REPOSITORY_ROOT`): a git repository per name under the state directory,
 *   created and seeded with the sample projects on first use. Developers commit to it.
 * - In AWS (`TOOL_REPOSITORY_URL`, with `{repository}` in it): a remote over HTTPS, fetched into
 *   /tmp; its credentials (`{"username","password"}`) are the Secrets Manager secret
 *   `TOOL_REPOSITORY_SECRET_ARN`, passed to git through the environment, never on a command line.
 */
const run = promisify(execFile);

const gitEnvironment = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  ...extra,
});

const git = async (cwd: string, args: string[], extra: Record<string, string> = {}): Promise<string> => {
  const { stdout } = await run('git', args, { cwd, env: gitEnvironment(extra), maxBuffer: 64 * 1024 * 1024 });
  return stdout;
};

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const writeProject = async (root: string, files: ProjectFiles) => {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
};

const seedAuthor = ['-c', 'user.name=Classic API', '-c', 'user.email=platform@localhost'];

/**
 * Creates the local repository `name` with the sample projects if it does not exist yet. It is
 * built beside its place and renamed into it, so concurrent first users agree on one.
 */
export const ensureLocalRepository = async (root: string, name: string): Promise<string> => {
  const path = join(root, name);
  if (await exists(join(path, '.git'))) return path;
  await mkdir(root, { recursive: true });
  const building = await mkdtemp(join(root, `.${name}-`));
  try {
    await git(building, ['init', '--quiet', '--initial-branch=main']);
    for (const [projectPath, files] of Object.entries(sampleProjects))
      await writeProject(join(building, projectPath), files);
    await git(building, ['add', '--all']);
    await git(building, [...seedAuthor, 'commit', '--quiet', '-m', 'Sample tool projects']);
    await rename(building, path).catch(async (error: NodeJS.ErrnoException) => {
      if (!(await exists(join(path, '.git')))) throw error;
    });
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return path;
};

/** The repository name of an organization: its team's, or its own when it has no team. */
export const repositoryName = (orgId: string, devopsTeamName: string | null, repo: 'team' | 'main'): string =>
  repo === 'main' ? 'main' : (devopsTeamName ?? `org-${orgId}`);

const remoteCredentials = async (): Promise<Record<string, string>> => {
  const secretArn = process.env.TOOL_REPOSITORY_SECRET_ARN;
  if (!secretArn) return {};
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const secret = await new SecretsManagerClient({ region: config.region }).send(
    new GetSecretValueCommand({ SecretId: secretArn }),
  );
  const { username, password } = JSON.parse(secret.SecretString ?? '{}') as { username?: string; password?: string };
  // git reads these through the credential helper below; they never appear in argv or logs.
  return { TOOL_GIT_USERNAME: username ?? '', TOOL_GIT_PASSWORD: password ?? '' };
};

/** The repository's credentials as values to mask wherever build output is kept (none locally). */
export const repositoryCredentialValues = async (): Promise<string[]> =>
  Object.values(await remoteCredentials()).filter((value) => value !== '');

const credentialHelper = [
  '-c',
  'credential.helper=!f() { echo "username=$TOOL_GIT_USERNAME"; echo "password=$TOOL_GIT_PASSWORD"; }; f',
];

/** A checkout of the repository `name` that can be read at any commit, and how to reach it. */
const openRepository = async (name: string): Promise<{ path: string; fetch: (ref: string) => Promise<string> }> => {
  const localRoot = process.env.TOOL_REPOSITORY_ROOT;
  if (localRoot) {
    const path = await ensureLocalRepository(localRoot, name);
    return { path, fetch: async (ref) => ref };
  }
  const template = process.env.TOOL_REPOSITORY_URL;
  if (!template) throw new Error('Neither TOOL_REPOSITORY_ROOT nor TOOL_REPOSITORY_URL is set: no tool repository.');
  const path = join(tmpdir(), 'tool-repositories', name);
  if (!(await exists(join(path, '.git')))) {
    await mkdir(path, { recursive: true });
    await git(path, ['init', '--quiet']);
  }
  const url = template.replace('{repository}', encodeURIComponent(name));
  return {
    path,
    fetch: async (ref) => {
      await git(path, [...credentialHelper, 'fetch', '--quiet', '--depth', '50', url, ref], await remoteCredentials());
      return 'FETCH_HEAD';
    },
  };
};

/** A project's files (paths relative to the project directory) at one commit. */
export type ProjectContents = Record<string, Buffer>;

export interface ProjectSnapshot {
  commit: string;
  files: ProjectContents;
  /** Whether `commit` is an ancestor of `other` (an older commit of the same history). */
  predates: (other: string) => Promise<boolean>;
}

/** Files larger than this are not read: tool projects are source, not data. */
const maxProjectBytes = 20 * 1024 * 1024;

/**
 * The files of `projectPath` at the tip of `ref` (the default branch when absent), with the
 * commit pinned. 404 when the branch or the directory does not exist.
 */
export const readProject = async (repository: string, projectPath: string, ref?: string): Promise<ProjectSnapshot> => {
  const { path, fetch } = await openRepository(repository);
  const fetched = await fetch(ref ?? 'HEAD').catch(() => undefined);
  const commit = fetched
    ? await git(path, ['rev-parse', '--verify', '--quiet', `${fetched}^{commit}`]).then(
        (out) => out.trim(),
        () => undefined,
      )
    : undefined;
  if (!commit)
    throw new NotFoundError(`The commit or branch '${ref ?? 'HEAD'}' does not exist in the tool repository.`);
  const listing = await git(path, ['ls-tree', '-r', '-z', '--long', commit, '--', `${projectPath}/`]);
  const entries = listing
    .split('\0')
    .filter((line) => line !== '')
    .map((line) => {
      const [meta = '', file = ''] = line.split('\t');
      const [, type, object, size] = meta.split(/\s+/);
      return { type, object: object ?? '', size: Number(size), file };
    })
    .filter((entry) => entry.type === 'blob');
  if (entries.length === 0)
    throw new NotFoundError(`The project directory '${projectPath}' does not exist at commit ${commit}.`);
  if (entries.reduce((total, entry) => total + entry.size, 0) > maxProjectBytes) {
    throw new NotFoundError(
      `The project directory '${projectPath}' is larger than ${maxProjectBytes / 1024 / 1024} MB.`,
    );
  }
  const files: ProjectContents = {};
  for (const entry of entries) {
    const { stdout } = await run('git', ['cat-file', 'blob', entry.object], {
      cwd: path,
      env: gitEnvironment(),
      encoding: 'buffer',
      maxBuffer: maxProjectBytes,
    });
    files[entry.file.slice(projectPath.length + 1)] = stdout;
  }
  return {
    commit,
    files,
    predates: async (other) =>
      other !== commit &&
      (await git(path, ['merge-base', '--is-ancestor', commit, other]).then(
        () => true,
        () => false,
      )),
  };
};

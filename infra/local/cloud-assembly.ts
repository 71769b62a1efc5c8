import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { repositoryRoot } from '../bundling';

/**
 * The cloud assembly `cdk deploy` ships (`cdk.out`), synthesized when the sources or the context
 * changed since the last synthesis and reused otherwise: a stamp in `cdk.out` holds the hash of
 * what the assembly is made from (the product and infrastructure sources, cdk.json, the lock
 * file) and of the `-c key=value` context given on top of cdk.json.
 */
export const cloudAssemblyDir = join(repositoryRoot, 'cdk.out');
const stampPath = join(cloudAssemblyDir, 'local-platform.stamp');

const sourceFolders = ['functions', 'shared', 'events', 'infra'];
const sourceFiles = ['cdk.json', 'package-lock.json', 'tsconfig.json'];
/** Read by neither the CDK app nor a bundle. */
const notInAssembly = (path: string): boolean => path.startsWith('infra/local/') || path.endsWith('.test.ts');

const assemblyInputsHash = async (context: Record<string, string>): Promise<string> => {
  const hash = createHash('sha256').update(JSON.stringify(Object.entries(context).sort()));
  const listed = await Promise.all(
    sourceFolders.map(async (folder) =>
      (await readdir(join(repositoryRoot, folder), { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => relative(repositoryRoot, join(entry.parentPath, entry.name))),
    ),
  );
  const paths = [...listed.flat().filter((path) => !notInAssembly(path)), ...sourceFiles].sort();
  for (const path of paths)
    hash
      .update(path)
      .update('\0')
      .update(await readFile(join(repositoryRoot, path)));
  return hash.digest('hex');
};

/** `key=value` pairs, as `cdk -c` takes them. */
export const parseContext = (pairs: readonly string[]): Record<string, string> =>
  Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`context must be given as key=value, got '${pair}'`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );

/** Whether cdk.out holds the assembly of the current sources with this context (as `npm run synth` made it). */
export const isCloudAssemblyCurrent = async (context: Record<string, string> = {}): Promise<boolean> =>
  (await readFile(stampPath, 'utf8').catch(() => '')) === (await assemblyInputsHash(context));

/** `npx cdk synth --quiet` with the context given, unless the assembly in cdk.out was made from the same inputs. */
export const ensureCloudAssembly = async (
  context: Record<string, string>,
  log: (line: string) => void,
): Promise<string> => {
  const inputs = await assemblyInputsHash(context);
  if ((await readFile(stampPath, 'utf8').catch(() => '')) === inputs) {
    log(`cloud assembly in ${relative(repositoryRoot, cloudAssemblyDir)} is up to date`);
    return cloudAssemblyDir;
  }
  const contextArguments = Object.entries(context).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
  log(`synthesizing the cloud assembly (npx cdk synth --quiet ${contextArguments.join(' ')})`);
  const startedAt = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('npx', ['cdk', 'synth', '--quiet', ...contextArguments], {
      cwd: repositoryRoot,
      // The CDK's progress is for the terminal; stdout stays the platform's own.
      stdio: ['ignore', process.stderr, process.stderr],
    });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`cdk synth failed (${signal ?? `exit ${code}`})`)),
    );
  });
  await writeFile(stampPath, inputs);
  log(`cloud assembly synthesized in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  return cloudAssemblyDir;
};

import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The files (repository-relative) and packages esbuild bundles for `entry`: what importing it loads. */
export const bundleInputs = async (entry: string): Promise<string[]> => {
  const { metafile } = await build({
    entryPoints: [`${root}${entry}`],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return Object.keys(metafile.inputs);
};

/** What a module of declarations must not load: the AWS SDK, Powertools (clients, loggers) or a repository. */
export const loadsClientsOrRecords = (input: string): boolean =>
  /node_modules\/@aws-sdk\//.test(input) ||
  /node_modules\/@aws-lambda-powertools\//.test(input) ||
  /-repository\.ts$/.test(input);

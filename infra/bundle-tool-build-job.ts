import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { lambdaBuildOptions, repositoryRoot } from './bundling';

/** The tool build job CodeBuild runs (`functions/builds/tool.ts`). */
const toolBuildJobEntry = 'functions/builds/tool.ts';

/**
 * `tsx infra/bundle-tool-build-job.ts <outDir>`: bundles the tool build job like a Lambda
 * handler, except esbuild itself, which cannot be bundled (it runs its native binary): the
 * `package.json` beside the bundle pins the platform's esbuild version, which the build
 * installs, so tool projects bundle in CodeBuild exactly as they do locally.
 */
const [outDir] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: bundle-tool-build-job <output directory>');
  process.exit(2);
}
await mkdir(outDir, { recursive: true });
// Lambda bundles leave esbuild out too (`localOnlyPackages`): here the build installs it.
await build(lambdaBuildOptions(toolBuildJobEntry, join(outDir, 'index.mjs')));
const { version } = JSON.parse(await readFile(join(repositoryRoot, 'node_modules/esbuild/package.json'), 'utf8')) as {
  version: string;
};
await writeFile(
  join(outDir, 'package.json'),
  `${JSON.stringify({ name: 'tool-build-job', private: true, type: 'module', dependencies: { esbuild: version } }, null, 2)}\n`,
);

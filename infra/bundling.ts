import { cp } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, buildSync, type Plugin } from 'esbuild';

/**
 * How every Lambda is bundled: one minified ESM file for Node 22 with the AWS SDK
 * included (the SDK version is the one the tests ran against). The CDK stack and the
 * benchmark both use this, so the bench measures what is deployed.
 */
export const repositoryRoot = fileURLToPath(new URL('../', import.meta.url));

/**
 * zod's `z` namespace re-exports every locale, which keeps ~260 KiB of translations in
 * each bundle. zod registers English itself, and nothing here selects another locale,
 * so the locale index is replaced with English alone.
 */
const englishOnlyZodLocales: Plugin = {
  name: 'english-only-zod-locales',
  setup(builder) {
    builder.onResolve({ filter: /[\\/]locales[\\/]index\.js$/ }, (args) =>
      args.importer.includes(`${sep}zod${sep}`)
        ? { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-locales' }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * Packages with native bindings cannot be bundled: a function importing one gets them copied
 * beside its bundle (`node_modules/`), as installed here (linux-x64 glibc), and so runs on
 * Lambda's x86_64 (see `importsNativePackage`).
 */
const nativePackages = ['@duckdb/node-api'];
const nativeFolders: Record<string, string[]> = {
  '@duckdb/node-api': ['@duckdb/node-api', '@duckdb/node-bindings', '@duckdb/node-bindings-linux-x64'],
};

export const lambdaBuildOptions = (entry: string, outfile: string): BuildOptions => ({
  entryPoints: [join(repositoryRoot, entry)],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  mainFields: ['module', 'main'],
  minify: true,
  sourcemap: true,
  sourcesContent: false,
  legalComments: 'none',
  // ESM output still meets CommonJS dependencies that call require().
  banner: {
    js: "import { createRequire as topLevelCreateRequire } from 'node:module'; const require = topLevelCreateRequire(import.meta.url);",
  },
  plugins: [englishOnlyZodLocales],
  external: nativePackages,
  alias: { semver: join(repositoryRoot, 'infra/bundling-shims/semver.ts') },
  logLevel: 'error',
});

/**
 * Whether a handler's bundle carries a native package, whose binding is the x86_64 one
 * installed here: its function must run on x86_64 rather than arm64. Decided from the import
 * graph alone (no output written), as CDK needs it while it builds the function.
 */
export const importsNativePackage = (entry: string): boolean => {
  // Synchronous builds take no plugins; the one plugin only trims zod's locales, not the import graph.
  const { metafile } = buildSync({
    ...lambdaBuildOptions(entry, 'index.mjs'),
    plugins: [],
    write: false,
    minify: false,
    sourcemap: false,
    metafile: true,
  });
  return Object.values(metafile.outputs).some((output) =>
    output.imports.some((used) => nativePackages.includes(used.path)),
  );
};

/** Bundles a handler (path relative to the repository root) into `<outDir>/index.mjs`. */
export const bundleLambda = async (entry: string, outDir: string): Promise<string> => {
  const outfile = join(outDir, 'index.mjs');
  const { metafile } = await build({ ...lambdaBuildOptions(entry, outfile), metafile: true });
  const imported = new Set(
    Object.values(metafile.outputs).flatMap((output) => output.imports.map((used) => used.path)),
  );
  for (const name of nativePackages.filter((external) => imported.has(external))) {
    for (const folder of nativeFolders[name] ?? []) {
      await cp(join(repositoryRoot, 'node_modules', folder), join(outDir, 'node_modules', folder), {
        recursive: true,
        dereference: true,
      });
    }
  }
  return outfile;
};

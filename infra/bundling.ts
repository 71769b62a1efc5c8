import { cp } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, buildSync, type Metafile, type Plugin } from 'esbuild';

/**
 * How every Lambda is bundled: minified ESM for Node 22 with the AWS SDK included (the SDK
 * version is the one the tests ran against), the handler in `index.mjs`. Code splitting puts
 * what the handler imports dynamically (provider SDKs, tool builds, the Lambda client...) in
 * `chunks/`, which a cold start does not load. The CDK stack and the benchmark both use this,
 * so the bench measures what is deployed.
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
 * Files the app serves to browsers from npm packages (the console's charting library): each
 * module reading one at run time (`shared/app/chart-library.ts`) is replaced by one that holds the
 * file's text, so the bundle needs no `node_modules` beside it. The module's export keeps its name
 * and what it answers.
 */
const inlinedBrowserFiles: Plugin = {
  name: 'inlined-browser-files',
  setup(builder) {
    builder.onLoad({ filter: /[\\/]shared[\\/]app[\\/]chart-library\.ts$/ }, async () => {
      const { chartLibraryFile, chartLibrarySource } = await import('#shared/app/chart-library');
      return {
        contents: `export const chartLibraryFile = ${JSON.stringify(chartLibraryFile)};\nexport const chartLibrarySource = async () => ${JSON.stringify(await chartLibrarySource())};\n`,
        loader: 'ts',
      };
    });
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

/**
 * Packages only the local platform's engines use, left out of the bundles: esbuild builds tools
 * in-process (CodeBuild does in AWS), and cannot be bundled itself. A bundle run locally
 * (`npm start -- --bundled`) finds it in the repository's node_modules, above cdk.out.
 */
const localOnlyPackages = ['esbuild'];

export const lambdaBuildOptions = (entry: string, outdir: string): BuildOptions => ({
  entryPoints: [{ in: join(repositoryRoot, entry), out: 'index' }],
  outdir,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
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
  plugins: [englishOnlyZodLocales, inlinedBrowserFiles],
  external: [...nativePackages, ...localOnlyPackages],
  alias: { semver: join(repositoryRoot, 'infra/bundling-shims/semver.ts') },
  logLevel: 'error',
});

/**
 * Whether a handler's bundle carries a native package, whose binding is the x86_64 one
 * installed here: its function must run on x86_64 rather than arm64. Decided from the import
 * graph alone (no output written), as CDK needs it while it builds the function.
 */
const nativeImporters = new Map<string, boolean>();

export const importsNativePackage = (entry: string): boolean => {
  const known = nativeImporters.get(entry);
  if (known !== undefined) return known;
  // Synchronous builds take no plugins; the one plugin only trims zod's locales, not the import graph.
  // The tracing SDK, which carries no native binding, is not followed: its ~330 files would be parsed for every entry.
  const options = lambdaBuildOptions(entry, 'bundle');
  const { metafile } = buildSync({
    ...options,
    external: [...(options.external ?? []), '@opentelemetry/*'],
    plugins: [],
    write: false,
    minify: false,
    sourcemap: false,
    metafile: true,
  });
  const imports = Object.values(metafile.outputs).some((output) =>
    output.imports.some((used) => nativePackages.includes(used.path)),
  );
  // Every stack (one per region) asks again for the same handlers: the import graph is read once per entry.
  nativeImporters.set(entry, imports);
  return imports;
};

/** What a bundle holds, as the bench reports it. */
export interface BundledLambda {
  /** `<outDir>/index.mjs`, the handler module. */
  entryPath: string;
  entryBytes: number;
  /** The entry and every chunk it imports statically, transitively: what a cold start loads. */
  coldLoadBytes: number;
  /** Every JavaScript file of the bundle, lazily loaded chunks included (source maps excluded). */
  totalBytes: number;
  chunkCount: number;
  /** Native packages copied beside the bundle (see `nativePackages`). */
  nativePackages: string[];
}

/** Sums the entry and what it reaches through static imports in the build's output graph. */
const coldLoadBytesOf = (outputs: Metafile['outputs'], entryOutput: string): number => {
  const seen = new Set<string>();
  const pending = [entryOutput];
  let bytes = 0;
  for (let path = pending.pop(); path !== undefined; path = pending.pop()) {
    const output = outputs[path];
    if (seen.has(path) || !output) continue;
    seen.add(path);
    bytes += output.bytes;
    for (const used of output.imports) if (used.kind === 'import-statement' && !used.external) pending.push(used.path);
  }
  return bytes;
};

/**
 * Bundles a handler (path relative to the repository root) into `<outDir>/index.mjs` and `<outDir>/chunks/`.
 * `extraPlugins` run after the bundling's own (the bench marks each module's code with one).
 */
export const bundleLambda = async (
  entry: string,
  outDir: string,
  extraPlugins: Plugin[] = [],
): Promise<BundledLambda> => {
  const outfile = join(outDir, 'index.mjs');
  const options = lambdaBuildOptions(entry, outDir);
  const { metafile } = await build({
    ...options,
    plugins: [...(options.plugins ?? []), ...extraPlugins],
    metafile: true,
  });
  const imported = new Set(
    Object.values(metafile.outputs).flatMap((output) => output.imports.map((used) => used.path)),
  );
  const carried = nativePackages.filter((external) => imported.has(external));
  for (const name of carried) {
    for (const folder of nativeFolders[name] ?? []) {
      await cp(join(repositoryRoot, 'node_modules', folder), join(outDir, 'node_modules', folder), {
        recursive: true,
        dereference: true,
      });
    }
  }
  const scripts = Object.entries(metafile.outputs).filter(([path]) => path.endsWith('.mjs'));
  // Lazily imported modules are entry points of their own too: the handler is the one at index.mjs.
  const [entryOutput, { bytes: entryBytes }] = scripts.find(([path]) => resolve(path) === outfile) ?? [
    '',
    { bytes: 0 },
  ];
  return {
    entryPath: outfile,
    entryBytes,
    coldLoadBytes: coldLoadBytesOf(metafile.outputs, entryOutput),
    totalBytes: scripts.reduce((sum, [, output]) => sum + output.bytes, 0),
    chunkCount: scripts.length - 1,
    nativePackages: carried,
  };
};

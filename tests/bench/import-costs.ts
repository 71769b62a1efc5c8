import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import type { Plugin } from 'esbuild';
import { bundleLambda, repositoryRoot } from '../../infra/bundling';
import { percentiles } from './conversations';

/**
 * What each import costs a cold start (`npm run bench -- bundles --imports`). The handler is
 * bundled again with a mark after every module's own code: esbuild lays an ESM bundle's modules
 * out in evaluation order, so the CPU time between one mark and the next is what the module's
 * top-level code took (schemas built, clients made, tables filled), and a CommonJS module's
 * mark runs when it is first required. CPU time, not wall time: a busy machine inflates it less. The first module's figure includes reading, parsing and
 * linking the files a cold start loads. Costs are grouped by package, and by file for the
 * repository's own modules; the medians of a few fresh processes are printed.
 */
const run = promisify(execFile);
const samples = 5;

/** The module a source path belongs to: its package under node_modules, else the file itself. */
export const moduleOf = (path: string): string => {
  const packaged = path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  return packaged?.[1] ?? path;
};

/** Appends a mark to every module's code, naming it relative to the repository. */
const importMarks: Plugin = {
  name: 'import-marks',
  setup(builder) {
    builder.onLoad({ filter: /\.(ts|mts|js|mjs|cjs)$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const name = JSON.stringify(moduleOf(relative(repositoryRoot, args.path)));
      return {
        contents: `${source}\n;globalThis.__importMark?.(${name});\n`,
        loader: args.path.endsWith('ts') ? 'ts' : 'js',
      };
    });
  },
};

const markedProbe = (bundlePath: string) => `
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const marks = [];
globalThis.__importMark = (name) => marks.push([name, cpuMs()]);
globalThis.awslambda = { streamifyResponse: (fn) => fn, HttpResponseStream: { from: (stream) => stream } };
const started = cpuMs();
await import(${JSON.stringify(bundlePath)});
const costs = {};
let previous = started;
for (const [index, [name, at]] of marks.entries()) {
  // The files are read, parsed and linked before the first module runs: its figure holds both.
  const key = index === 0 ? \`(loading the files) and \${name}\` : name;
  costs[key] = (costs[key] ?? 0) + at - previous;
  previous = at;
}
console.log(JSON.stringify({ totalMs: cpuMs() - started, costs }));
`;

export interface ImportCosts {
  totalMs: number;
  /** Median CPU milliseconds per module (a package, or one of the repository's files), highest first. */
  costs: [module: string, ms: number][];
}

/** Bundles `entry` with marks into `outDir` and reads the median cost of each module over fresh processes. */
export const measureImportCosts = async (
  entry: string,
  outDir: string,
  env: NodeJS.ProcessEnv,
): Promise<ImportCosts> => {
  await rm(outDir, { recursive: true, force: true });
  const { entryPath } = await bundleLambda(entry, outDir, [importMarks]);
  const probePath = join(outDir, 'marked-probe.mjs');
  await writeFile(probePath, markedProbe(entryPath));
  const runs: { totalMs: number; costs: Record<string, number> }[] = [];
  for (let sample = 0; sample < samples; sample += 1) {
    const { stdout } = await run(process.execPath, [probePath], { env });
    runs.push(JSON.parse(stdout.trim().split('\n').at(-1) as string));
  }
  const modules = new Set(runs.flatMap((measured) => Object.keys(measured.costs)));
  const costs = [...modules].map(
    (name) => [name, percentiles(runs.map((measured) => measured.costs[name] ?? 0)).p50] as [string, number],
  );
  return {
    totalMs: percentiles(runs.map((measured) => measured.totalMs)).p50,
    costs: costs.sort((a, b) => b[1] - a[1]),
  };
};

/** The costliest modules of a function, then the rest summed. */
export const printImportCosts = (name: string, measured: ImportCosts, shown = 12): void => {
  console.log(`  ${name}: ${measured.totalMs.toFixed(0)} ms of CPU to import with marks`);
  for (const [module, ms] of measured.costs.slice(0, shown))
    console.log(`    ${ms.toFixed(1).padStart(7)} ms  ${module}`);
  const rest = measured.costs.slice(shown);
  const restMs = rest.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`    ${restMs.toFixed(1).padStart(7)} ms  ${rest.length} other modules`);
};

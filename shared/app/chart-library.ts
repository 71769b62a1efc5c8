import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The charting library the console's dashboard draws with: Chart.js's browser build, as its npm
 * package publishes it, served by the app as a script of its own origin (the pages' CSP allows no
 * other). Read from the package here; in a Lambda bundle esbuild puts the file's text in this
 * module's place (`infra/bundling.ts`, `inlinedBrowserFiles`), in a chunk only this asset's
 * requests load.
 */
export const chartLibraryFile = { packageName: 'chart.js', file: 'chart.umd.min.js' } as const;

export const chartLibrarySource = async (): Promise<string> =>
  readFile(
    join(dirname(createRequire(import.meta.url).resolve(chartLibraryFile.packageName)), chartLibraryFile.file),
    'utf8',
  );

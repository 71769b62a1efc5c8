import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assemblyFreshness, cloudAssembly, functionsOf, templates } from './cloud-assembly';

/**
 * What each function's bundle carries, as `cdk deploy` would ship it: which sources (read from
 * each file's source map) a cold start loads (`index.mjs` and what it imports statically), and
 * which only the lazily imported chunks hold (docs/conventions.md, "Cold starts").
 */
// Chunks are named `<name>-<hash>.mjs` (`infra/bundling.ts`): text that only looks like an import
// (a tool scaffold's source in a string) names no chunk.
const staticImport = /(?:\bfrom\s*|\bimport\s*)["'](\.{1,2}\/(?:chunks\/)?[\w.-]+-[A-Z0-9]{8}\.mjs)["']/g;
const dynamicImport = /\bimport\s*\(\s*["'](\.{1,2}\/(?:chunks\/)?[\w.-]+-[A-Z0-9]{8}\.mjs)["']\s*\)/g;

interface BundleContents {
  /** Sources of the files a cold start loads. */
  cold: Set<string>;
  /** Sources of every file reached from `index.mjs`, lazily imported chunks included. */
  all: Set<string>;
  /** Imported files the bundle lacks. */
  missing: string[];
}

const importsIn = (code: string, pattern: RegExp, from: string) =>
  [...code.matchAll(pattern)].map((match) => join(dirname(from), match[1] as string));

const contentsOf = (assetDirectory: string): BundleContents => {
  const contents: BundleContents = { cold: new Set(), all: new Set(), missing: [] };
  const seen = new Set<string>();
  const pending = [{ path: join(assetDirectory, 'index.mjs'), cold: true }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { path, cold } = next;
    if (seen.has(`${cold}:${path}`)) continue;
    seen.add(`${cold}:${path}`);
    if (!existsSync(path)) {
      contents.missing.push(path.slice(assetDirectory.length + 1));
      continue;
    }
    const code = readFileSync(path, 'utf8');
    const { sources } = JSON.parse(readFileSync(`${path}.map`, 'utf8')) as { sources: string[] };
    for (const source of sources) {
      const name = source.replace(/^(\.\.\/)+/, '');
      contents.all.add(name);
      if (cold) contents.cold.add(name);
    }
    for (const imported of importsIn(code, staticImport, path)) pending.push({ path: imported, cold });
    for (const imported of importsIn(code, dynamicImport, path)) pending.push({ path: imported, cold: false });
  }
  return contents;
};

/** Code few requests run, which a cold start must not load: each is imported where it is first needed. */
const loadedOnFirstUse = [
  'shared/aws/usage-meter.ts',
  'shared/api/route-table.ts',
  'shared/api/openapi.ts',
  'shared/composition/entity-catalog.ts',
  'shared/speech/builtin.ts',
  'shared/speech/aws.ts',
  'shared/speech/openai-compatible.ts',
  'node_modules/re2js/',
  'node_modules/markdown-it/',
  'node_modules/yazl/',
  'node_modules/yauzl/',
  'node_modules/ajv/',
  'node_modules/aws-xray-sdk-core/',
  'node_modules/@aws-sdk/client-s3/',
  'node_modules/@aws-sdk/client-sqs/',
  'node_modules/@aws-sdk/client-secrets-manager/',
  // Traces are exported only where OTEL_EXPORTER_OTLP_ENDPOINT is set: the facade loads the SDK then.
  'node_modules/@opentelemetry/',
  'shared/telemetry/opentelemetry.ts',
];

const carries = (sources: Set<string>, prefix: string) => [...sources].some((source) => source.startsWith(prefix));

describe('bundle contents', () => {
  const stale = assemblyFreshness();
  const bundles = new Map<string, { name: string; contents: () => BundleContents }>();
  for (const [file, template] of stale ? [] : templates()) {
    for (const [id, fn] of functionsOf(template)) {
      const assetPath = fn.Metadata?.['aws:asset:path'];
      if (typeof assetPath !== 'string' || bundles.has(assetPath)) continue;
      let contents: BundleContents | undefined;
      bundles.set(assetPath, {
        name: String(fn.Properties.Description ?? `${file} ${id}`),
        contents: () => {
          contents ??= contentsOf(join(cloudAssembly, assetPath));
          return contents;
        },
      });
    }
  }
  const cases = [...bundles.values()];
  const named = (description: string) => {
    const bundle = cases.find(({ name }) => name === description);
    if (!bundle) throw new Error(`no bundle of ${description}`);
    return bundle.contents();
  };

  it('reads a cloud assembly synthesized from the current sources', () => {
    expect(stale).toBeUndefined();
    expect(cases.length).toBeGreaterThan(20);
  });

  it('ships no bundle with the usage meter: only the local platform meters, in its own process', () => {
    const metering = cases.filter(({ contents }) => contents().all.has('shared/aws/usage-meter.ts'));
    expect(metering.map(({ name }) => name)).toEqual([]);
  });

  it.each(cases)('$name loads at a cold start none of what few requests need', ({ contents }) => {
    const { cold } = contents();
    expect(loadedOnFirstUse.filter((prefix) => carries(cold, prefix))).toEqual([]);
  });

  it.each(cases)('$name ships every chunk it imports', ({ contents }) => {
    expect(contents().missing).toEqual([]);
  });

  it('keeps what is loaded on first use in chunks of the bundle', () => {
    const conversationStream = named('Endpoint group conversation-stream');
    expect(carries(conversationStream.all, 'shared/speech/builtin.ts')).toBe(true);
    expect(carries(conversationStream.all, 'node_modules/@aws-sdk/client-sqs/')).toBe(true);
    const admin = named('Endpoint group admin');
    expect(carries(admin.all, 'shared/api/route-table.ts')).toBe(true);
    expect(carries(named('Endpoint group organization').all, 'shared/composition/entity-catalog.ts')).toBe(true);
    expect(carries(conversationStream.all, 'node_modules/@opentelemetry/sdk-trace-base/')).toBe(true);
    expect(carries(conversationStream.all, 'node_modules/@opentelemetry/instrumentation-aws-sdk/')).toBe(true);
  });
});

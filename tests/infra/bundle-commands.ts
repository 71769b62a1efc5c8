import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * What a Lambda bundle made by `infra/bundling.ts` asks of AWS: the SDK v3 commands its own code
 * constructs. A bundle holds many more command classes than it uses (a dynamically imported
 * client keeps all of them), so a command counts only where code outside `node_modules`
 * constructs it. Minified names are read back through each file's source map.
 */

/** One SDK command class, named by its package (`client-s3`, `lib-dynamodb`) and its name without `Command`. */
export interface SdkCommand {
  sdkPackage: string;
  name: string;
}

export interface BundleCommands {
  /** The bundle's files reached from `index.mjs` through static and dynamic imports. */
  files: string[];
  /** Every command class in those files. */
  contained: SdkCommand[];
  /** The commands the bundle's own code constructs. */
  constructed: SdkCommand[];
}

interface SourceMap {
  sources: string[];
  names: string[];
  mappings: string;
}

/** Where a generated position came from. */
interface Origin {
  source: string;
  name?: string;
}

const base64Digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

const decodeVlq = (segment: string): number[] => {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const character of segment) {
    const digit = base64Digits.indexOf(character);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    values.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return values;
};

/** Each generated line's mapped columns, in order, with where they came from. */
const originsByLine = (map: SourceMap): { column: number; origin: Origin }[][] => {
  // Fields 2 and 3 (original line and column) are not needed: only the source and name are.
  let source = 0;
  let name = 0;
  return map.mappings.split(';').map((line) => {
    let column = 0;
    return line
      .split(',')
      .filter((segment) => segment !== '')
      .flatMap((segment) => {
        const fields = decodeVlq(segment);
        column += fields[0] ?? 0;
        if (fields.length < 4) return [];
        source += fields[1] ?? 0;
        if (fields.length >= 5) name += fields[4] ?? 0;
        const origin: Origin = { source: map.sources[source] ?? '' };
        if (fields.length >= 5) origin.name = map.names[name];
        return [{ column, origin }];
      });
  });
};

/** The origin of the last mapping at or before a column. */
const originAt = (mapped: { column: number; origin: Origin }[], column: number): Origin | undefined =>
  mapped.findLast((entry) => entry.column <= column)?.origin;

const commandSource = /@aws-sdk\/((?:client|lib)-[\w-]+)\/dist-es\/commands\/(\w+)Command\.js$/;
const relativeImport = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)["'](\.{1,2}\/[^"']+\.mjs)["']/g;
const construction = /\bnew\s+([A-Za-z_$][\w$]*)(?:\.([A-Za-z_$][\w$]*))?\s*\(/dg;

/** What one generated file contains and constructs, by original names. */
const readFile = (path: string): { imports: string[]; contained: SdkCommand[]; constructedNames: string[] } => {
  const code = readFileSync(path, 'utf8');
  const map = JSON.parse(readFileSync(`${path}.map`, 'utf8')) as SourceMap;
  // Text that only looks like an import (a scaffold's source in a string) names no file of the bundle.
  const imports = [...code.matchAll(relativeImport)]
    .map((match) => join(dirname(path), match[1] as string))
    .filter((imported) => existsSync(imported));
  const contained = map.sources.flatMap((source) => {
    const match = commandSource.exec(source);
    return match ? [{ sdkPackage: match[1] as string, name: match[2] as string }] : [];
  });
  const lines = originsByLine(map);
  const constructedNames = code.split('\n').flatMap((line, index) =>
    [...line.matchAll(construction)].flatMap((match) => {
      const mapped = lines[index] ?? [];
      const site = originAt(mapped, match.index);
      if (!site || site.source.includes('node_modules/')) return [];
      // `new sdk.PutObjectCommand(...)` keeps the property; `new s(...)` has its original name in the map.
      const [, binding, property] = match;
      if (property) return [property];
      const bindingColumn = match.indices?.[1]?.[0];
      const named = mapped.find((entry) => entry.column === bindingColumn)?.origin.name;
      return [named ?? (binding as string)];
    }),
  );
  return { imports, contained, constructedNames };
};

/** The SDK commands of the bundle in `assetDirectory` (its `index.mjs` and the chunks that reaches). */
export const bundleCommands = (assetDirectory: string): BundleCommands => {
  const pending = [join(assetDirectory, 'index.mjs')];
  const seen = new Set<string>();
  const contained = new Map<string, SdkCommand>();
  const constructedNames = new Set<string>();
  for (let path = pending.pop(); path; path = pending.pop()) {
    if (seen.has(path)) continue;
    seen.add(path);
    const file = readFile(path);
    pending.push(...file.imports);
    for (const command of file.contained) contained.set(`${command.sdkPackage}/${command.name}`, command);
    for (const name of file.constructedNames) constructedNames.add(name);
  }
  const constructed = [...constructedNames].flatMap((name) => {
    // Aliased imports (`GetItemCommand as __GetItemCommand`) keep the name after the underscores.
    const commandName = /^_*(\w+)Command$/.exec(name)?.[1];
    // A name two packages declare (lib-dynamodb's QueryCommand wraps client-dynamodb's) counts for both.
    return [...contained.values()].filter((command) => command.name === commandName);
  });
  return {
    files: [...seen].map((path) => relative(assetDirectory, path)).sort(),
    contained: [...contained.values()],
    constructed,
  };
};

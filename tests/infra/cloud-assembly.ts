import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The cloud assembly `npm run synth` writes (which `npm test` runs first): templates and bundled assets. */
const repositoryRoot = new URL('../../', import.meta.url).pathname;
export const cloudAssembly = join(repositoryRoot, 'cdk.out');

export type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; Metadata?: Record<string, unknown> }
>;

/** What the assembly holds: every template (nested ones too) by file name. */
export const templates = (): Map<string, { Resources: Resources }> =>
  new Map(
    readdirSync(cloudAssembly)
      .filter((file) => file.endsWith('.template.json'))
      .map((file) => [file, JSON.parse(readFileSync(join(cloudAssembly, file), 'utf8'))]),
  );

/** Sources the assembly is built from: a newer one means `cdk.out` no longer shows what would deploy. */
const newestSource = (): { path: string; modified: number } => {
  const walk = (path: string): { path: string; modified: number }[] =>
    statSync(path).isDirectory()
      ? readdirSync(path).flatMap((entry) => (entry === 'node_modules' ? [] : walk(join(path, entry))))
      : /\.(ts|json)$/.test(path)
        ? [{ path, modified: statSync(path).mtimeMs }]
        : [];
  return ['shared', 'functions', 'events', 'infra', 'cdk.json', 'package-lock.json']
    .flatMap((entry) => walk(join(repositoryRoot, entry)))
    .reduce((newest, candidate) => (candidate.modified > newest.modified ? candidate : newest));
};

/** Why the assembly cannot be read as what would deploy (missing or older than a source), if it cannot. */
export const assemblyFreshness = (): string | undefined => {
  const manifest = join(cloudAssembly, 'manifest.json');
  let synthesized: number;
  try {
    synthesized = statSync(manifest).mtimeMs;
  } catch {
    return 'no cloud assembly: run `npm run synth` first';
  }
  const newest = newestSource();
  return newest.modified > synthesized
    ? `cdk.out is older than ${newest.path.slice(repositoryRoot.length)}: run \`npm run synth\` first`
    : undefined;
};

export const functionsOf = (template: { Resources: Resources }) =>
  Object.entries(template.Resources).filter(([, resource]) => resource.Type === 'AWS::Lambda::Function');

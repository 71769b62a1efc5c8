import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What a CloudFormation update of the platform's stacks must not lose, read from a cloud
 * assembly (`cdk.out`): the stateful resources with the properties whose change replaces them,
 * and the API Gateway paths and methods with the resource that holds each. A release keeps this
 * digest (`tests/infra/release-templates/`); `upgradeProblems` compares it with the next one.
 */

/** Resource types whose replacement or removal loses something: data, messages, secrets, logs, subscriptions, the base URL. */
const replacingProperties: Record<string, readonly string[]> = {
  'AWS::DynamoDB::Table': ['TableName', 'KeySchema', 'LocalSecondaryIndexes'],
  'AWS::S3::Bucket': ['BucketName', 'ObjectLockEnabled'],
  'AWS::SQS::Queue': ['QueueName', 'FifoQueue'],
  'AWS::SecretsManager::Secret': ['Name'],
  'AWS::Logs::LogGroup': ['LogGroupName', 'LogGroupClass'],
  'AWS::SNS::Topic': ['TopicName', 'FifoTopic'],
  // Its id is the regional base URL clients call.
  'AWS::ApiGateway::RestApi': [],
};

export interface StatefulResource {
  type: string;
  /** The properties whose change replaces the resource, as the template gives them (absent ones left out). */
  replacing: Record<string, unknown>;
  /** A table's global secondary indexes: by name, their key attributes and projection (`gsi1pk/gsi1sk KEYS_ONLY`). */
  indexes?: Record<string, string>;
}

export interface StackDigest {
  /** By `<stack>/<logical id>`: `<stack>` is empty for the regional stack, else the nested stack's logical id in it. */
  stateful: Record<string, StatefulResource>;
  /** By API path (`/v1/{organization}/agent`) or method (`GET /v1/...`): the `<stack>/<logical id>` that creates it. */
  api: Record<string, string>;
}

/** By regional stack name (`ClassicApi-eu-central-1`). */
export type AssemblyDigest = Record<string, StackDigest>;

interface TemplateResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}
interface Template {
  Resources: Record<string, TemplateResource>;
  Outputs?: Record<string, { Value: unknown }>;
}

interface IndexProperty {
  IndexName: string;
  KeySchema: { AttributeName: string }[];
  Projection?: { ProjectionType?: string };
}

/** What of a global secondary index CloudFormation cannot change in place: its keys and projection. */
export const indexDigest = (indexes: readonly IndexProperty[]): Record<string, string> =>
  Object.fromEntries(
    indexes.map((index) => [
      index.IndexName,
      `${index.KeySchema.map((key) => key.AttributeName).join('/')} ${index.Projection?.ProjectionType ?? 'ALL'}`,
    ]),
  );

const readTemplate = (dir: string, file: string): Template =>
  JSON.parse(readFileSync(join(dir, file), 'utf8')) as Template;

/** A template in its stack tree: where its parameters' values come from. */
interface PlacedTemplate {
  stackKey: string;
  template: Template;
  /** The parent's value for each parameter, resolved in the parent. */
  parameters: Record<string, unknown>;
  parent?: PlacedTemplate;
  /** Its nested stacks, by their resource id in it. */
  children: Map<string, PlacedTemplate>;
}

/** The nested stacks of a template with their templates' files (CDK's asset metadata). */
const nestedStacksOf = (placed: PlacedTemplate, dir: string): PlacedTemplate[] =>
  Object.entries(placed.template.Resources).flatMap(([id, resource]) => {
    if (resource.Type !== 'AWS::CloudFormation::Stack') return [];
    const file = resource.Metadata?.['aws:asset:path'];
    if (typeof file !== 'string') throw new Error(`nested stack ${id} names no template file`);
    const child: PlacedTemplate = {
      stackKey: id,
      template: readTemplate(dir, file),
      parameters: (resource.Properties?.Parameters ?? {}) as Record<string, unknown>,
      parent: placed,
      children: new Map(),
    };
    placed.children.set(id, child);
    return [child, ...nestedStacksOf(child, dir)];
  });

/** A value that names an API Gateway resource, followed up to where it is defined. */
type ResourceRef = { kind: 'root' } | { kind: 'resource'; placed: PlacedTemplate; id: string };

const resolveParent = (value: unknown, placed: PlacedTemplate): ResourceRef => {
  const { Ref: ref, 'Fn::GetAtt': getAtt } = (value ?? {}) as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (getAtt?.[1] === 'RootResourceId') return { kind: 'root' };
  if (typeof ref === 'string') {
    if (ref in placed.template.Resources) return { kind: 'resource', placed, id: ref };
    if (ref in placed.parameters && placed.parent) return resolveParent(placed.parameters[ref], placed.parent);
  }
  // A resource of a sibling nested stack, passed up through that stack's output.
  const output = getAtt?.[1]?.startsWith('Outputs.') ? getAtt[1].slice('Outputs.'.length) : undefined;
  const nested = getAtt ? placed.children.get(getAtt[0]) : undefined;
  if (output && nested?.template.Outputs?.[output]) return resolveParent(nested.template.Outputs[output].Value, nested);
  throw new Error(`cannot follow API resource reference ${JSON.stringify(value)} in stack '${placed.stackKey}'`);
};

/** Each API Gateway resource's path, worked out through its parents, across stacks. */
const pathOf = (ref: ResourceRef, known: Map<string, string>): string => {
  if (ref.kind === 'root') return '';
  const key = `${ref.placed.stackKey}/${ref.id}`;
  const found = known.get(key);
  if (found !== undefined) return found;
  const properties = ref.placed.template.Resources[ref.id]?.Properties ?? {};
  const path = `${pathOf(resolveParent(properties.ParentId, ref.placed), known)}/${String(properties.PathPart)}`;
  known.set(key, path);
  return path;
};

const stackDigest = (root: PlacedTemplate, dir: string): StackDigest => {
  const digest: StackDigest = { stateful: {}, api: {} };
  const paths = new Map<string, string>();
  for (const placed of [root, ...nestedStacksOf(root, dir)]) {
    for (const [id, resource] of Object.entries(placed.template.Resources)) {
      const key = `${placed.stackKey}/${id}`;
      const properties = resource.Properties ?? {};
      const replacing = replacingProperties[resource.Type];
      if (replacing) {
        digest.stateful[key] = {
          type: resource.Type,
          replacing: Object.fromEntries(
            replacing.flatMap((name) => (name in properties ? [[name, properties[name]]] : [])),
          ),
          ...(resource.Type === 'AWS::DynamoDB::Table'
            ? { indexes: indexDigest((properties.GlobalSecondaryIndexes ?? []) as IndexProperty[]) }
            : {}),
        };
      }
      if (resource.Type === 'AWS::ApiGateway::Resource') {
        digest.api[pathOf({ kind: 'resource', placed, id }, paths)] = key;
      }
      if (resource.Type === 'AWS::ApiGateway::Method') {
        const resourcePath = pathOf(resolveParent(properties.ResourceId, placed), paths) || '/';
        digest.api[`${String(properties.HttpMethod)} ${resourcePath}`] = key;
      }
    }
  }
  return digest;
};

/** The digest of every regional stack of a cloud assembly. */
export const assemblyDigest = (dir: string): AssemblyDigest => {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
  };
  const stacks = Object.entries(manifest.artifacts).flatMap(([name, artifact]) =>
    artifact.type === 'aws:cloudformation:stack' && artifact.properties?.templateFile
      ? [[name, artifact.properties.templateFile] as const]
      : [],
  );
  if (stacks.length === 0) throw new Error(`${dir} holds no stack`);
  return Object.fromEntries(
    stacks
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, file]) => [
        name,
        stackDigest({ stackKey: '', template: readTemplate(dir, file), parameters: {}, children: new Map() }, dir),
      ]),
  );
};

/** Whether a cloud assembly directory exists with a manifest. */
export const hasAssembly = (dir: string): boolean => {
  try {
    return readdirSync(dir).includes('manifest.json');
  } catch {
    return false;
  }
};

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * What updating `released` to `next` would lose or fail on:
 * - a stateful resource removed, moved to another stack or renamed (its logical id gone), or
 *   replaced (a property whose change requires replacement changed);
 * - an API path or method that the update would create while the released one still holds it
 *   (CloudFormation creates before it deletes, so API Gateway refuses the second with "Another
 *   resource with the same parent already has this name" and the update rolls back);
 * - a table's global secondary index changed in place (its keys or projection), or more than one
 *   created or deleted in one update: DynamoDB and CloudFormation refuse both, and the update
 *   rolls back (a digest without indexes, from before they were kept, is not checked).
 * A stack only `next` has is a new deployment and loses nothing.
 */
export const upgradeProblems = (released: AssemblyDigest, next: AssemblyDigest): string[] =>
  Object.entries(next).flatMap(([stack, digest]) => {
    const before = released[stack];
    if (!before) return [];
    const stateful = Object.entries(before.stateful).flatMap(([key, resource]) => {
      const now = digest.stateful[key];
      if (!now) return [`${stack}: ${resource.type} ${key} would be removed (or replaced under a new logical id)`];
      const replaced = Object.keys({ ...resource.replacing, ...now.replacing }).flatMap((property) =>
        same(resource.replacing[property], now.replacing[property])
          ? []
          : [`${stack}: ${resource.type} ${key} would be replaced: ${property} changes`],
      );
      return [...replaced, ...indexProblems(`${stack}: ${resource.type} ${key}`, resource.indexes, now.indexes)];
    });
    const api = Object.entries(digest.api).flatMap(([path, key]) => {
      const holder = before.api[path];
      return holder === undefined || holder === key
        ? []
        : [`${stack}: ${path} would be created twice: by ${key} while ${holder} still holds it`];
    });
    return [...stateful, ...api];
  });

const indexProblems = (
  where: string,
  before: Record<string, string> | undefined,
  now: Record<string, string> | undefined,
): string[] => {
  if (!before || !now) return [];
  const changed = Object.keys(now).filter((name) => name in before && before[name] !== now[name]);
  const created = Object.keys(now).filter((name) => !(name in before));
  const deleted = Object.keys(before).filter((name) => !(name in now));
  return [
    ...changed.map(
      (name) => `${where}: global secondary index ${name} would change in place (${before[name]} to ${now[name]})`,
    ),
    ...(created.length + deleted.length > 1
      ? [
          `${where}: ${created.length + deleted.length} global secondary indexes would be created or deleted in one update (one at most)`,
        ]
      : []),
  ];
};

/** What a release deploys in each region (every regional stack is the same), and which commit it was. */
export interface ReleaseSnapshot {
  release: string;
  stack: StackDigest;
}

export const releaseTemplatesDir = fileURLToPath(new URL('./release-templates/', import.meta.url));
/** The last release's digest, refreshed by `npm run release-snapshot`. */
export const releaseSnapshotPath = join(releaseTemplatesDir, 'last-release.json');

/** One entry a line, keys sorted, so a refreshed snapshot reads as a diff of what changed. */
export const snapshotText = (snapshot: ReleaseSnapshot): string => {
  const sorted = (record: Record<string, unknown>) =>
    Object.keys(record)
      .sort()
      .map((key) => `    ${JSON.stringify(key)}: ${JSON.stringify(record[key])}`)
      .join(',\n');
  return `{\n  "release": ${JSON.stringify(snapshot.release)},\n  "stack": {\n  "stateful": {\n${sorted(snapshot.stack.stateful)}\n  },\n  "api": {\n${sorted(snapshot.stack.api)}\n  }\n  }\n}\n`;
};

export const readSnapshot = (path: string): ReleaseSnapshot =>
  JSON.parse(readFileSync(path, 'utf8')) as ReleaseSnapshot;

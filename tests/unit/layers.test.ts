import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Dependencies point one way: kernel ← adapters ← capabilities ← composition, api, http ← functions, infra.
 * Each folder of `shared/` is placed in one layer; an import may only reach the same or a lower one.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

const kernel = 0;
const adapter = 1;
const capability = 2;
const composition = 3;
const layerOf = (folder: string): number => {
  if (folder === 'kernel') return kernel;
  if (['data', 'aws', 'llm', 'speech', 'auth', 'telemetry'].includes(folder)) return adapter;
  if (['composition', 'api', 'http'].includes(folder)) return composition;
  return capability;
};
const layerNames = ['kernel', 'adapter', 'capability', 'composition/api/http'];

/** Every relative import of the non-test sources under `shared/`, as `from` → `to` folders. */
const sharedImports = async (): Promise<{ file: string; from: string; to: string }[]> => {
  const files = (await readdir(join(root, 'shared'), { recursive: true })).filter(
    (name) => name.endsWith('.ts') && !name.endsWith('.test.ts'),
  );
  const imports = await Promise.all(
    files.map(async (file) => {
      const text = await readFile(join(root, 'shared', file), 'utf8');
      const from = file.split('/')[0] as string;
      return [...text.matchAll(/from '(\.[^']+)'/g)].flatMap((match) => {
        const target = normalize(join(dirname(file), match[1] as string));
        if (target.startsWith('..')) return []; // outside shared/ (events/): contracts every layer may read
        return [{ file: `shared/${file}`, from, to: target.split('/')[0] as string }];
      });
    }),
  );
  return imports.flat();
};

const capabilityOf = (path: string): string | undefined => {
  const [top, folder] = path.split('/');
  return top === 'shared' && folder !== undefined && layerOf(folder) === capability ? folder : undefined;
};

/** The non-test sources of shared/, functions/, infra/ and events/, as repository-relative paths. */
const sourceFiles = async (): Promise<string[]> =>
  (
    await Promise.all(
      ['shared', 'functions', 'infra', 'events'].map(async (folder) =>
        (await readdir(join(root, folder), { recursive: true })).map((name) => join(folder, name)),
      ),
    )
  )
    .flat()
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

/** The repository-relative path an import specifier of `file` names. */
const targetOf = (file: string, spec: string): string =>
  spec.startsWith('#shared/') ? join('shared', spec.slice('#shared/'.length)) : normalize(join(dirname(file), spec));

/**
 * Every import (static, re-export or dynamic) of the non-test sources of shared/, functions/,
 * infra/ and events/ that lands in shared/, as repository-relative paths without extension.
 */
const importsIntoShared = async (): Promise<{ file: string; target: string }[]> => {
  const files = await sourceFiles();
  const imports = await Promise.all(
    files.map(async (file) => {
      const text = await readFile(join(root, file), 'utf8');
      return [...text.matchAll(/(?:from|import)\s*\(?\s*'([.#][^']+)'/g)].flatMap((match) => {
        const target = targetOf(file, match[1] as string);
        return target.startsWith('shared/') ? [{ file, target: target.replace(/\.ts$/, '') }] : [];
      });
    }),
  );
  return imports.flat();
};

/** Each capability's entity handles: what its files declare with `defineEntity`, `defineVersionedEntity` or `defineRecordCount`. */
const entityHandles = async (): Promise<Map<string, Set<string>>> => {
  const handles = new Map<string, Set<string>>();
  for (const name of await readdir(join(root, 'shared'), { recursive: true })) {
    const file = join('shared', name);
    const capability = capabilityOf(file);
    if (!capability || !file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
    const text = await readFile(join(root, file), 'utf8');
    for (const match of text.matchAll(/export const (\w+) = define(?:(?:Versioned)?Entity|RecordCount)\b/g))
      handles.set(capability, (handles.get(capability) ?? new Set()).add(match[1] as string));
  }
  return handles;
};

/** The names each import (or re-export) of the non-test sources takes from a module of shared/. */
const namedImportsIntoShared = async (): Promise<{ file: string; target: string; names: string[] }[]> => {
  const files = await sourceFiles();
  const imports = await Promise.all(
    files.map(async (file) => {
      const text = await readFile(join(root, file), 'utf8');
      return [...text.matchAll(/(?:import|export)\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([.#][^']+)'/g)].flatMap(
        (match) => {
          const target = targetOf(file, match[2] as string);
          const names = (match[1] as string)
            .split(',')
            .map(
              (part) =>
                part
                  .trim()
                  .replace(/^type\s+/, '')
                  .split(/\s+as\s+/)[0] as string,
            )
            .filter(Boolean);
          return target.startsWith('shared/') ? [{ file, target, names }] : [];
        },
      );
    }),
  );
  return imports.flat();
};

/** The entity catalog lists every entity of the table, so it alone reads every capability's declarations. */
const entityCatalog = 'shared/composition/entity-catalog.ts';

/** Each capability's imports of other capabilities, as `from` → set of `to`. */
const capabilityGraph = async (): Promise<Map<string, Set<string>>> => {
  const graph = new Map<string, Set<string>>();
  for (const { file, target } of await importsIntoShared()) {
    const from = capabilityOf(file);
    const to = capabilityOf(target);
    if (from && to && from !== to) graph.set(from, (graph.get(from) ?? new Set()).add(to));
  }
  return graph;
};

/** A cycle of the graph, as a path that returns to its start, or undefined when there is none. */
const cycleOf = (graph: Map<string, Set<string>>): string[] | undefined => {
  const done = new Set<string>();
  const visit = (node: string, path: string[]): string[] | undefined => {
    if (path.includes(node)) return [...path.slice(path.indexOf(node)), node];
    if (done.has(node)) return undefined;
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next, [...path, node]);
      if (cycle) return cycle;
    }
    done.add(node);
    return undefined;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node, []);
    if (cycle) return cycle;
  }
  return undefined;
};

/**
 * The capabilities' layer chart of docs/conventions.md, in its order: each line's capability and
 * what it lists as its imports (`*`: any capability above it).
 */
const capabilityChart = async (): Promise<{ name: string; imports: string[] | '*' }[]> => {
  const conventions = await readFile(join(root, 'docs', 'conventions.md'), 'utf8');
  const block = /Each line lists what a capability imports[\s\S]*?```\n([\s\S]*?)```/.exec(conventions)?.[1] ?? '';
  return block.split('\n').flatMap((line) => {
    const match = /^([a-z-]+)\s+→ ?(\*|[a-z-]+(?:, [a-z-]+)*)?/.exec(line);
    if (!match) return [];
    const listed = match[2] ?? '';
    return [{ name: match[1] as string, imports: listed === '*' ? '*' : listed.split(', ').filter(Boolean).sort() }];
  });
};

/** Within each capability, which of its files (non-test sources, without extension) imports which of its others. */
const fileGraphsByCapability = async (): Promise<Map<string, Map<string, Set<string>>>> => {
  const graphs = new Map<string, Map<string, Set<string>>>();
  for (const { file, target } of await importsIntoShared()) {
    const capability = capabilityOf(file);
    if (!capability || capability !== capabilityOf(target)) continue;
    const graph = graphs.get(capability) ?? new Map<string, Set<string>>();
    const source = file.replace(/\.ts$/, '');
    graphs.set(capability, graph.set(source, (graph.get(source) ?? new Set()).add(target)));
  }
  return graphs;
};

/**
 * Adapters, one folder each, import the kernel and, in one direction only, these other adapters:
 * the table reaches DynamoDB through the AWS clients; authentication keeps its records (sessions,
 * rate-limit buckets) in the table; AWS clients, models and speech are traced through telemetry,
 * which stands alone.
 */
const adapterImports: Record<string, readonly string[]> = {
  telemetry: [],
  aws: ['telemetry'],
  data: ['aws'],
  llm: ['telemetry'],
  speech: ['telemetry'],
  auth: ['data'],
};

describe('layers', () => {
  it('imports only from the same or a lower layer of shared/', async () => {
    // Act
    const upward = (await sharedImports())
      .filter(({ from, to }) => layerOf(to) > layerOf(from))
      .map(
        ({ file, from, to }) =>
          `${file}: ${layerNames[layerOf(from)]} ${from} imports ${layerNames[layerOf(to)]} ${to}`,
      );

    // Assess
    expect(upward).toEqual([]);
  });

  it('lets each adapter import only the kernel and the adapters below it', async () => {
    // Act
    const crossing = (await sharedImports())
      .filter(({ from, to }) => from !== to && layerOf(from) === adapter && layerOf(to) === adapter)
      .filter(({ from, to }) => !adapterImports[from]?.includes(to))
      .map(({ file, from, to }) => `${file}: adapter ${from} imports adapter ${to}`);

    // Assess
    expect(Object.keys(adapterImports).sort()).toEqual(
      [...new Set((await sharedImports()).map(({ from }) => from))]
        .filter((folder) => layerOf(folder) === adapter)
        .sort(),
    );
    expect(crossing).toEqual([]);
  });

  it('keeps shared/ and events/ free of functions/ and infra/', async () => {
    // Prepare
    const files = [
      ...(await readdir(join(root, 'shared'), { recursive: true })).map((name) => join('shared', name)),
      ...(await readdir(join(root, 'events'), { recursive: true })).map((name) => join('events', name)),
    ].filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

    // Act
    const offending = [];
    for (const file of files) {
      const text = await readFile(join(root, file), 'utf8');
      if (/from '[^']*\/(functions|infra)\//.test(text)) offending.push(file);
    }

    // Assess
    expect(offending).toEqual([]);
  });

  it('loads the S3, SQS and X-Ray SDKs on first use only, so no cold start carries them', async () => {
    // Prepare
    const sources = async (folder: string) =>
      (await readdir(join(root, folder), { recursive: true }))
        .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
        .map((name) => join(folder, name));
    const files = [...(await sources('shared')), ...(await sources('functions'))];

    // Act
    const eager = [];
    for (const file of files) {
      const text = await readFile(join(root, file), 'utf8');
      // `import type` is erased; a value import is loaded with the module.
      for (const match of text.matchAll(
        /^import (?!type )[^;]*from '(@aws-sdk\/client-(s3|sqs)|@aws-lambda-powertools\/tracer[^']*)'/gm,
      ))
        eager.push(`${file}: ${match[1]}`);
    }

    // Assess
    expect(eager).toEqual([]);
  });

  it("lets only a capability's own files import its repositories; others use its index.ts or domain functions", async () => {
    // Act
    const reaching = (await importsIntoShared())
      .filter(({ target }) => target.endsWith('-repository') && capabilityOf(target) !== undefined)
      .filter(({ file, target }) => capabilityOf(file) !== capabilityOf(target) && file !== entityCatalog)
      .map(({ file, target }) => `${file} imports ${target}`);

    // Assess
    expect(reaching).toEqual([]);
  });

  it("lets only a capability's own files use its entity handles; others use its lookups and domain functions", async () => {
    // Prepare
    const handles = await entityHandles();

    // Act
    const reaching = (await namedImportsIntoShared())
      .filter(({ file, target }) => capabilityOf(file) !== capabilityOf(target) && file !== entityCatalog)
      .flatMap(({ file, target, names }) =>
        names
          .filter((name) => handles.get(capabilityOf(target) ?? '')?.has(name))
          .map((name) => `${file} uses ${capabilityOf(target)}'s entity ${name}`),
      );

    // Assess
    expect(reaching).toEqual([]);
  });

  it("keeps each capability's imports of others to what the layer chart of docs/conventions.md lists, all from lines above it", async () => {
    // Prepare
    const chart = await capabilityChart();
    const graph = await capabilityGraph();
    const capabilities = new Set(
      (await readdir(join(root, 'shared'), { withFileTypes: true }))
        .filter((entry) => entry.isDirectory() && layerOf(entry.name) === capability)
        .map((entry) => entry.name),
    );

    // Act
    const names = chart.map((line) => line.name);
    const offending = chart.flatMap((line, at) => {
      const imported = [...(graph.get(line.name) ?? [])].sort();
      const below = imported.filter((name) => !names.slice(0, at).includes(name));
      const listed = line.imports === '*' ? imported : line.imports;
      return [
        ...below.map((name) => `${line.name} imports ${name}, which is not on a line above it`),
        ...(JSON.stringify(listed) === JSON.stringify(imported)
          ? []
          : [`${line.name} imports ${imported.join(', ') || 'none'}; the chart lists ${listed.join(', ') || 'none'}`]),
      ];
    });

    // Assess
    expect([...names].sort()).toEqual([...capabilities].sort());
    expect(offending).toEqual([]);
  });

  it('keeps the voice engine in shared/voice: no voice file in shared/conversation', async () => {
    // Act
    const left = (await readdir(join(root, 'shared', 'conversation'), { recursive: true })).filter((name) =>
      /(^|\/)voice[^/]*$/.test(name),
    );

    // Assess
    expect(left).toEqual([]);
  });

  it('lets capabilities import each other in one direction only, with no cycle through several', async () => {
    // Act
    const cycle = cycleOf(await capabilityGraph());

    // Assess
    expect(cycle?.join(' → ')).toBeUndefined();
  });

  it('lets the files of one capability import each other in one direction only, with no cycle through several', async () => {
    // Act
    const graphs = await fileGraphsByCapability();
    const cycles = [...graphs].flatMap(([, graph]) => {
      const cycle = cycleOf(graph);
      return cycle ? [cycle.join(' → ')] : [];
    });

    // Assess
    expect(cycles).toEqual([]);
  });

  it('keeps DynamoDB expressions in repositories and shared/data', async () => {
    // Prepare
    const files = [
      ...(await readdir(join(root, 'shared'), { recursive: true })).map((name) => join('shared', name)),
      ...(await readdir(join(root, 'functions'), { recursive: true })).map((name) => join('functions', name)),
    ].filter(
      (name) =>
        name.endsWith('.ts') &&
        !name.endsWith('.test.ts') &&
        !name.endsWith('-repository.ts') &&
        !name.startsWith('shared/data/'),
    );

    // Act
    const writing = [];
    for (const file of files) {
      const text = await readFile(join(root, file), 'utf8');
      for (const match of text.matchAll(
        /\b(UpdateExpression|ConditionExpression|KeyConditionExpression|FilterExpression|ProjectionExpression)\s*:/g,
      ))
        writing.push(`${file}: ${match[1]}`);
    }

    // Assess
    expect(writing).toEqual([]);
  });

  it('sends no Scan and grants none: every list is a Query, and cost grows with the page', async () => {
    // Prepare
    // The operator's one-time step for a table older than the organization directory, which finds what no key names.
    const upgradeStep = 'infra/local/organization-directory-fill.ts';
    const files = (
      await Promise.all(
        ['shared', 'functions', 'infra', 'events'].map(async (folder) =>
          (await readdir(join(root, folder), { recursive: true })).map((name) => join(folder, name)),
        ),
      )
    )
      .flat()
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

    // Act
    const scanning = [];
    for (const file of files) {
      if (/\b(?:ScanCommand|paginateScan)\b|dynamodb:Scan\b/.test(await readFile(join(root, file), 'utf8')))
        scanning.push(file);
    }

    // Assess
    expect(files.length).toBeGreaterThan(100);
    expect(scanning).toEqual([upgradeStep]);
  });

  it('names the lease attributes in shared/data/lease.ts only: every hold goes through it', async () => {
    // Prepare
    const files = (
      await Promise.all(
        ['shared', 'functions', 'infra', 'events', 'tests'].map(async (folder) =>
          (await readdir(join(root, folder), { recursive: true })).map((name) => join(folder, name)),
        ),
      )
    )
      .flat()
      .filter((name) => name.endsWith('.ts') && !name.startsWith('shared/data/lease.'));

    // Act
    const naming = [];
    for (const file of files) {
      if (/\blease_(token|until_ms)\b/.test(await readFile(join(root, file), 'utf8'))) naming.push(file);
    }

    // Assess
    expect(naming).toEqual([]);
  });

  it('lets auth reach the table only through defineEntity', async () => {
    // Act
    const reaching = (await sharedImports())
      .filter(({ file, from, to }) => from === 'auth' && to === 'data' && !file.endsWith('-repository.ts'))
      .map(({ file }) => file);
    const beyondEntities = (await importsIntoShared())
      .filter(({ file, target }) => file.startsWith('shared/auth/') && target.startsWith('shared/data/'))
      .filter(({ target }) => target !== 'shared/data/entity')
      .map(({ file, target }) => `${file} imports ${target}`);

    // Assess
    expect(reaching).toEqual([]);
    expect(beyondEntities).toEqual([]);
  });
});

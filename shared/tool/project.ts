import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Ajv } from 'ajv';
import type { Message } from 'esbuild';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { loadPatternEngine } from '../kernel/caller-patterns';
import { BadRequestError } from '../kernel/errors';
import { loadOnce } from '../kernel/load-once';
import type { ProjectContents } from './source-repository';

/**
 * Building a tool project into the artifact a runtime runs:
 * - TypeScript/JavaScript (`package.json`): bundled with the platform's esbuild into one ES module;
 * - Python (`pyproject.toml`): the project's files, its dependencies installed with pip into
 *   `vendor/` when it declares any and a package index is reachable. Offline, a Python tool is
 *   limited to the standard library and code vendored in the project.
 * Either declares its `input_schema` and required variables in its project file.
 */
const run = promisify(execFile);

const declaration = z.object({
  entry: z.string().min(1).max(256).optional(),
  input_schema: z.record(z.string(), z.unknown()).default({ type: 'object' }),
  required_envvars: z.array(z.string().regex(/^[A-Z_]+$/)).default([]),
  required_secret_envvars: z.array(z.string().regex(/^[A-Z_]+$/)).default([]),
});

export type ToolLanguage = 'node' | 'python';

export interface BuiltProject {
  language: ToolLanguage;
  entry: string;
  input_schema: Record<string, unknown>;
  required_envvars: string[];
  required_secret_envvars: string[];
  /** gzip of {@link Artifact} as JSON. */
  artifact: Buffer;
}

/** What a runtime unpacks: the files to lay out and what to load. */
export interface Artifact {
  language: ToolLanguage;
  entry: string;
  files: Record<string, string>;
}

export const packArtifact = (artifact: Artifact): Buffer => gzipSync(JSON.stringify(artifact));
export const unpackArtifact = (packed: Buffer): Artifact => JSON.parse(gunzipSync(packed).toString('utf8')) as Artifact;

/** A build the project itself makes fail: answered 400 with the builder's words. */
export class BuildError extends BadRequestError {
  constructor(detail: string) {
    super(`The tool build failed: ${detail}`);
  }
}

// ajv (and esbuild below) are imported on first use: only tool builds and invocations need
// them, and the conversation and organization bundles reach this module without using them.
// ajv is CommonJS: a bundle's lazily imported chunk of it exports `default` only, not Node's named exports.
const loadSchemaChecker = loadOnce(() =>
  Promise.all([import('ajv'), loadPatternEngine()]).then(([{ default: Ajv }, compilePattern]) => {
    // The schema's `pattern` and `patternProperties` are the tool author's and the inputs the
    // caller's (or the model's): they run on the linear-time engine, not on JavaScript's RegExp.
    const regExp = Object.assign((pattern: string) => compilePattern(pattern), { code: 'callerPattern' });
    return new Ajv({ strict: false, allErrors: true, code: { regExp } });
  }),
);

type InputValidator = ReturnType<Ajv['compile']>;

/** Validators of the input schemas used lately, by the schema's JSON: each invocation would otherwise compile its own. */
const inputValidators = new Map<string, InputValidator>();
const maxInputValidators = 100;

/** A compiled validator of a tool's input schema; a schema that does not compile fails the build. */
export const inputValidator = async (schema: Record<string, unknown>): Promise<InputValidator> => {
  const key = JSON.stringify(schema);
  const known = inputValidators.get(key);
  if (known) return known;
  const checker = await loadSchemaChecker();
  let validate: InputValidator;
  try {
    validate = checker.compile(schema);
  } catch (error) {
    throw new BuildError(`input_schema is not a valid JSON Schema: ${(error as Error).message}`);
  } finally {
    // Ajv keeps every schema it compiled (and refuses a second with the same `$id`): the
    // validator lives on without them, and this module keeps its own bounded set.
    checker.removeSchema();
  }
  inputValidators.set(key, validate);
  if (inputValidators.size > maxInputValidators) inputValidators.delete(inputValidators.keys().next().value as string);
  return validate;
};

/** The last validation's errors, read at once: a validator is shared, and another call may run it meanwhile. */
export const describeInputErrors = (validate: InputValidator): Promise<string> => {
  const { errors } = validate;
  return loadSchemaChecker().then((checker) => checker.errorsText(errors, { dataVar: 'input_parameters' }));
};

const readDeclaration = async (value: unknown, where: string) => {
  const parsed = declaration.safeParse(value ?? {});
  if (!parsed.success) {
    throw new BuildError(
      `${where} is invalid: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  await inputValidator(parsed.data.input_schema);
  return parsed.data;
};

const layOut = async (files: ProjectContents): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'tool-build-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
};

const listFiles = async (root: string, dir = root): Promise<string[]> => {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory() ? listFiles(root, join(dir, entry.name)) : [relative(root, join(dir, entry.name))],
    ),
  );
  return nested.flat();
};

const esbuildMessages = (messages: Message[]): string =>
  messages
    .slice(0, 10)
    .map((message) => `${message.location ? `${message.location.file}:${message.location.line}: ` : ''}${message.text}`)
    .join('\n');

const buildNode = async (files: ProjectContents): Promise<BuiltProject> => {
  let manifest: { amigo?: unknown };
  try {
    manifest = JSON.parse(files['package.json']?.toString('utf8') ?? '{}') as { amigo?: unknown };
  } catch (error) {
    throw new BuildError(`package.json is not JSON: ${(error as Error).message}`);
  }
  const declared = await readDeclaration(manifest.amigo, 'package.json key "amigo"');
  const entry =
    declared.entry ?? ['src/index.ts', 'index.ts', 'src/index.js', 'index.js'].find((candidate) => files[candidate]);
  if (!entry || !files[entry]) throw new BuildError(`the entry module ${entry ?? 'src/index.ts'} does not exist.`);
  const dir = await layOut(files);
  try {
    const { build } = await import('esbuild');
    const result = await build({
      absWorkingDir: dir,
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outfile: 'tool.mjs',
      write: false,
      logLevel: 'silent',
    }).catch((error: { errors?: Message[]; message: string }) => {
      throw new BuildError(error.errors ? esbuildMessages(error.errors) : error.message);
    });
    const bundle = result.outputFiles[0];
    if (!bundle) throw new BuildError('esbuild produced no output.');
    return {
      language: 'node',
      entry: 'tool.mjs',
      input_schema: declared.input_schema,
      required_envvars: declared.required_envvars,
      required_secret_envvars: declared.required_secret_envvars,
      artifact: packArtifact({
        language: 'node',
        entry: 'tool.mjs',
        files: { 'tool.mjs': Buffer.from(bundle.contents).toString('base64') },
      }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

const pythonBinary = () => process.env.TOOL_PYTHON ?? 'python3';

const buildPython = async (files: ProjectContents): Promise<BuiltProject> => {
  let pyproject: { project?: { dependencies?: unknown }; tool?: { amigo?: Record<string, unknown> } };
  try {
    pyproject = parseToml(files['pyproject.toml']?.toString('utf8') ?? '') as typeof pyproject;
  } catch (error) {
    throw new BuildError(`pyproject.toml is not TOML: ${(error as Error).message}`);
  }
  const amigo = pyproject.tool?.amigo ?? {};
  let inputSchema = amigo.input_schema;
  if (typeof inputSchema === 'string') {
    try {
      inputSchema = JSON.parse(inputSchema);
    } catch (error) {
      throw new BuildError(`[tool.amigo] input_schema is not JSON: ${(error as Error).message}`);
    }
  }
  const declared = await readDeclaration({ ...amigo, input_schema: inputSchema }, 'pyproject.toml table [tool.amigo]');
  const entry = declared.entry ?? 'main:handler';
  if (!/^[\w.]+:\w+$/.test(entry))
    throw new BuildError(`[tool.amigo] entry must be "module:function", not "${entry}".`);
  const dependencies = z.array(z.string()).safeParse(pyproject.project?.dependencies ?? []);
  if (!dependencies.success) throw new BuildError('[project] dependencies must be a list of requirement strings.');
  const dir = await layOut(files);
  try {
    const sources = Object.keys(files).filter((path) => path.endsWith('.py'));
    try {
      await run(pythonBinary(), ['-m', 'py_compile', ...sources], { cwd: dir, timeout: 60_000 });
    } catch (error) {
      throw new BuildError(((error as { stderr?: string }).stderr ?? (error as Error).message).trim().slice(-2000));
    }
    if (dependencies.data.length > 0) {
      try {
        await run(
          pythonBinary(),
          [
            '-m',
            'pip',
            'install',
            '--quiet',
            '--no-input',
            '--disable-pip-version-check',
            '--timeout',
            '15',
            '--target',
            'vendor',
            ...dependencies.data,
          ],
          { cwd: dir, timeout: 240_000 },
        );
      } catch (error) {
        throw new BuildError(
          `pip could not install the dependencies (${dependencies.data.join(', ')}); where no package index is reachable, a Python tool may use only the standard library and code vendored under vendor/. ${((error as { stderr?: string }).stderr ?? '').trim().slice(-1000)}`,
        );
      }
    }
    const packed: Record<string, string> = {};
    for (const path of await listFiles(dir)) {
      if (path.includes('__pycache__')) continue;
      packed[path] = (await readFile(join(dir, path))).toString('base64');
    }
    return {
      language: 'python',
      entry,
      input_schema: declared.input_schema,
      required_envvars: declared.required_envvars,
      required_secret_envvars: declared.required_secret_envvars,
      artifact: packArtifact({ language: 'python', entry, files: packed }),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

/** Builds a project read from the repository; a project the builder cannot build is a {@link BuildError}. */
export const buildProject = (files: ProjectContents): Promise<BuiltProject> => {
  if (files['package.json']) return buildNode(files);
  if (files['pyproject.toml']) return buildPython(files);
  throw new BuildError('the project directory has neither package.json nor pyproject.toml.');
};

import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readObjectBytes } from '../aws/bucket';
import { type Artifact, unpackArtifact } from './project';
import {
  type DeployedVersion,
  type DeployRequest,
  maxCapturedChars,
  type SandboxOutcome,
  type SandboxRequest,
  sandboxLimits,
  type ToolRuntime,
} from './tool-runtime';

/**
 * The local runtime: each tool version is unpacked under `TOOL_RUNTIME_DIR` (the "deployment"),
 * and each run is a child process with a fresh temporary working directory, a wall-clock
 * timeout, a memory cap (`--max-old-space-size` for Node, `ulimit -v` for Python) and no
 * environment but the tool's own variables.
 */
const runtimeRoot = () => process.env.TOOL_RUNTIME_DIR ?? join(tmpdir(), 'tool-runtime');

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

const nodeRunner = `import { readFileSync, writeFileSync } from 'node:fs';
const [codeDir, resultFile] = process.argv.slice(1);
const request = JSON.parse(readFileSync(0, 'utf8'));
const failure = (error) => ({
  succeeded: false,
  exception_message: String(error?.message ?? error),
  exception_type: String(error?.name ?? typeof error),
  exception_stack_trace: String(error?.stack ?? '').split('\\n'),
});
let result;
try {
  const tool = await import(codeDir + '/' + request.entry);
  const handler = tool.handler ?? tool.default;
  if (typeof handler !== 'function') throw new TypeError('the tool module exports no handler function');
  const output = await handler(request.input_parameters, request.context);
  result = { succeeded: true, output: typeof output === 'string' ? output : JSON.stringify(output ?? null) };
} catch (error) {
  result = failure(error);
}
writeFileSync(resultFile, JSON.stringify(result));
`;

const pythonRunner = `import importlib, json, os, sys, traceback
code_dir, result_file = sys.argv[1], sys.argv[2]
request = json.load(sys.stdin)
sys.path[:0] = [code_dir, os.path.join(code_dir, "src"), os.path.join(code_dir, "vendor")]
try:
    module_name, function_name = request["entry"].split(":")
    handler = getattr(importlib.import_module(module_name), function_name)
    output = handler(request["input_parameters"], request["context"])
    result = {"succeeded": True, "output": output if isinstance(output, str) else json.dumps(output)}
except BaseException as error:
    result = {
        "succeeded": False,
        "exception_message": str(error),
        "exception_type": type(error).__name__,
        "exception_stack_trace": traceback.format_exception(error),
    }
with open(result_file, "w") as out:
    json.dump(result, out)
`;

const readArtifact = async (key: string): Promise<Artifact> => {
  return unpackArtifact(await readObjectBytes(key));
};

/** Unpacks the artifact to the version's directory (built beside it and renamed, so runs never see half of it). */
const install = async (directory: string, artifactKey: string): Promise<void> => {
  if (await exists(join(directory, 'artifact.json'))) return;
  const artifact = await readArtifact(artifactKey);
  await mkdir(dirname(directory), { recursive: true });
  const building = await mkdtemp(`${directory}.building-`);
  for (const [path, content] of Object.entries(artifact.files)) {
    await mkdir(dirname(join(building, 'code', path)), { recursive: true });
    await writeFile(join(building, 'code', path), Buffer.from(content, 'base64'));
  }
  await writeFile(
    join(building, 'artifact.json'),
    JSON.stringify({ language: artifact.language, entry: artifact.entry }),
  );
  await rename(building, directory).catch(async (error: NodeJS.ErrnoException) => {
    await rm(building, { recursive: true, force: true });
    if (!(await exists(join(directory, 'artifact.json')))) throw error;
  });
};

const tail = (text: string) => (text.length > maxCapturedChars ? text.slice(-maxCapturedChars) : text);

interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

const runChild = (
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; stdin: string; timeoutMs: number },
) =>
  new Promise<ChildOutcome>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const keep = (current: string, chunk: Buffer) => tail(current + chunk.toString('utf8'));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout = keep(stdout, chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = keep(stderr, chunk);
    });
    // The whole process group goes, so a tool cannot outlive its run through a child of its own.
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      resolve({ code, signal, timedOut, stdout, stderr });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin);
  });

const crashed = (outcome: ChildOutcome, limits: { timeoutMs: number; memoryMb: number }) => {
  if (outcome.timedOut) {
    return {
      type: 'TimeoutError',
      message: `The tool did not finish within ${limits.timeoutMs / 1000} s and was stopped.`,
    };
  }
  if (/heap out of memory|MemoryError|Cannot allocate memory|std::bad_alloc/i.test(outcome.stderr)) {
    return { type: 'MemoryError', message: `The tool exceeded its memory limit of ${limits.memoryMb} MB.` };
  }
  return {
    type: 'ToolCrashed',
    message: `The tool's process ended (${outcome.signal ?? `exit code ${outcome.code}`}) without a result.`,
  };
};

export const localSandbox: ToolRuntime = {
  deploy: async (request: DeployRequest): Promise<DeployedVersion> => {
    const directory = join(runtimeRoot(), request.orgId, request.toolId, request.version);
    await install(directory, request.artifactKey);
    return { runtime_ref: directory, lambda_version: 1 };
  },

  invoke: async (deployed, request: SandboxRequest): Promise<SandboxOutcome> => {
    // A cold start (a restarted platform or another machine) unpacks the artifact again.
    await install(deployed.runtime_ref, deployed.artifactKey);
    const { language, entry } = JSON.parse(await readFile(join(deployed.runtime_ref, 'artifact.json'), 'utf8')) as Pick<
      Artifact,
      'language' | 'entry'
    >;
    const limits = sandboxLimits();
    const workDir = await mkdtemp(join(tmpdir(), 'tool-run-'));
    const started = performance.now();
    try {
      const resultFile = join(workDir, '.result.json');
      const codeDir = join(deployed.runtime_ref, 'code');
      const stdin = JSON.stringify({
        entry,
        input_parameters: request.input_parameters,
        context: {
          nonsensitive_user_variables: request.nonsensitive_user_variables,
          sensitive_user_variables: request.sensitive_user_variables,
        },
      });
      const env = { ...request.env, HOME: workDir, TMPDIR: workDir };
      const outcome =
        language === 'node'
          ? await runChild(
              process.execPath,
              [
                `--max-old-space-size=${limits.memoryMb}`,
                '--input-type=module',
                '--eval',
                nodeRunner,
                codeDir,
                resultFile,
              ],
              { cwd: workDir, env, stdin, timeoutMs: limits.timeoutMs },
            )
          : await runChild(
              '/bin/sh',
              [
                '-c',
                `ulimit -v ${limits.memoryMb * 1024 * 4}; exec "$0" -I -c "$1" "$2" "$3"`,
                process.env.TOOL_PYTHON ?? '/usr/bin/python3',
                pythonRunner,
                codeDir,
                resultFile,
              ],
              { cwd: workDir, env, stdin, timeoutMs: limits.timeoutMs },
            );
      const duration_ms = Math.round(performance.now() - started);
      const written = await readFile(resultFile, 'utf8').catch(() => undefined);
      if (written !== undefined && !outcome.timedOut) {
        return {
          status: JSON.parse(written) as SandboxOutcome['status'],
          duration_ms,
          stdout: outcome.stdout,
          stderr: outcome.stderr,
        };
      }
      const failure = crashed(outcome, limits);
      return {
        status: {
          succeeded: false,
          exception_message: failure.message,
          exception_type: failure.type,
          exception_stack_trace: [],
        },
        duration_ms,
        stdout: outcome.stdout,
        stderr: outcome.stderr,
      };
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  },

  undeploy: async (_request, deployed) => {
    await rm(deployed.runtime_ref, { recursive: true, force: true });
  },

  eraseOrganization: async (orgId) => {
    await rm(join(runtimeRoot(), orgId), { recursive: true, force: true });
  },
};

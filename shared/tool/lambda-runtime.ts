import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import {
  CreateFunctionCommand,
  DeleteFunctionCommand,
  GetFunctionCommand,
  InvokeCommand,
  LambdaClient,
  UpdateFunctionCodeCommand,
  waitUntilFunctionActiveV2,
  waitUntilFunctionUpdatedV2,
} from '@aws-sdk/client-lambda';
import { readObjectBytes } from '../aws/bucket';
import { queryAll } from '../data/table';
import { config } from '../kernel/config';
import { type Artifact, unpackArtifact } from './project';
import { tools } from './tool-repository';
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
 * The AWS runtime: one Lambda function per tool (`TOOL_FUNCTION_PREFIX`-digest), one published
 * function version per tool version. Functions run as `TOOL_EXECUTION_ROLE_ARN`, a role with no
 * access to the platform's table, queues or bucket, with the sandbox's timeout and memory cap.
 * The tool's variables travel in each invocation's event and replace the process environment
 * before the tool runs, so a changed variable applies without redeploying.
 */
let client: LambdaClient | undefined;
const lambda = () => {
  client ??= new LambdaClient({ region: config.region });
  return client;
};

const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
};

/** Lambda names hold at most 64 characters: the tool is named by a digest of its organization and id. */
export const toolFunctionName = (orgId: string, toolId: string): string =>
  `${required('TOOL_FUNCTION_PREFIX')}-${createHash('sha256').update(`${orgId}/${toolId}`).digest('hex').slice(0, 32)}`;

const nodeHandler = `import * as tool from './tool.mjs';
export const handler = async (event) => {
  for (const name of Object.keys(process.env)) if (!name.startsWith('AWS_LAMBDA_') && name !== 'LAMBDA_TASK_ROOT') delete process.env[name];
  Object.assign(process.env, event.env);
  try {
    const output = await (tool.handler ?? tool.default)(event.input_parameters, event.context);
    return { succeeded: true, output: typeof output === 'string' ? output : JSON.stringify(output ?? null) };
  } catch (error) {
    return { succeeded: false, exception_message: String(error?.message ?? error), exception_type: String(error?.name ?? typeof error), exception_stack_trace: String(error?.stack ?? '').split('\\n') };
  }
};
`;

const pythonHandler = (entry: string) => `import importlib, json, os, sys, traceback
sys.path[:0] = [os.path.join(os.path.dirname(__file__), "src"), os.path.join(os.path.dirname(__file__), "vendor")]
def handler(event, _context):
    for name in [name for name in os.environ if not name.startswith("AWS_LAMBDA_") and name != "LAMBDA_TASK_ROOT"]:
        del os.environ[name]
    os.environ.update(event["env"])
    try:
        module_name, function_name = ${JSON.stringify(entry)}.split(":")
        output = getattr(importlib.import_module(module_name), function_name)(event["input_parameters"], event["context"])
        return {"succeeded": True, "output": output if isinstance(output, str) else json.dumps(output)}
    except BaseException as error:
        return {"succeeded": False, "exception_message": str(error), "exception_type": type(error).__name__, "exception_stack_trace": traceback.format_exception(error)}
`;

/** A zip of stored (uncompressed) entries, the deployment package format Lambda takes. */
export const zipFiles = (files: Record<string, Buffer>): Buffer => {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [path, content] of Object.entries(files)) {
    const name = Buffer.from(path, 'utf8');
    const checksum = crc32(content);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(checksum, 14);
    local.writeUInt32LE(content.length, 18);
    local.writeUInt32LE(content.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(0x031e, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(checksum, 16);
    central.writeUInt32LE(content.length, 20);
    central.writeUInt32LE(content.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, content);
    centrals.push(central, name);
    offset += local.length + name.length + content.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
};

/** The deployment package of an artifact: its files and the handler that runs them. */
export const deploymentPackage = (
  artifact: Artifact,
): { zip: Buffer; runtime: 'nodejs20.x' | 'python3.11'; handler: string } => {
  const files = Object.fromEntries(
    Object.entries(artifact.files).map(([path, content]) => [path, Buffer.from(content, 'base64')]),
  );
  if (artifact.language === 'node') {
    return {
      zip: zipFiles({ ...files, 'amigo_runner.mjs': Buffer.from(nodeHandler) }),
      runtime: 'nodejs20.x',
      handler: 'amigo_runner.handler',
    };
  }
  return {
    zip: zipFiles({ ...files, 'amigo_runner.py': Buffer.from(pythonHandler(artifact.entry)) }),
    runtime: 'python3.11',
    handler: 'amigo_runner.handler',
  };
};

const readArtifact = async (key: string): Promise<Artifact> => {
  return unpackArtifact(await readObjectBytes(key));
};

const exists = (name: string) =>
  lambda()
    .send(new GetFunctionCommand({ FunctionName: name }))
    .then(
      () => true,
      (error: { name?: string }) => {
        if (error.name === 'ResourceNotFoundException') return false;
        throw error;
      },
    );

/**
 * Runs a deployment step again when another deployment of the same function got there first
 * (two tests of one organization at once: a creation, or an update still in progress), once
 * that one has settled.
 */
const retryingConflicts = async <T>(name: string, step: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await step();
    } catch (error) {
      if ((error as { name?: string }).name !== 'ResourceConflictException' || attempt >= 5) throw error;
      await waitUntilFunctionUpdatedV2({ client: lambda(), maxWaitTime: 300 }, { FunctionName: name });
    }
  }
};

const ignoreMissing = (error: { name?: string }) => {
  if (error.name !== 'ResourceNotFoundException') throw error;
};

/** What a failed Lambda invocation means for the tool: out of time, out of memory, or a crash. */
const failureOf = (errorPayload: string, limits: { timeoutMs: number; memoryMb: number }) => {
  if (/timed out/i.test(errorPayload))
    return {
      type: 'TimeoutError',
      message: `The tool did not finish within ${limits.timeoutMs / 1000} s and was stopped.`,
    };
  if (/OutOfMemory|signal: killed|memory/i.test(errorPayload))
    return { type: 'MemoryError', message: `The tool exceeded its memory limit of ${limits.memoryMb} MB.` };
  return { type: 'ToolCrashed', message: 'The tool’s runtime ended without a result.' };
};

export const lambdaRuntime: ToolRuntime = {
  deploy: async (request: DeployRequest): Promise<DeployedVersion> => {
    const name = toolFunctionName(request.orgId, request.toolId);
    const { zip, runtime, handler } = deploymentPackage(await readArtifact(request.artifactKey));
    const limits = sandboxLimits();
    const published = await retryingConflicts(name, async () => {
      if (await exists(name)) {
        await waitUntilFunctionUpdatedV2({ client: lambda(), maxWaitTime: 300 }, { FunctionName: name });
        return lambda().send(new UpdateFunctionCodeCommand({ FunctionName: name, ZipFile: zip, Publish: true }));
      }
      return lambda().send(
        new CreateFunctionCommand({
          FunctionName: name,
          Runtime: runtime,
          Handler: handler,
          Role: required('TOOL_EXECUTION_ROLE_ARN'),
          Code: { ZipFile: zip },
          Timeout: Math.ceil(limits.timeoutMs / 1000),
          MemorySize: Math.max(128, limits.memoryMb),
          Publish: true,
          Tags: { 'classic-api:org': request.orgId, 'classic-api:tool': request.toolId },
        }),
      );
    });
    await waitUntilFunctionActiveV2(
      { client: lambda(), maxWaitTime: 300 },
      { FunctionName: published.FunctionArn ?? name },
    );
    return { runtime_ref: published.FunctionArn ?? name, lambda_version: Number(published.Version ?? 1) };
  },

  invoke: async (deployed, request: SandboxRequest): Promise<SandboxOutcome> => {
    const started = performance.now();
    const answer = await lambda().send(
      new InvokeCommand({
        FunctionName: deployed.runtime_ref,
        LogType: 'Tail',
        Payload: Buffer.from(
          JSON.stringify({
            input_parameters: request.input_parameters,
            context: {
              nonsensitive_user_variables: request.nonsensitive_user_variables,
              sensitive_user_variables: request.sensitive_user_variables,
            },
            env: request.env,
          }),
        ),
      }),
    );
    const duration_ms = Math.round(performance.now() - started);
    const logs = Buffer.from(answer.LogResult ?? '', 'base64')
      .toString('utf8')
      .slice(-maxCapturedChars);
    const payload = Buffer.from(answer.Payload ?? new Uint8Array()).toString('utf8');
    if (answer.FunctionError) {
      const failure = failureOf(payload, sandboxLimits());
      return {
        status: {
          succeeded: false,
          exception_message: failure.message,
          exception_type: failure.type,
          exception_stack_trace: [],
        },
        duration_ms,
        stdout: logs,
        stderr: '',
      };
    }
    return { status: JSON.parse(payload) as SandboxOutcome['status'], duration_ms, stdout: logs, stderr: '' };
  },

  undeploy: async (request, deployed) => {
    await lambda()
      .send(
        new DeleteFunctionCommand({
          FunctionName: toolFunctionName(request.orgId, request.toolId),
          Qualifier: String(deployed.lambda_version),
        }),
      )
      .catch(ignoreMissing);
  },

  eraseOrganization: async (orgId) => {
    const toolIds = [...(await queryAll(tools.query(orgId, {}))).map((item) => tools.parse(item).id), 'test'];
    for (const toolId of toolIds) {
      await lambda()
        .send(new DeleteFunctionCommand({ FunctionName: toolFunctionName(orgId, toolId) }))
        .catch(ignoreMissing);
    }
  },
};

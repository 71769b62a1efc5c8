import type { InvocationStatus } from './schemas';

/**
 * Where tool versions run. The builder deploys each built version through `deploy`; invocations
 * go through `invoke`. Implementations: the local sandbox (`local-sandbox.ts`, a child process
 * per run) and AWS Lambda (one function version per tool version, `lambda-runtime.ts`).
 */
export interface DeployedVersion {
  /** How `invoke` addresses the version (a path, or a Lambda version ARN). */
  runtime_ref: string;
  /** The reference's `lambda_version`: the function version number (1 locally). */
  lambda_version: number;
}

export interface DeployRequest {
  orgId: string;
  toolId: string;
  version: string;
  /** The artifact's key in the artifact bucket. */
  artifactKey: string;
}

export interface SandboxRequest {
  input_parameters: Record<string, unknown>;
  nonsensitive_user_variables: Record<string, string>;
  sensitive_user_variables: Record<string, string>;
  /** The tool's environment variables, secret ones opened: the only environment the tool gets. */
  env: Record<string, string>;
}

export interface SandboxOutcome {
  status: InvocationStatus;
  duration_ms: number;
  stdout: string;
  stderr: string;
}

export interface ToolRuntime {
  deploy(request: DeployRequest): Promise<DeployedVersion>;
  invoke(deployed: { runtime_ref: string; artifactKey: string }, request: SandboxRequest): Promise<SandboxOutcome>;
  /** Removes one deployed version (a test's, once run), leaving the tool's others. Idempotent. */
  undeploy(request: Pick<DeployRequest, 'orgId' | 'toolId'>, deployed: DeployedVersion): Promise<void>;
  /** Removes everything the runtime keeps for an organization (functions, unpacked code). */
  eraseOrganization(orgId: string): Promise<void>;
}

/** Limits of one run: wall-clock timeout and memory, from `TOOL_TIMEOUT_SECONDS` and `TOOL_MEMORY_MB`. */
export const sandboxLimits = () => ({
  timeoutMs: Number(process.env.TOOL_TIMEOUT_SECONDS ?? 30) * 1000,
  memoryMb: Number(process.env.TOOL_MEMORY_MB ?? 256),
});

/** What a run may keep of its output: enough to debug, bounded so a record stays small. */
export const maxCapturedChars = 4000;

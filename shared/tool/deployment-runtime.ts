import type { ToolRuntime } from './tool-runtime';

/**
 * The runtime of this deployment: `TOOL_RUNTIME=lambda` in AWS (each tool version a Lambda
 * function version, `lambda-runtime.ts`), the local sandbox otherwise.
 */
export const toolRuntime = async (): Promise<ToolRuntime> =>
  process.env.TOOL_RUNTIME === 'lambda'
    ? (await import('./lambda-runtime')).lambdaRuntime
    : (await import('./local-sandbox')).localSandbox;

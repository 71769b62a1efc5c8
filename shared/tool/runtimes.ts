import { localSandbox } from './local-sandbox';
import type { ToolRuntime } from './runtime';

/** The runtime of this deployment. */
export const toolRuntime = async (): Promise<ToolRuntime> => localSandbox;

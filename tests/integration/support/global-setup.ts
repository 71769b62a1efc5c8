import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPlatform } from '../../../infra/local/platform';
import type { Harness } from './client';

/** Starts the platform once per run, in memory, on free ports, for every integration test file. */
export default async function setup(project: TestProject) {
  const stateDir = await mkdtemp(join(tmpdir(), 'classic-api-test-'));
  const platform = await startPlatform({
    port: 0,
    stateDir,
    inMemory: true,
    rootOrgId: 'root',
    queueVisibilityTimeoutSeconds: 2,
    // The offline model writes at a pace, so tests can see pieces reach the client one by one.
    // Tools: short limits, so the sandbox tests reach them quickly.
    env: { DETERMINISTIC_FRAGMENT_DELAY_MS: '15', TOOL_TIMEOUT_SECONDS: '3', TOOL_MEMORY_MB: '96' },
    log: (line) => {
      if (process.env.PLATFORM_LOG) console.error(line);
    },
  });
  const harness: Harness = {
    baseUrl: platform.baseUrl,
    credentials: platform.credentials,
    outboxDir: platform.outboxDir,
    table: platform.table,
    toolRepositoryRoot: platform.toolRepositoryRoot,
    toolRuntimeDir: platform.toolRuntimeDir,
    artifacts: platform.artifacts,
  };
  project.provide('harness', harness);
  return async () => {
    await platform.stop();
    await rm(stateDir, { recursive: true, force: true });
  };
}

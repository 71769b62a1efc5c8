import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPlatform } from '../../../infra/local/platform';
import type { Harness } from './client';

/**
 * Starts the platform once per run, in memory, on free ports. The integration and browser
 * projects share it: their global setups run in one process, and the platform's functions
 * run in that process too, reading settings from its environment, so a second platform there
 * would take over the first's settings. The `integration-bundled` project starts it bundled (the
 * functions of cdk.out, as deployed), in a run of its own (`npm run test:bundled`).
 */
const bundledProject = 'integration-bundled';

const startHarness = async (bundled: boolean): Promise<{ harness: Harness; stop: () => Promise<void> }> => {
  const stateDir = await mkdtemp(join(tmpdir(), 'classic-api-test-'));
  const platform = await startPlatform({
    port: 0,
    stateDir,
    inMemory: true,
    rootOrgId: 'root',
    queueVisibilityTimeoutSeconds: 2,
    // The daily schedules run every few seconds, so a test sees an expiring API key announced.
    dailyScheduleSeconds: 3,
    bundled: bundled ? { context: {} } : undefined,
    // The offline model writes at a pace, so tests can see pieces reach the client one by one.
    // Short limits, so tests reach them quickly: the SQL query's 30 s (shortened so the timeout test
    // does not wait half a minute), webhook retries (about a second, then two) and the tool sandbox.
    env: {
      DETERMINISTIC_FRAGMENT_DELAY_MS: '15',
      SQL_QUERY_TIMEOUT_MS: '4000',
      WEBHOOK_RETRY_BASE_SECONDS: '1',
      // A user's turn under an operator waits 3 s for the reply instead of 20.
      OPERATOR_REPLY_WAIT_MS: '3000',
      TOOL_TIMEOUT_SECONDS: '3',
      TOOL_MEMORY_MB: '96',
    },
    log: (line) => {
      if (process.env.PLATFORM_LOG) console.error(line);
    },
  });
  const harness: Harness = {
    baseUrl: platform.baseUrl,
    credentials: platform.credentials,
    outboxDir: platform.outboxDir,
    table: platform.table,
    awsEnv: platform.awsEnv,
    bucket: platform.bucket,
    toolRepositoryRoot: platform.toolRepositoryRoot,
    toolRuntimeDir: platform.toolRuntimeDir,
  };
  return {
    harness,
    stop: async () => {
      await platform.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
};

const shared = globalThis as {
  classicApiTestPlatform?: ReturnType<typeof startHarness>;
  classicApiTestPlatformBundled?: boolean;
  classicApiTestUsers?: number;
};

export default async function setup(project: TestProject) {
  const bundled = project.name === bundledProject;
  if (shared.classicApiTestPlatform && shared.classicApiTestPlatformBundled !== bundled)
    throw new Error(
      `${bundledProject} runs on its own (npm run test:bundled): two platforms would share one environment`,
    );
  shared.classicApiTestPlatformBundled = bundled;
  shared.classicApiTestPlatform ??= startHarness(bundled);
  shared.classicApiTestUsers = (shared.classicApiTestUsers ?? 0) + 1;
  const { harness, stop } = await shared.classicApiTestPlatform;
  project.provide('harness', harness);
  return async () => {
    shared.classicApiTestUsers = (shared.classicApiTestUsers ?? 1) - 1;
    if (shared.classicApiTestUsers > 0) return;
    shared.classicApiTestPlatform = undefined;
    await stop();
  };
}

import type { TestProject } from 'vitest/node';
import type { Harness } from './client';
import { startTestPlatform } from './test-platform';

/**
 * Starts the platform once per run, in memory, on free ports. The integration and browser
 * projects share it: their global setups run in one process, and the platform's functions
 * run in that process too, reading settings from its environment, so a second platform there
 * would take over the first's settings. The `integration-bundled` project starts it bundled (the
 * functions of cdk.out, as deployed), in a run of its own (`npm run test:bundled`).
 */
const bundledProject = 'integration-bundled';

const startHarness = (bundled: boolean): Promise<{ harness: Harness; stop: () => Promise<void> }> =>
  startTestPlatform({ bundled: bundled ? { context: {} } : undefined });

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

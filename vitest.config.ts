import { defineConfig } from 'vitest/config';
import { requirePrerequisites } from './infra/local/prerequisites.ts';

/**
 * Two projects: unit tests (beside the code, plus infra assertions) and integration
 * tests that drive the HTTP surface of the platform, started once per run in memory on
 * free ports by the global setup.
 */
export default defineConfig(async () => {
  // DynamoDB Local, tools, voice, the browser and the zips need their system packages: without
  // one, stop in one line naming every missing part (npm's pretest has said so already).
  await requirePrerequisites('test');
  return {
    test: {
      reporters: ['default', './tests/support/summary-reporter.ts'],
      projects: [
        {
          test: {
            name: 'unit',
            // Tests provoke warnings on purpose; errors still print.
            env: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
            include: [
              'shared/**/*.test.ts',
              'functions/**/*.test.ts',
              'infra/**/*.test.ts',
              'events/**/*.test.ts',
              'tests/unit/**/*.test.ts',
              'tests/infra/**/*.test.ts',
            ],
            testTimeout: 60_000,
            hookTimeout: 120_000,
          },
        },
        {
          test: {
            name: 'integration',
            include: ['tests/integration/**/*.test.ts'],
            globalSetup: ['tests/integration/support/global-setup.ts'],
            testTimeout: 60_000,
            hookTimeout: 60_000,
          },
        },
        {
          test: {
            name: 'browser',
            include: ['tests/browser/**/*.test.ts'],
            globalSetup: ['tests/integration/support/global-setup.ts'],
            testTimeout: 90_000,
            hookTimeout: 90_000,
          },
        },
      ],
    },
  };
});

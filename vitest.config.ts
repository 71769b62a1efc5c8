import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { assertJava17 } from './infra/local/java.ts';
import { assertToolPrerequisites } from './infra/local/tool-prerequisites.ts';

/**
 * Two projects: unit tests (beside the code, plus infra assertions) and integration
 * tests that drive the HTTP surface of the platform, started once per run in memory on
 * free ports by the global setup.
 */
export default defineConfig(async () => {
  // Both projects start DynamoDB Local, and tool tests need git and python3: without them, stop with one clear line.
  await Promise.all([assertJava17(), assertToolPrerequisites()]).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
  // The web app's browser tests need Debian's Chromium (`.ci/run` installs it).
  const hasChromium = existsSync('/usr/bin/chromium');
  if (!hasChromium) console.warn('Browser tests skipped: /usr/bin/chromium is missing (apt-get install chromium).');
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
        ...(hasChromium
          ? [
              {
                test: {
                  name: 'browser',
                  include: ['tests/browser/**/*.test.ts'],
                  globalSetup: ['tests/integration/support/global-setup.ts'],
                  testTimeout: 90_000,
                  hookTimeout: 90_000,
                },
              },
            ]
          : []),
      ],
    },
  };
});

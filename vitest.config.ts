import { defineConfig } from 'vitest/config';
import { requirePrerequisites } from './infra/local/prerequisites.ts';

/**
 * The integration tests run again against the function bundles `cdk deploy` ships (the platform
 * started with `bundled`): a subset that reaches every endpoint group, queue worker, schedule and
 * streamed path at least once. It runs on its own (`npm run test:bundled`), as its platform would
 * share this process's environment with the other one.
 */
const bundledSubset = [
  // Every protected operation of every endpoint group, refused and served.
  'tests/integration/isolation/matrix.test.ts',
  // Streamed conversations, a tool built by the tool-build worker and called in a turn, the analysis,
  // webhook and simulation workers, and the release gate's CLI.
  'tests/integration/readme/walkthrough.test.ts',
  // The API key expiration schedule and the webhook worker's signed, retried deliveries.
  'tests/integration/webhook/webhooks.test.ts',
  // DuckDB's native binding, beside the admin bundle; the streamed prompt-log zip.
  'tests/integration/admin/sql-query.test.ts',
  'tests/integration/admin/prompt-logs.test.ts',
  // The simulation-stream group's sessions (turns, forks, a streamed step) and a backtest on the simulation worker.
  'tests/integration/simulation/session.test.ts',
  'tests/integration/simulation/backtest.test.ts',
  // The console's lake pages (app-analytics: DuckDB beside its bundle) and the charting library the
  // app's bundle carries inlined.
  'tests/integration/app/console-lake.test.ts',
];

/**
 * Projects: unit tests (beside the code, plus infra assertions), integration tests that drive
 * the HTTP surface of the platform, started once per run in memory on free ports by the global
 * setup, the browser tests of the web app, and the bundled subset.
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
            // Fault injection: each file starts platforms of its own, in its own process or as
            // `npm start` runs them (the crash test kills and restarts them), since it changes how
            // they behave: no shared platform.
            name: 'faults',
            include: ['tests/faults/**/*.test.ts'],
            env: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
            testTimeout: 300_000,
            hookTimeout: 180_000,
          },
        },
        {
          test: {
            name: 'integration-bundled',
            include: bundledSubset,
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

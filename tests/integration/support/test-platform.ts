import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Platform, type PlatformOptions, startPlatform } from '../../../infra/local/platform';
import { startTwilioRestStandIn } from '../../support/twilio-rest-stand-in';
import type { Harness } from './client';

/**
 * The platform as the tests run it: in memory, on free ports, with short limits so tests reach
 * them quickly. The integration projects start one per run (`global-setup.ts`); the fault tests
 * (`tests/faults/`) start one of their own in their test process, with their own `extra` options.
 */
export const startTestPlatform = async (
  extra: Partial<PlatformOptions> = {},
): Promise<{ harness: Harness; platform: Platform; stop: () => Promise<void> }> => {
  const stateDir = await mkdtemp(join(tmpdir(), 'classic-api-test-'));
  // Twilio's REST API, played from its documentation: outbound calls and transfers reach it.
  const twilio = await startTwilioRestStandIn();
  const platform = await startPlatform({
    port: 0,
    stateDir,
    inMemory: true,
    rootOrgId: 'root',
    queueVisibilityTimeoutSeconds: 2,
    // The daily schedules run every few seconds, so a test sees an expiring API key announced.
    dailyScheduleSeconds: 3,
    log: (line) => {
      if (process.env.PLATFORM_LOG) console.error(line);
    },
    ...extra,
    // The offline model writes at a pace, so tests can see pieces reach the client one by one.
    // Short limits, so tests reach them quickly: the SQL query's 30 s (shortened so the timeout test
    // does not wait half a minute), webhook retries (about a second, then two) and the tool sandbox.
    env: {
      DETERMINISTIC_FRAGMENT_DELAY_MS: '15',
      SQL_QUERY_TIMEOUT_MS: '4000',
      WEBHOOK_RETRY_BASE_SECONDS: '1',
      // A user's turn under an operator waits 3 s for the reply instead of 20.
      OPERATOR_REPLY_WAIT_MS: '3000',
      // Voice sessions: a user's and an organization's quota, reached in seconds; no test's session
      // idles out while it waits for others (tests/faults/voice-identity.test.ts checks the limit).
      VOICE_SESSION_IDLE_SECONDS: '300',
      VOICE_SESSIONS_PER_USER: '2',
      VOICE_SESSIONS_PER_ORGANIZATION: '4',
      TOOL_TIMEOUT_SECONDS: '3',
      TOOL_MEMORY_MB: '96',
      TWILIO_API_BASE_URL: twilio.url,
      // A Twilio that does not answer is given up on in 2 s, not 10.
      TWILIO_API_TIMEOUT_SECONDS: '2',
      // An organization's outbound calls at once, reached with a few.
      OUTBOUND_CALLS_AT_ONCE: '3',
      ...extra.env,
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
    lakeCacheDir: platform.lakeCacheDir,
    twilioApiUrl: twilio.url,
  };
  return {
    harness,
    platform,
    stop: async () => {
      await platform.stop();
      await twilio.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
};

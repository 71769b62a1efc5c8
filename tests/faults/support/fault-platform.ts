import type { PlatformOptions } from '../../../infra/local/platform';
import { useHarness } from '../../integration/support/client';
import { startTestPlatform } from '../../integration/support/test-platform';
import { DynamoFaults } from './dynamo-faults';

/**
 * A platform of the test file's own, in its own process: its functions run here, so the faults
 * put in front of its DynamoDB client (and the consumer wrappers given in `extra`) touch nothing
 * of the integration tests' platform. The support functions of tests/integration/support
 * (`api`, `rootSession`, ...) talk to it.
 */
export const startFaultPlatform = async (
  extra: Partial<PlatformOptions> = {},
): Promise<{ faults: DynamoFaults; stop: () => Promise<void> }> => {
  const faults = new DynamoFaults();
  const { harness, stop } = await startTestPlatform(extra);
  const { interposeDynamoRequestHandler } = await import('#shared/aws/clients');
  interposeDynamoRequestHandler((sdkHandler) => faults.inFrontOf(sdkHandler));
  useHarness(harness);
  // Printed so that a failing run can be repeated with FAULT_SEED.
  console.info(`DynamoDB faults seeded with FAULT_SEED=${faults.seed}`);
  return {
    faults,
    stop: async () => {
      useHarness(undefined);
      await stop();
    },
  };
};

import { afterAll, beforeAll, vi } from 'vitest';
import { type LocalAws, type LocalAwsOptions, startLocalAws } from '../../../infra/local/aws-stack';

/**
 * Runs DynamoDB Local, SQS and S3 for the test file and points the product's clients at them
 * (through the environment, as the platform does). Call at the top of a describe block; the
 * returned function gives the running stack.
 */
export const useLocalAws = (options: LocalAwsOptions = {}): (() => LocalAws) => {
  let aws: LocalAws | undefined;
  beforeAll(async () => {
    aws = await startLocalAws(options);
    for (const [name, value] of Object.entries(aws.env)) vi.stubEnv(name, value);
  }, 60_000);
  afterAll(async () => {
    vi.unstubAllEnvs();
    await aws?.stop();
  });
  return () => {
    if (!aws) throw new Error('the local AWS stack is not running yet');
    return aws;
  };
};

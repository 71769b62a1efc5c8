import type { App } from 'aws-cdk-lib';
import { readPlatformSettings } from './platform-settings';
import { PlatformStack } from './platform-stack';

/** One independent `ClassicApi-<region>` stack per region in the app's context. */
export const addRegionalStacks = (app: App): PlatformStack[] => {
  const { regions, ...settings } = readPlatformSettings(app.node);
  const account = process.env.CDK_DEFAULT_ACCOUNT;
  return regions.map(
    (region) =>
      new PlatformStack(app, `ClassicApi-${region}`, {
        env: account ? { account, region } : { region },
        description: `Conversational-agent platform, stage ${settings.stage}, region ${region}`,
        settings,
      }),
  );
};

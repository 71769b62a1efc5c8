/**
 * The environment the data layer reads (region, credentials, DynamoDB endpoint, table): what a
 * test or bench sets from a local platform's `awsEnv` to call domain functions against its table.
 */
export const dataLayerEnv = [
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'TABLE_NAME',
] as const;

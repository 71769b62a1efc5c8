import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { config } from '../kernel/config';
import { loadOnce } from '../kernel/load-once';
import { traced } from './observability';
import { countRoundTripsOf, countsRoundTrips } from './round-trips';

/**
 * AWS clients, created once per process and shared. Local runs point them at the
 * embedded servers through the SDK's own AWS_ENDPOINT_URL_<SERVICE> variables, so the
 * code path is the same as in AWS. In Lambda each call is traced as an X-Ray subsegment.
 */
let dynamoClient: DynamoDBClient | undefined;

/**
 * DynamoDB calls refused for throttling (or a 5xx) are tried up to this many times in all, as the
 * v2 SDK did for DynamoDB (10 retries): at 30% of calls throttled, one call in ~170,000 still
 * fails. The SDK's retry quota still stops retries while most calls fail, so a sustained
 * throttle answers fast instead of queueing retries.
 */
export const dynamoMaxAttempts = 10;

/**
 * The pause before retry `attempt` (from 1): "full jitter" exponential backoff from 50 ms, each
 * pause at most 1 s, so a call that never gets through gives up within ~6 s (~3 s on average),
 * well inside a buffered request's 29 s. The SDK's default for throttling starts at 1 s and
 * grows to 20 s, which would hold a request past API Gateway's limit.
 */
export const dynamoBackoffMs = (attempt: number): number =>
  Math.floor(Math.random() * Math.min(1000, 25 * 2 ** attempt));

type DynamoRequestHandler = DynamoDBClient['config']['requestHandler'];
let interposed: ((sdkHandler: DynamoRequestHandler) => DynamoRequestHandler) | undefined;

/**
 * For the fault tests only (`tests/faults/`, through the local platform): puts a request handler
 * in front of the SDK's HTTP handler of the DynamoDB client, which is made again. Nothing in the
 * product calls it; no setting or request reaches it.
 */
export const interposeDynamoRequestHandler = (wrap: (sdkHandler: DynamoRequestHandler) => DynamoRequestHandler) => {
  interposed = wrap;
  dynamoClient = undefined;
};

/** What is added to each AWS client when it is made (see {@link instrumentClients}). */
export interface ClientInstruments {
  dynamodb?(client: DynamoDBClient): void;
  s3?(client: S3Client): void;
  sqs?(client: SQSClient): void;
}

let instruments: ClientInstruments = {};

/**
 * For the local platform's diagnostics only: the cost bench's usage meter
 * (`shared/aws/usage-meter.ts`), which `infra/local/platform.ts` installs with
 * `DIAGNOSTIC_USAGE=true` before any client is made. Each client takes the instruments once,
 * when it is built. No function calls this, so no bundle carries the meter and a request pays
 * nothing for it.
 */
export const instrumentClients = (added: ClientInstruments): void => {
  instruments = added;
};

/**
 * The table's client. It resolves its middleware once per command type (`cacheMiddleware`), not
 * on every call: the data layer converts items itself (`shared/data/attribute-values.ts`), as
 * lib-dynamodb's document client, which adds middleware to each call, cannot.
 */
export const dynamo = (): DynamoDBClient => {
  if (!dynamoClient) {
    const client = traced(
      new DynamoDBClient({
        region: config.region,
        retryStrategy: new ConfiguredRetryStrategy(dynamoMaxAttempts, dynamoBackoffMs),
        cacheMiddleware: true,
      }),
    );
    if (interposed) client.config.requestHandler = interposed(client.config.requestHandler);
    if (countsRoundTrips()) countRoundTripsOf(client);
    instruments.dynamodb?.(client);
    dynamoClient = client;
  }
  return dynamoClient;
};

/** The SQS SDK, loaded on first use: only finishing a conversation, webhooks, tools and simulations queue work. */
export const sqsSdk = () => import('@aws-sdk/client-sqs');

export const sqs: () => Promise<SQSClient> = loadOnce(async () => {
  const { SQSClient } = await sqsSdk();
  const client = traced(new SQSClient({ region: config.region }));
  instruments.sqs?.(client);
  return client;
});

/**
 * The S3 SDK (~130 KiB minified), loaded on first use: most requests never touch the bucket,
 * so a cold start does not load it. Commands come from here too (`shared/aws/bucket.ts`).
 */
export const s3Sdk = () => import('@aws-sdk/client-s3');

export const s3: () => Promise<S3Client> = loadOnce(async () => {
  const { S3Client } = await s3Sdk();
  const client = traced(new S3Client({ region: config.region, forcePathStyle: config.s3ForcePathStyle }));
  instruments.s3?.(client);
  return client;
});

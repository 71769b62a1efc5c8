import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '../kernel/config';
import { traced } from './observability';
import { countRoundTripsOf, countsRoundTrips } from './round-trips';
import { meterDynamoDbUsage, meterRequests, metersUsage } from './usage-meter';

/**
 * AWS clients, created once per process and shared. Local runs point them at the
 * embedded servers through the SDK's own AWS_ENDPOINT_URL_<SERVICE> variables, so the
 * code path is the same as in AWS. In Lambda each call is traced as an X-Ray subsegment.
 */
let documentClient: DynamoDBDocumentClient | undefined;
let sqsClient: SQSClient | undefined;
let s3Client: S3Client | undefined;

export const dynamo = (): DynamoDBDocumentClient => {
  if (!documentClient) {
    const client = traced(new DynamoDBClient({ region: config.region }));
    if (countsRoundTrips()) countRoundTripsOf(client);
    if (metersUsage()) meterDynamoDbUsage(client);
    documentClient = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return documentClient;
};

/** The SQS SDK, loaded on first use: only finishing a conversation, webhooks, tools and simulations queue work. */
export const sqsSdk = () => import('@aws-sdk/client-sqs');

export const sqs = async (): Promise<SQSClient> => {
  if (!sqsClient) {
    const { SQSClient } = await sqsSdk();
    if (!sqsClient) {
      sqsClient = traced(new SQSClient({ region: config.region }));
      if (metersUsage()) meterRequests(sqsClient, 'sqs');
    }
  }
  return sqsClient;
};

/**
 * The S3 SDK (~130 KiB minified), loaded on first use: most requests never touch the bucket,
 * so a cold start does not load it. Commands come from here too (`shared/aws/bucket.ts`).
 */
export const s3Sdk = () => import('@aws-sdk/client-s3');

export const s3 = async (): Promise<S3Client> => {
  if (!s3Client) {
    const { S3Client } = await s3Sdk();
    if (!s3Client) {
      s3Client = traced(new S3Client({ region: config.region, forcePathStyle: config.s3ForcePathStyle }));
      if (metersUsage()) meterRequests(s3Client, 's3');
    }
  }
  return s3Client;
};

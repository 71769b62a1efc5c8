import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { countRoundTripsOf, countsRoundTrips } from '../data/round-trips';
import { config } from '../kernel/config';
import { traced } from './observability';

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
    documentClient = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return documentClient;
};

export const sqs = (): SQSClient => {
  sqsClient ??= traced(new SQSClient({ region: config.region }));
  return sqsClient;
};

export const s3 = (): S3Client => {
  s3Client ??= traced(new S3Client({ region: config.region, forcePathStyle: config.s3ForcePathStyle }));
  return s3Client;
};

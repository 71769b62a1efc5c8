import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { config } from '../kernel/config';
import { s3, s3Sdk } from './clients';
import { traced } from './observability';

/**
 * The analytics lake bucket (`LAKE_BUCKET`): Parquet files moved whole between it and local disk,
 * and markers. Reads take a client: the function's own, or one whose credentials reach only part
 * of the bucket (`scopedLakeClient`).
 */
export interface LakeObject {
  key: string;
  /** Changes whenever the object is rewritten: local copies are kept by key and ETag. */
  etag: string;
  size: number;
}

/** The objects under `prefix`, in key order, every page. */
export const listLakeObjects = async (prefix: string, client?: S3Client): Promise<LakeObject[]> => {
  const [reader, { ListObjectsV2Command }] = await Promise.all([client ?? s3(), s3Sdk()]);
  const listed: LakeObject[] = [];
  let token: string | undefined;
  do {
    const page = await reader.send(
      new ListObjectsV2Command({ Bucket: config.lakeBucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? [])
      if (object.Key) listed.push({ key: object.Key, etag: object.ETag ?? '', size: object.Size ?? 0 });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return listed;
};

/** Copies an object to a local file (streamed). A missing object throws `NoSuchKey`. */
export const downloadLakeObject = async (key: string, path: string, client?: S3Client): Promise<void> => {
  const [reader, { GetObjectCommand }] = await Promise.all([client ?? s3(), s3Sdk()]);
  const object = await reader.send(new GetObjectCommand({ Bucket: config.lakeBucket, Key: key }));
  if (!object.Body) throw new Error(`lake object ${key} has no body`);
  await pipeline(object.Body as Readable, createWriteStream(path));
};

export const uploadLakeFile = async (key: string, path: string): Promise<void> => {
  const [client, { PutObjectCommand }] = await Promise.all([s3(), s3Sdk()]);
  const { size } = await stat(path);
  await client.send(
    new PutObjectCommand({
      Bucket: config.lakeBucket,
      Key: key,
      Body: createReadStream(path),
      ContentLength: size,
      ContentType: 'application/vnd.apache.parquet',
    }),
  );
};

/** An empty object whose key is the information (e.g. the organization has changes to compact). */
export const putLakeMarker = async (key: string): Promise<void> => {
  const [client, { PutObjectCommand }] = await Promise.all([s3(), s3Sdk()]);
  await client.send(new PutObjectCommand({ Bucket: config.lakeBucket, Key: key, Body: '', ContentLength: 0 }));
};

export const deleteLakeObject = async (key: string): Promise<void> => {
  const [client, { DeleteObjectCommand }] = await Promise.all([s3(), s3Sdk()]);
  await client.send(new DeleteObjectCommand({ Bucket: config.lakeBucket, Key: key }));
};

export const isMissingObject = (error: unknown): boolean =>
  ['NoSuchKey', 'NotFound'].includes((error as { name?: string }).name ?? '');

/** A role assumed for one purpose: its session is tagged and limited by a session policy. */
export interface ScopedRole {
  roleArn: string;
  sessionName: string;
  tags: Record<string, string>;
  /** An IAM policy document: the session may do only what both it and the role allow. */
  policy: object;
}

const sessionSeconds = 3600;
/** Sessions are replaced this long before they expire, so no read starts on one about to end. */
const renewBeforeMs = 5 * 60_000;
/** One cached session per organization queried lately; the oldest goes first. */
const maxCachedSessions = 64;
const scopedClients = new Map<string, { client: S3Client; renewAt: number }>();
let stsClient: import('@aws-sdk/client-sts').STSClient | undefined;

/**
 * An S3 client acting as `role`, assumed with its tags and session policy (STS), reused until
 * shortly before the session expires. The STS SDK loads on first use.
 */
export const scopedLakeClient = async (role: ScopedRole): Promise<S3Client> => {
  const cacheKey = `${role.roleArn} ${role.sessionName}`;
  const cached = scopedClients.get(cacheKey);
  if (cached && cached.renewAt > Date.now()) return cached.client;
  const [{ STSClient, AssumeRoleCommand }, { S3Client }] = await Promise.all([import('@aws-sdk/client-sts'), s3Sdk()]);
  stsClient ??= traced(new STSClient({ region: config.region }));
  const { Credentials } = await stsClient.send(
    new AssumeRoleCommand({
      RoleArn: role.roleArn,
      RoleSessionName: role.sessionName,
      DurationSeconds: sessionSeconds,
      Tags: Object.entries(role.tags).map(([Key, Value]) => ({ Key, Value })),
      Policy: JSON.stringify(role.policy),
    }),
  );
  if (!Credentials?.AccessKeyId || !Credentials.SecretAccessKey || !Credentials.Expiration)
    throw new Error(`assuming ${role.roleArn} returned no credentials`);
  const client = traced(
    new S3Client({
      region: config.region,
      forcePathStyle: config.s3ForcePathStyle,
      credentials: {
        accessKeyId: Credentials.AccessKeyId,
        secretAccessKey: Credentials.SecretAccessKey,
        sessionToken: Credentials.SessionToken,
        expiration: Credentials.Expiration,
      },
    }),
  );
  scopedClients.delete(cacheKey);
  scopedClients.set(cacheKey, { client, renewAt: Credentials.Expiration.getTime() - renewBeforeMs });
  while (scopedClients.size > maxCachedSessions) {
    const oldest = scopedClients.keys().next().value as string;
    scopedClients.get(oldest)?.client.destroy();
    scopedClients.delete(oldest);
  }
  return client;
};

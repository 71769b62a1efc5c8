import type { Readable } from 'node:stream';
import { config } from '../kernel/config';
import { s3, s3Sdk } from './clients';

/**
 * The artifact bucket: every S3 call goes through here, so the S3 SDK and the presigner are
 * loaded on first use (see `s3Sdk`), never by a cold start.
 */

/** Objects of the artifact bucket under a prefix, as listed: key and last change. */
export interface StoredObject {
  key: string;
  lastModified: Date;
}

/**
 * Lists the objects under `prefix` a page at a time, in key order, stopping once `enough`
 * says so: a listing never reads more pages than its caller needs.
 */
export const listObjects = async (
  prefix: string,
  enough: (listed: StoredObject[]) => boolean,
): Promise<StoredObject[]> => {
  const [client, { ListObjectsV2Command }] = await Promise.all([s3(), s3Sdk()]);
  const listed: StoredObject[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: config.artifactBucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) {
      if (object.Key) listed.push({ key: object.Key, lastModified: object.LastModified ?? new Date(0) });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token && !enough(listed));
  return listed;
};

/** The object's bytes as a stream (never read whole). */
export const readObject = async (key: string): Promise<Readable> => {
  const [client, { GetObjectCommand }] = await Promise.all([s3(), s3Sdk()]);
  const object = await client.send(new GetObjectCommand({ Bucket: config.artifactBucket, Key: key }));
  if (!object.Body) throw new Error(`object ${key} has no body`);
  return object.Body as Readable;
};

/** The object's bytes, read whole (artifacts and manifests, which are small). */
export const readObjectBytes = async (key: string): Promise<Buffer> => {
  const [client, { GetObjectCommand }] = await Promise.all([s3(), s3Sdk()]);
  const object = await client.send(new GetObjectCommand({ Bucket: config.artifactBucket, Key: key }));
  if (!object.Body) throw new Error(`object ${key} has no body`);
  return Buffer.from(await object.Body.transformToByteArray());
};

/** Stores the object, with `tags` if given (what the bucket's lifecycle rules select by). */
export const writeObject = async (
  key: string,
  body: Buffer | string,
  contentType: string,
  tags?: Record<string, string>,
): Promise<void> => {
  const [client, { PutObjectCommand }] = await Promise.all([s3(), s3Sdk()]);
  await client.send(
    new PutObjectCommand({
      Bucket: config.artifactBucket,
      Key: key,
      Body: body,
      ContentType: contentType,
      ...(tags ? { Tagging: new URLSearchParams(tags).toString() } : {}),
    }),
  );
};

/** The stored object's content type, or undefined when there is no such object. */
export const contentTypeOf = async (key: string): Promise<string | undefined> => {
  const [client, { HeadObjectCommand }] = await Promise.all([s3(), s3Sdk()]);
  try {
    return (await client.send(new HeadObjectCommand({ Bucket: config.artifactBucket, Key: key }))).ContentType ?? '';
  } catch (error) {
    if ((error as { name?: string }).name === 'NotFound') return undefined;
    throw error;
  }
};

/** A presigned GET of the object, valid for `expiresInSeconds`. */
export const presignedReadUrl = async (key: string, expiresInSeconds: number): Promise<string> => {
  const [client, { GetObjectCommand }, { getSignedUrl }] = await Promise.all([
    s3(),
    s3Sdk(),
    import('@aws-sdk/s3-request-presigner'),
  ]);
  return getSignedUrl(client, new GetObjectCommand({ Bucket: config.artifactBucket, Key: key }), {
    expiresIn: expiresInSeconds,
  });
};

/** Deletes the objects named (at most 1,000); a missing one is no error. */
export const deleteObjectKeys = async (keys: readonly string[]): Promise<void> => {
  const [client, { DeleteObjectsCommand }] = await Promise.all([s3(), s3Sdk()]);
  await client.send(
    new DeleteObjectsCommand({
      Bucket: config.artifactBucket,
      Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
    }),
  );
};

/**
 * Deletes every object under `prefix`, a listing page (at most 1,000 keys) at a time; of the
 * artifact bucket unless another is named (the analytics lake).
 */
export const deleteObjects = async (prefix: string, bucket = config.artifactBucket): Promise<void> => {
  const [client, { DeleteObjectsCommand, ListObjectsV2Command }] = await Promise.all([s3(), s3Sdk()]);
  for (;;) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
    if (keys.length === 0) return;
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
  }
};

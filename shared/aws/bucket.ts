import type { Readable } from 'node:stream';
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { config } from '../kernel/config';
import { s3 } from './clients';

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
  const listed: StoredObject[] = [];
  let token: string | undefined;
  do {
    const page = await s3().send(
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
  const object = await s3().send(new GetObjectCommand({ Bucket: config.artifactBucket, Key: key }));
  if (!object.Body) throw new Error(`object ${key} has no body`);
  return object.Body as Readable;
};

/** Deletes every object under `prefix`, a listing page (at most 1,000 keys) at a time. */
export const deleteObjects = async (prefix: string): Promise<void> => {
  for (;;) {
    const page = await s3().send(new ListObjectsV2Command({ Bucket: config.artifactBucket, Prefix: prefix }));
    const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
    if (keys.length === 0) return;
    await s3().send(
      new DeleteObjectsCommand({ Bucket: config.artifactBucket, Delete: { Objects: keys, Quiet: true } }),
    );
  }
};

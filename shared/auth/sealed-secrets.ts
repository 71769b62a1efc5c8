import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { config } from '../kernel/config';
import { readOrCreateSecretFile } from './secret-file';

/**
 * Secrets the platform must use again later (webhook signing secrets), stored encrypted with
 * AES-256-GCM under one platform key. The record's identity is the additional authenticated
 * data, so a sealed value copied onto another record does not open.
 *
 * - AWS: the key derives from the random `seed` of the Secrets Manager secret named by
 *   `SEALING_KEY_SECRET_ARN` (the stack generates it; only functions granted it can read it).
 * - Local: the file `SEALING_KEY_FILE` under the platform's state directory, created 0600.
 */
const format = 'v1';

const deriveKey = (seed: string): Buffer => createHash('sha256').update(`classic-api/sealing-key/${seed}`).digest();

const loadKey = async (): Promise<Buffer> => {
  const secretArn = process.env.SEALING_KEY_SECRET_ARN;
  if (secretArn) {
    const client = new SecretsManagerClient({ region: config.region });
    const result = await client.send(new GetSecretValueCommand({ SecretId: secretArn }));
    const seed = (JSON.parse(result.SecretString ?? '{}') as { seed?: string }).seed;
    if (!seed) throw new Error('The sealing key secret has no seed.');
    return deriveKey(seed);
  }
  const file = process.env.SEALING_KEY_FILE;
  if (file) return deriveKey((await readOrCreateSecretFile(file, () => randomBytes(32).toString('base64url'))).trim());
  throw new Error('Neither SEALING_KEY_SECRET_ARN nor SEALING_KEY_FILE is set: no key to seal secrets with.');
};

let key: Promise<Buffer> | undefined;

/** The process's sealing key, loaded once; a failed load is retried by the next caller. */
const sealingKey = (): Promise<Buffer> => {
  key ??= loadKey().catch((error: unknown) => {
    key = undefined;
    throw error;
  });
  return key;
};

/** Encrypts `plaintext` for the record named by `context`. */
export const sealSecret = async (plaintext: string, context: string): Promise<string> => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await sealingKey(), iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [format, iv, cipher.getAuthTag(), sealed]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.');
};

/** Decrypts a value sealed for the same `context`; throws when it was altered or sealed for another. */
export const openSecret = async (sealed: string, context: string): Promise<string> => {
  const [version, iv, tag, data] = sealed.split('.');
  if (version !== format || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', await sealingKey(), Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
};

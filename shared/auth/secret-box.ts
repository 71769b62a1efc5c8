import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { rootKeySecret } from './signing-keys';

/**
 * Encryption of stored secrets (secret tool environment variables, sensitive user variables,
 * webhook signing secrets): AES-256-GCM with a key derived (HKDF) from the deployment's
 * signing-key secret, which lives in Secrets Manager in AWS and in the state directory locally.
 * Each value is bound to a context (additional authenticated data: its organization, or the
 * record it belongs to), so a value copied to another tenant or record does not open.
 * Sealed values look like `sealed:v1:<base64 iv|tag|ciphertext>`.
 */
const prefix = 'sealed:v1:';

let key: Promise<Buffer> | undefined;

const boxKey = (): Promise<Buffer> => {
  key ??= rootKeySecret()
    .then((secret) => Buffer.from(hkdfSync('sha256', secret, 'classic-api', 'secret-box/aes-256-gcm/v1', 32)))
    .catch((error: unknown) => {
      key = undefined;
      throw error;
    });
  return key;
};

export const sealSecret = async (context: string, plaintext: string): Promise<string> => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await boxKey(), iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${prefix}${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')}`;
};

/** Decrypts a value sealed for the same `context`; throws when it was altered or sealed for another. */
export const openSecret = async (context: string, sealed: string): Promise<string> => {
  if (!sealed.startsWith(prefix)) throw new Error('not a sealed secret');
  const packed = Buffer.from(sealed.slice(prefix.length), 'base64');
  const decipher = createDecipheriv('aes-256-gcm', await boxKey(), packed.subarray(0, 12));
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(packed.subarray(12, 28));
  return Buffer.concat([decipher.update(packed.subarray(28)), decipher.final()]).toString('utf8');
};

/** Seals every value of a map of names to secrets. */
export const sealSecrets = async (orgId: string, values: Record<string, string>): Promise<Record<string, string>> =>
  Object.fromEntries(
    await Promise.all(Object.entries(values).map(async ([name, value]) => [name, await sealSecret(orgId, value)])),
  );

/** Opens every value of a map sealed by {@link sealSecrets}. */
export const openSecrets = async (orgId: string, values: Record<string, string>): Promise<Record<string, string>> =>
  Object.fromEntries(
    await Promise.all(Object.entries(values).map(async ([name, value]) => [name, await openSecret(orgId, value)])),
  );

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * High-entropy secrets handed to clients once (API keys, refresh tokens). 256 random bits,
 * so an unsalted SHA-256 is enough to store them: there is nothing to brute-force.
 */
export const newSecret = (): string => randomBytes(32).toString('base64url');

export const hashSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('base64url');

/** Constant-time comparison of a presented secret with a stored hash. */
export const secretMatches = (secret: string, storedHash: string): boolean => {
  const presented = Buffer.from(hashSecret(secret));
  const stored = Buffer.from(storedHash);
  return presented.length === stored.length && timingSafeEqual(presented, stored);
};

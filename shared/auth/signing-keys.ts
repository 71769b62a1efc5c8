import { createECDH, createHmac, randomBytes } from 'node:crypto';
import { base64url, type CryptoKey, calculateJwkThumbprint, importJWK, type JWK } from 'jose';
import { config } from '../kernel/config';
import { readOrCreateSecretFile } from './secret-file';

/**
 * The ES256 key pair that signs every token the platform issues.
 *
 * - AWS: the Secrets Manager secret named by `SIGNING_KEY_SECRET_ARN` holds JSON. When it
 *   holds `private_jwk` (a P-256 JWK with `d`), that is the key; otherwise the private key
 *   is derived from the secret's random `seed` (which the stack generates), so every
 *   instance agrees on the key without writing the secret. `previous_public_jwks` (optional)
 *   keeps old public keys in the JWKS and accepted for verification after a rotation.
 * - Local: the JSON file `SIGNING_KEY_FILE`, created with mode 0600 by the first process
 *   that needs it (an atomic link, so concurrent first users agree).
 */
export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

interface KeyMaterial {
  private_jwk?: JWK;
  seed?: string;
  previous_public_jwks?: JWK[];
}

export interface KeyRing {
  current: SigningKey;
  /** Public keys accepted for verification, the current one first. */
  verification: { kid: string; jwk: JWK }[];
}

/** Order of the P-256 group; a derived scalar must lie in [1, n). */
const p256Order = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

const publicPart = (jwk: JWK): JWK => ({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y });

/** A P-256 private JWK derived deterministically from a secret seed. */
export const deriveP256Jwk = (seed: string): JWK => {
  for (let counter = 0; ; counter += 1) {
    const scalar = createHmac('sha256', seed).update(`classic-api/jwt-signing-key/es256/${counter}`).digest();
    const value = BigInt(`0x${scalar.toString('hex')}`);
    if (value === 0n || value >= p256Order) continue;
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(scalar);
    const point = ecdh.getPublicKey();
    return {
      kty: 'EC',
      crv: 'P-256',
      x: base64url.encode(point.subarray(1, 33)),
      y: base64url.encode(point.subarray(33, 65)),
      d: base64url.encode(scalar),
    };
  }
};

const freshMaterial = (): KeyMaterial => ({ private_jwk: deriveP256Jwk(randomBytes(32).toString('base64url')) });

const readFileMaterial = async (path: string): Promise<KeyMaterial> =>
  JSON.parse(await readOrCreateSecretFile(path, () => JSON.stringify(freshMaterial()))) as KeyMaterial;

/** Read once per process (the ring is kept), and only in AWS: the SDK is imported here, not at cold start. */
const readSecretMaterial = async (secretId: string): Promise<KeyMaterial> => {
  const { GetSecretValueCommand, SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({ region: config.region });
  const result = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
  return JSON.parse(result.SecretString ?? '{}') as KeyMaterial;
};

const loadMaterial = async (): Promise<KeyMaterial> => {
  const secretArn = process.env.SIGNING_KEY_SECRET_ARN;
  if (secretArn) return readSecretMaterial(secretArn);
  const file = process.env.SIGNING_KEY_FILE;
  if (file) return readFileMaterial(file);
  throw new Error('Neither SIGNING_KEY_SECRET_ARN nor SIGNING_KEY_FILE is set: no key to sign tokens with.');
};

const buildRing = async (material: KeyMaterial): Promise<KeyRing> => {
  const privateJwk = material.private_jwk ?? (material.seed ? deriveP256Jwk(material.seed) : undefined);
  if (!privateJwk) throw new Error('The signing key material has neither private_jwk nor seed.');
  const publicJwk = publicPart(privateJwk);
  const kid = await calculateJwkThumbprint(publicJwk);
  const current: SigningKey = {
    kid,
    privateKey: (await importJWK({ ...privateJwk, alg: 'ES256' }, 'ES256')) as CryptoKey,
    publicJwk: { ...publicJwk, kid, alg: 'ES256', use: 'sig' },
  };
  const previous = await Promise.all(
    (material.previous_public_jwks ?? []).map(async (jwk) => {
      const publicOnly = publicPart(jwk);
      const previousKid = await calculateJwkThumbprint(publicOnly);
      return { kid: previousKid, jwk: { ...publicOnly, kid: previousKid, alg: 'ES256', use: 'sig' } };
    }),
  );
  return { current, verification: [{ kid, jwk: current.publicJwk }, ...previous] };
};

/**
 * The secret behind the signing key (its seed, or the private scalar), from which other keys
 * of the deployment are derived (`secret-box.ts`), so they need no secret of their own.
 */
export const rootKeySecret = async (): Promise<string> => {
  const material = await loadMaterial();
  const secret = material.seed ?? material.private_jwk?.d;
  if (!secret) throw new Error('The signing key material has neither private_jwk nor seed.');
  return secret;
};

let ring: Promise<KeyRing> | undefined;

/** The process's key ring, loaded once. A failed load is retried by the next caller. */
export const keyRing = (): Promise<KeyRing> => {
  ring ??= loadMaterial()
    .then(buildRing)
    .catch((error: unknown) => {
      ring = undefined;
      throw error;
    });
  return ring;
};

/** The public keys as a JSON Web Key Set (RFC 7517). */
export const publicJwks = async (): Promise<{ keys: JWK[] }> => ({
  keys: (await keyRing()).verification.map((entry) => entry.jwk),
});

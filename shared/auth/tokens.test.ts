import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importJWK, jwtVerify } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../kernel/errors';
import { allowedClockSkewMs } from '../kernel/ids';
import { deriveP256Jwk, keyRing, publicJwks } from './signing-keys';
import { issueAccessToken, signToken, verifyAccessToken, verifyToken } from './tokens';

let keyFile: string;

beforeAll(async () => {
  keyFile = join(await mkdtemp(join(tmpdir(), 'tokens-test-')), 'nested', 'signing-key.json');
  process.env.SIGNING_KEY_FILE = keyFile;
  delete process.env.SIGNING_KEY_SECRET_ARN;
});

describe('signing keys', () => {
  it('creates the local key file with mode 0600 on first use', async () => {
    // Act
    const ring = await keyRing();

    // Assess
    const file = await stat(keyFile);
    expect(file.mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(keyFile, 'utf8')).private_jwk.d).toBeTypeOf('string');
    expect(ring.current.publicJwk).not.toHaveProperty('d');
  });

  it('derives the same valid P-256 key from the same seed', async () => {
    // Act
    const first = deriveP256Jwk('seed-value');
    const second = deriveP256Jwk('seed-value');

    // Assess
    expect(first).toEqual(second);
    expect(deriveP256Jwk('other seed').d).not.toBe(first.d);
    await expect(importJWK({ ...first, alg: 'ES256' }, 'ES256')).resolves.toBeDefined();
  });

  it('publishes the public key as a JWKS that verifies issued tokens', async () => {
    // Prepare
    const { token } = await issueAccessToken({ orgId: 'acme', userId: 'a'.repeat(24) });

    // Act
    const { keys } = await publicJwks();
    const [jwk] = keys;

    // Assess
    expect(keys).toHaveLength(1);
    const { payload } = await jwtVerify(token, await importJWK(jwk as never, 'ES256'));
    expect(payload.org_id).toBe('acme');
  });
});

describe('tokens', () => {
  it('issues one-hour access tokens that verify', async () => {
    // Act
    const issued = await issueAccessToken({ orgId: 'acme', userId: 'b'.repeat(24), jkt: 'thumb' });
    const verified = await verifyAccessToken(issued.token);

    // Assess
    expect(issued.expiresIn).toBe(3600);
    expect(verified).toMatchObject({ orgId: 'acme', userId: 'b'.repeat(24), jkt: 'thumb' });
  });

  it('rejects an expired token with 401', async () => {
    const { token } = await issueAccessToken({ orgId: 'acme', userId: 'c'.repeat(24), now: Date.now() - 2 * 3600_000 });
    await expect(verifyAccessToken(token)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('rejects a tampered token with 401', async () => {
    const { token } = await issueAccessToken({ orgId: 'acme', userId: 'd'.repeat(24) });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), org_id: 'other' }),
    ).toString('base64url');
    await expect(verifyAccessToken(`${header}.${forged}.${signature}`)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(verifyAccessToken('not.a.jwt')).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('rejects a token issued a day ahead with 401, and accepts one issued within the allowed clock skew', async () => {
    // Prepare
    const dayAhead = await issueAccessToken({ orgId: 'acme', userId: 'a2'.repeat(12), now: Date.now() + 86_400_000 });
    const link = await signToken({
      purpose: 'email-sign-in',
      orgId: 'acme',
      subject: 'a3'.repeat(12),
      lifetimeSeconds: 900,
      now: Date.now() + 60_000,
    });
    const slightlyAhead = await issueAccessToken({
      orgId: 'acme',
      userId: 'a4'.repeat(12),
      now: Date.now() + allowedClockSkewMs / 2,
    });

    // Act / Assess
    await expect(verifyAccessToken(dayAhead.token)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(verifyToken(link.token, 'email-sign-in')).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(verifyAccessToken(slightlyAhead.token)).resolves.toMatchObject({ userId: 'a4'.repeat(12) });
  });

  it('refuses a token made for another purpose', async () => {
    const { token } = await signToken({
      purpose: 'verify-email',
      orgId: 'acme',
      subject: 'e'.repeat(24),
      lifetimeSeconds: 60,
    });
    await expect(verifyAccessToken(token)).rejects.toBeInstanceOf(UnauthorizedError);
    await expect(verifyToken(token, 'verify-email')).resolves.toMatchObject({ orgId: 'acme' });
  });

  it('refuses a token of another issuer', async () => {
    const { token } = await issueAccessToken({ orgId: 'acme', userId: 'f'.repeat(24) });
    process.env.JWT_ISSUER = 'someone-else';
    try {
      await expect(verifyAccessToken(token)).rejects.toBeInstanceOf(UnauthorizedError);
    } finally {
      delete process.env.JWT_ISSUER;
    }
  });

  it('keeps a verified access token only until it expires', async () => {
    // Prepare
    const issuedAt = Date.now();
    const { token, expiresAt } = await issueAccessToken({ orgId: 'acme', userId: 'a1'.repeat(12), now: issuedAt });
    await verifyAccessToken(token, issuedAt);

    // Act
    const again = await verifyAccessToken(token, issuedAt + 1000);
    const afterExpiry = verifyAccessToken(token, expiresAt.getTime() + 1000);

    // Assess
    expect(again).toMatchObject({ orgId: 'acme', userId: 'a1'.repeat(12) });
    await expect(afterExpiry).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

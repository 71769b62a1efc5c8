import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { UnauthorizedError } from '../kernel/errors';
import { accessTokenHash, verifyDpopProof } from './dpop';

const seen = new Set<string>();
vi.mock('./auth-session-repository', () => ({
  consumeNonce: async (orgId: string, scope: string, value: string) => {
    const key = `${orgId}|${scope}|${value}`;
    if (seen.has(key)) throw new UnauthorizedError();
    seen.add(key);
  },
}));

const url = 'https://api.example.com/v1/acme/user/';

const proofOf = async (
  options: { alg?: 'ES256' | 'ES384' | 'ES512'; claims?: Record<string, unknown>; typ?: string; iat?: number } = {},
) => {
  const alg = options.alg ?? 'ES256';
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const proof = await new SignJWT({ htm: 'GET', htu: url, jti: crypto.randomUUID(), ...options.claims })
    .setProtectedHeader({ alg, typ: options.typ ?? 'dpop+jwt', jwk })
    .setIssuedAt(options.iat ?? Math.floor(Date.now() / 1000))
    .sign(privateKey);
  return { proof, jkt: await calculateJwkThumbprint(jwk) };
};

describe('verifyDpopProof', () => {
  beforeEach(() => seen.clear());

  it('accepts a proof with every algorithm and returns its key thumbprint', async () => {
    for (const alg of ['ES256', 'ES384', 'ES512'] as const) {
      const { proof, jkt } = await proofOf({ alg });
      await expect(verifyDpopProof({ proof, method: 'GET', url, orgId: 'acme' })).resolves.toBe(jkt);
    }
  });

  it('accepts http for https and ignores the query string', async () => {
    const { proof } = await proofOf();
    await expect(
      verifyDpopProof({ proof, method: 'get', url: 'http://API.example.com/v1/acme/user/?limit=1', orgId: 'acme' }),
    ).resolves.toBeTypeOf('string');
  });

  it('refuses a replayed proof', async () => {
    const { proof } = await proofOf();
    await verifyDpopProof({ proof, method: 'GET', url, orgId: 'acme' });
    await expect(verifyDpopProof({ proof, method: 'GET', url, orgId: 'acme' })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it.each([
    ['another method', { claims: { htm: 'POST' } }],
    ['another URL', { claims: { htu: 'https://api.example.com/v1/other/user/' } }],
    ['an old iat', { iat: Math.floor(Date.now() / 1000) - 600 }],
    ['a future iat', { iat: Math.floor(Date.now() / 1000) + 600 }],
    ['a wrong typ', { typ: 'JWT' }],
    ['no jti', { claims: { jti: undefined } }],
  ])('refuses a proof with %s', async (_, options) => {
    const { proof } = await proofOf(options);
    await expect(verifyDpopProof({ proof, method: 'GET', url, orgId: 'acme' })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });

  it('checks ath against the presented token when the proof carries it', async () => {
    const { proof } = await proofOf({ claims: { ath: accessTokenHash('token-a') } });
    await expect(
      verifyDpopProof({ proof, method: 'GET', url, orgId: 'acme', accessToken: 'token-b' }),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    const { proof: good } = await proofOf({ claims: { ath: accessTokenHash('token-a') } });
    await expect(
      verifyDpopProof({ proof: good, method: 'GET', url, orgId: 'acme', accessToken: 'token-a' }),
    ).resolves.toBeTypeOf('string');
  });

  it('refuses a proof whose jwk carries the private key', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    const proof = await new SignJWT({ htm: 'GET', htu: url, jti: 'x' })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: privateJwk })
      .setIssuedAt()
      .sign(privateKey);
    await expect(verifyDpopProof({ proof, method: 'GET', url, orgId: 'acme' })).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
  });
});

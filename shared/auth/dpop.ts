import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose';
import { UnauthorizedError } from '../kernel/errors';
import { consumeNonce } from './auth-session-repository';

/**
 * DPoP proofs (RFC 9449). A proof is a JWT signed by the client's EC key with header
 * `typ: dpop+jwt`, `alg` ES256/ES384/ES512 and the public `jwk`; claims `htm` (method),
 * `htu` (URL without query), `iat` and `jti`. Each proof is accepted once (its `jti` is
 * remembered for the acceptance window) and only within `proofWindowSeconds` of now.
 */
export const proofWindowSeconds = 120;

const curveOf: Record<string, string> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' };

/** `http` and `https` compare equal: TLS may end at a proxy that does not forward the scheme. */
const normalizedUrl = (value: string): string | undefined => {
  try {
    const url = new URL(value);
    return `${url.host.toLowerCase()}${url.pathname}`;
  } catch {
    return undefined;
  }
};

export const accessTokenHash = (accessToken: string): string =>
  createHash('sha256').update(accessToken).digest('base64url');

export interface DpopCheck {
  proof: string;
  method: string;
  url: string;
  /** The organization whose replay cache records the proof. */
  orgId: string;
  /** When a token is presented with the proof: its `ath`, if the proof has one, must match. */
  accessToken?: string;
  now?: number;
}

/** Verifies a proof and returns the thumbprint of its key; any failure is a 401. */
export const verifyDpopProof = async (check: DpopCheck): Promise<string> => {
  let jkt: string;
  let jti: string;
  try {
    const header = decodeProtectedHeader(check.proof);
    const alg = header.alg ?? '';
    const jwk = header.jwk as JWK | undefined;
    if (header.typ !== 'dpop+jwt' || !curveOf[alg] || !jwk) throw new Error('bad proof header');
    if (jwk.kty !== 'EC' || jwk.crv !== curveOf[alg] || 'd' in jwk) throw new Error('bad proof key');
    const key = await importJWK(jwk, alg);
    const { payload } = await jwtVerify(check.proof, key, { algorithms: [alg], typ: 'dpop+jwt' });
    const now = Math.floor((check.now ?? Date.now()) / 1000);
    if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256) throw new Error('jti');
    if (typeof payload.iat !== 'number' || Math.abs(now - payload.iat) > proofWindowSeconds) throw new Error('iat');
    if (typeof payload.htm !== 'string' || payload.htm.toUpperCase() !== check.method.toUpperCase())
      throw new Error('htm');
    const htu = typeof payload.htu === 'string' ? normalizedUrl(payload.htu) : undefined;
    if (!htu || htu !== normalizedUrl(check.url)) throw new Error('htu');
    if (
      check.accessToken !== undefined &&
      payload.ath !== undefined &&
      payload.ath !== accessTokenHash(check.accessToken)
    ) {
      throw new Error('ath');
    }
    jkt = await calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y });
    jti = payload.jti;
  } catch (error) {
    throw new UnauthorizedError(undefined, { cause: error });
  }
  const expiresAt = Math.floor((check.now ?? Date.now()) / 1000) + 2 * proofWindowSeconds;
  await consumeNonce(check.orgId, `dpop#${jkt}`, jti, expiresAt);
  return jkt;
};

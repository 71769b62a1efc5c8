import { randomUUID } from 'node:crypto';
import { type CryptoKey, decodeProtectedHeader, importJWK, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { UnauthorizedError } from '../kernel/errors';
import { allowedClockSkewMs } from '../kernel/ids';
import { keyRing } from './signing-keys';

/** Access tokens live one hour. */
export const accessTokenLifetimeSeconds = 3600;

export const jwtIssuer = (): string => process.env.JWT_ISSUER ?? 'classic-api';

/**
 * Every token the platform signs carries a `typ` header naming its purpose, so a token made
 * for one purpose (an e-mail verification link) is never accepted for another (an API call).
 */
export type TokenPurpose = 'access' | 'verify-email' | 'email-sign-in' | 'app-form' | 'phone-call' | 'talk';

const typeHeader: Record<TokenPurpose, string> = {
  access: 'at+jwt',
  'verify-email': 'verify-email+jwt',
  'email-sign-in': 'email-sign-in+jwt',
  // The web app's CSRF token (`shared/app/csrf.ts`).
  'app-form': 'app-form+jwt',
  // A phone call's media stream: handed to Twilio in the TwiML that connects it (`shared/phone-number/`).
  'phone-call': 'phone-call+jwt',
  // The web app's talk mode: opens one conversation's voice socket, nothing else (`app-sessions.ts`).
  talk: 'talk+jwt',
};

/** The purpose a token's header names, unverified: which verification it is for (undefined when none). */
export const claimedPurpose = (token: string): TokenPurpose | undefined => {
  try {
    const { typ } = decodeProtectedHeader(token);
    return (Object.keys(typeHeader) as TokenPurpose[]).find((purpose) => typeHeader[purpose] === typ);
  } catch {
    return undefined;
  }
};

export interface IssuedToken {
  token: string;
  expiresAt: Date;
  expiresIn: number;
}

interface SignArgs {
  purpose: TokenPurpose;
  orgId: string;
  subject: string;
  lifetimeSeconds: number;
  claims?: Record<string, unknown>;
  /** Overrides "now" (tests make expired tokens with it). */
  now?: number;
}

export const signToken = async (args: SignArgs): Promise<IssuedToken & { jti: string }> => {
  const { current } = await keyRing();
  const issuedAt = Math.floor((args.now ?? Date.now()) / 1000);
  const expires = issuedAt + args.lifetimeSeconds;
  const jti = randomUUID();
  const token = await new SignJWT({ ...args.claims, org_id: args.orgId })
    .setProtectedHeader({ alg: 'ES256', typ: typeHeader[args.purpose], kid: current.kid })
    .setIssuer(jwtIssuer())
    .setSubject(args.subject)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expires)
    .setJti(jti)
    .sign(current.privateKey);
  return { token, jti, expiresAt: new Date(expires * 1000), expiresIn: args.lifetimeSeconds };
};

export interface VerifiedToken {
  orgId: string;
  subject: string;
  jti: string;
  expiresAt: Date;
  payload: JWTPayload;
}

/** Public keys of the key ring, imported once per process (the ring itself is loaded once). */
const importedKeys = new Map<string, Promise<CryptoKey | Uint8Array>>();

const verificationKey = async (kid: string | undefined): Promise<CryptoKey | Uint8Array> => {
  const { verification } = await keyRing();
  const entry = verification.find((candidate) => candidate.kid === kid);
  if (!entry || kid === undefined) throw new Error('unknown key');
  let key = importedKeys.get(kid);
  if (!key) {
    key = importJWK(entry.jwk, 'ES256');
    importedKeys.set(kid, key);
  }
  return key;
};

/**
 * Verifies signature (ES256 only), issuer, expiry, issue time and purpose. Every failure is the
 * same 401, so a client learns nothing about which check failed. A token issued later than now
 * (beyond the clock skew allowed) is refused: no clock of the platform signed it so.
 */
export const verifyToken = async (token: string, purpose: TokenPurpose, now = Date.now()): Promise<VerifiedToken> => {
  try {
    const { kid } = decodeProtectedHeader(token);
    const key = await verificationKey(kid);
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['ES256'],
      currentDate: new Date(now),
      issuer: jwtIssuer(),
      typ: typeHeader[purpose],
      requiredClaims: ['sub', 'exp', 'iat', 'jti', 'org_id'],
    });
    if (typeof payload.org_id !== 'string' || typeof payload.sub !== 'string' || typeof payload.jti !== 'string') {
      throw new Error('malformed claims');
    }
    if (typeof payload.iat !== 'number' || payload.iat * 1000 > now + allowedClockSkewMs) {
      throw new Error('issued in the future');
    }
    return {
      orgId: payload.org_id,
      subject: payload.sub,
      jti: payload.jti,
      expiresAt: new Date((payload.exp as number) * 1000),
      payload,
    };
  } catch (error) {
    throw new UnauthorizedError(undefined, { cause: error });
  }
};

export interface AccessTokenArgs {
  orgId: string;
  userId: string;
  /** JWK thumbprint of the client's DPoP key: binds the token to that key (RFC 9449 `cnf.jkt`). */
  jkt?: string;
  sessionId?: string;
  /** The web app's sign-in session the token is its cookie of (`app-sessions.ts`): it stands only while the session does. */
  appSessionId?: string;
  now?: number;
}

export const issueAccessToken = (args: AccessTokenArgs): Promise<IssuedToken> =>
  signToken({
    purpose: 'access',
    orgId: args.orgId,
    subject: args.userId,
    lifetimeSeconds: accessTokenLifetimeSeconds,
    claims: {
      ...(args.jkt ? { cnf: { jkt: args.jkt } } : {}),
      ...(args.sessionId ? { sid: args.sessionId } : {}),
      ...(args.appSessionId ? { app_sid: args.appSessionId } : {}),
    },
    now: args.now,
  });

export interface AccessToken {
  orgId: string;
  userId: string;
  jkt?: string;
  appSessionId?: string;
  expiresAt: Date;
}

/**
 * Access tokens this instance verified, until they expire: a client sends the same token on
 * every request for an hour, and a token's signature and claims cannot change. Only verified
 * tokens are kept; the oldest go first past `maxVerifiedTokens`.
 */
const verifiedAccessTokens = new Map<string, AccessToken>();
const maxVerifiedTokens = 10_000;

export const verifyAccessToken = async (token: string, now = Date.now()): Promise<AccessToken> => {
  const known = verifiedAccessTokens.get(token);
  if (known) {
    if (known.expiresAt.getTime() > now) return known;
    verifiedAccessTokens.delete(token);
  }
  const verified = await verifyToken(token, 'access', now);
  const cnf = verified.payload.cnf as { jkt?: unknown } | undefined;
  const accessToken: AccessToken = {
    orgId: verified.orgId,
    userId: verified.subject,
    ...(typeof cnf?.jkt === 'string' ? { jkt: cnf.jkt } : {}),
    ...(typeof verified.payload.app_sid === 'string' ? { appSessionId: verified.payload.app_sid } : {}),
    expiresAt: verified.expiresAt,
  };
  verifiedAccessTokens.set(token, accessToken);
  if (verifiedAccessTokens.size > maxVerifiedTokens)
    verifiedAccessTokens.delete(verifiedAccessTokens.keys().next().value as string);
  return accessToken;
};

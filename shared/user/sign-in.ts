import { randomUUID } from 'node:crypto';
import {
  consumeNonce,
  deleteRefreshToken,
  getHandedOutToken,
  getRefreshToken,
  type RefreshTokenRecord,
  saveHandedOutToken,
  saveRefreshToken,
} from '../auth/auth-session-repository';
import { verifyDpopProof } from '../auth/dpop';
import { takeToken } from '../auth/rate-limit';
import { hashSecret, newSecret, secretMatches } from '../auth/secrets';
import { accessTokenLifetimeSeconds, type IssuedToken, issueAccessToken, signToken, verifyToken } from '../auth/tokens';
import { sendEmail } from '../aws/email';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError, ValidationError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { requireOrganization } from '../organization/index';
import { getRoleByName } from '../role/index';
import { isAtLeastAsPrivileged } from '../role/privilege';
import { effectiveGrants } from '../role/roles';
import { getApiKey } from './api-key-repository';
import { signInWithEmailOperation } from './operations';
import { loadPrincipal, type Principal } from './principal';
import { getUser, getUserIdByEmail } from './user-repository';

/**
 * Sign-in. An API key signs in a user of its organization when the user's role is at most
 * as privileged as the key's role and at most as privileged as the key's creator was. (The
 * spec says "less permissive than" the key's role; "at most as" lets the bootstrap super
 * administrator's key sign its own user in, and keys can only be made by callers strictly
 * above the key's role, so no key signs in anyone above its creator.) Every failure with a
 * key is the same 401; a valid key for an unverified user is a 403.
 */
const unauthorized = () => new UnauthorizedError();

interface KeySignIn {
  orgId: string;
  apiKeyId: string;
  userId: string;
}

/** Checks a key (already authenticated, or re-checked on refresh) may sign the user in now. */
const authorizeKeyForUser = async ({ orgId, apiKeyId, userId }: KeySignIn, secret?: string): Promise<Principal> => {
  // Ids longer than any the platform makes cannot exist (and would be invalid table keys).
  if (apiKeyId.length > 64 || userId.length > 64) throw unauthorized();
  const key = await getApiKey(orgId, apiKeyId);
  if (!key || key.expires_at <= nowIso()) throw unauthorized();
  if (secret !== undefined && !secretMatches(secret, key.secret_hash)) throw unauthorized();
  const principal = await loadPrincipal(orgId, userId);
  const keyRole = await getRoleByName(orgId, key.role_name);
  if (!principal || !keyRole) throw unauthorized();
  const keyGrants = await effectiveGrants(orgId, keyRole);
  if (!isAtLeastAsPrivileged(keyGrants, principal.grants)) throw unauthorized();
  if (!key.creator_is_platform_administrator && !isAtLeastAsPrivileged(key.creator_grants, principal.grants)) {
    throw unauthorized();
  }
  if (!principal.user.is_verified) throw new ForbiddenError('The user is not verified.');
  return principal;
};

/** A token handed back still has at least half its lifetime: a client gets a working half hour from it. */
const handBackMinimumMs = (accessTokenLifetimeSeconds / 2) * 1000;

/**
 * Signs a user in with an API key. Every sign-in checks the key and the user in full; a client
 * that signs in again with the same key for the same user while its token is fresh gets that
 * token back, so applications that make a client per request do not spend the issuance budget
 * (`chargeIssuance`, called only before a new token is minted; `docs/auth.md`).
 */
export const signInWithApiKey = async (
  orgId: string,
  credentials: { apiKey: string; apiKeyId: string; userId: string },
  chargeIssuance: () => Promise<void>,
): Promise<{ id_token: string; expires_at: string }> => {
  const { apiKeyId, userId } = credentials;
  await requireOrganization(orgId);
  await authorizeKeyForUser({ orgId, apiKeyId, userId }, credentials.apiKey);
  const handedOut = await getHandedOutToken(orgId, apiKeyId, userId);
  if (handedOut && handedOut.expiresAt.getTime() - Date.now() >= handBackMinimumMs) {
    return { id_token: handedOut.token, expires_at: handedOut.expiresAt.toISOString() };
  }
  await chargeIssuance();
  const issued = await issueAccessToken({ orgId, userId });
  await saveHandedOutToken(orgId, apiKeyId, userId, { token: issued.token, expiresAt: issued.expiresAt });
  return { id_token: issued.token, expires_at: issued.expiresAt.toISOString() };
};

/** How long an e-mailed sign-in link works. */
export const emailSignInLifetimeSeconds = 15 * 60;

/**
 * Where an e-mailed link may send the browser (with the token): the API's own origin and the
 * origins listed in `SIGN_IN_REDIRECT_ORIGINS` (comma-separated, e.g. the frontend). Any other
 * target would let whoever asks for a link for someone else's address receive their token.
 */
export const allowedRedirectOrigins = (baseUrl: string): string[] => [
  new URL(baseUrl).origin,
  ...(process.env.SIGN_IN_REDIRECT_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '')
    .map((origin) => new URL(origin).origin),
];

const requireAllowedRedirect = (redirectLink: string, baseUrl: string): void => {
  if (!allowedRedirectOrigins(baseUrl).includes(new URL(redirectLink).origin)) {
    throw new ValidationError([
      {
        loc: ['body', 'redirect_link'],
        msg: 'The redirect_link must be on an allowed origin (this API or SIGN_IN_REDIRECT_ORIGINS).',
        type: 'value_error',
      },
    ]);
  }
};

/**
 * Takes one e-mailed link from the address's bucket (the spec's 5 a minute), whoever asks for it:
 * the API's `sign-in-with-email` and the web app's form share it, so nobody floods a mailbox
 * through either. Taken before the address is looked up, so a limit tells nothing of who exists.
 * Returns the rate-limit headers; throws the 429 once the bucket is empty.
 */
export const limitEmailSignIn = (orgId: string, email: string): Promise<Record<string, string>> =>
  takeToken(
    { orgId, subject: `signin:email:${email.toLowerCase()}`, name: signInWithEmailOperation.operationId },
    { burst: signInWithEmailOperation.rateLimitPerMinute, perMinute: signInWithEmailOperation.rateLimitPerMinute },
  );

/**
 * E-mails a sign-in link. The link opens `completionPage` (default: the API's own callback,
 * which redirects to `redirectLink` with the token); the web app passes its own page, which
 * redeems the link with `redeemEmailSignIn` and keeps the token in a cookie.
 */
export const signInWithEmail = async (
  orgId: string,
  email: string,
  redirectLink: string,
  baseUrl: string,
  completionPage = `${baseUrl}/v1/${encodeURIComponent(orgId)}/user/signin/callback`,
): Promise<{ user_id: string }> => {
  requireAllowedRedirect(redirectLink, baseUrl);
  const organization = await requireOrganization(orgId);
  const userId = await getUserIdByEmail(orgId, email);
  const user = userId ? await getUser(orgId, userId) : undefined;
  if (!user) throw new NotFoundError('No user with this email exists in the organization.');
  if (!user.is_verified) throw new ForbiddenError('The user is not verified.');
  const { token } = await signToken({
    purpose: 'email-sign-in',
    orgId,
    subject: user.user_id,
    lifetimeSeconds: emailSignInLifetimeSeconds,
    claims: { redirect_link: redirectLink },
  });
  const link = `${completionPage}?token=${token}`;
  await sendEmail({
    to: user.email,
    subject: `Sign in to ${organization.org_name}`,
    text: [
      `Hello ${user.first_name},`,
      '',
      `Use this link within ${emailSignInLifetimeSeconds / 60} minutes to sign in:`,
      link,
      '',
      'If you did not ask to sign in, ignore this message.',
    ].join('\n'),
  });
  return { user_id: user.user_id };
};

/**
 * Redeems an e-mailed link once: returns where to send the browser, with the access token in
 * the URL fragment (`#id_token=...&expires_at=...`), which browsers do not send to servers.
 */
export const completeEmailSignIn = async (orgId: string, token: string): Promise<string> => {
  const { issued, redirectLink } = await redeemEmailSignIn(orgId, token);
  const fragment = new URLSearchParams({ id_token: issued.token, expires_at: issued.expiresAt.toISOString() });
  return `${redirectLink.split('#')[0]}#${fragment.toString()}`;
};

/** Redeems an e-mailed link once: an access token for its user, and where the link was meant to lead. */
export const redeemEmailSignIn = async (
  orgId: string,
  token: string,
): Promise<{ issued: IssuedToken; redirectLink: string }> => {
  const link = await verifyToken(token, 'email-sign-in');
  if (link.orgId !== orgId || typeof link.payload.redirect_link !== 'string') throw unauthorized();
  await consumeNonce(orgId, 'email-sign-in', link.jti, Math.floor(link.expiresAt.getTime() / 1000) + 60);
  const principal = await loadPrincipal(orgId, link.subject);
  if (!principal) throw unauthorized();
  if (!principal.user.is_verified) throw new ForbiddenError('The user is not verified.');
  const issued = await issueAccessToken({ orgId, userId: link.subject });
  return { issued, redirectLink: link.payload.redirect_link };
};

/** The grant type of the token endpoint that exchanges an API key (non-standard, URN-named). */
export const apiKeyGrantType = 'urn:classic-api:params:oauth:grant-type:api-key';
export const tokenScope = 'api offline_access';
/** Refresh tokens live as long as the session may: at most this, never past the key's expiry. */
export const refreshTokenLifetimeSeconds = 30 * 24 * 3600;

export interface TokenRequest {
  orgId: string;
  params: Record<string, string | undefined>;
  /** The `DPoP` header, when the client wants a sender-constrained token. */
  dpopProof?: string;
  method: string;
  url: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  scope: string;
  refresh_token: string;
  session_id: string;
}

const requireParam = (params: Record<string, string | undefined>, name: string): string => {
  const value = params[name];
  if (!value) throw new BadRequestError(`The parameter ${name} is required for this grant_type.`);
  return value;
};

const issueSession = async (
  session: Omit<RefreshTokenRecord, 'created_at' | 'expires_at_epoch'>,
  refresh: { token: string; expiresAtEpoch: number } | undefined,
  keyExpiresAt: string,
): Promise<TokenResponse> => {
  const access = await issueAccessToken({
    orgId: session.org_id,
    userId: session.user_id,
    jkt: session.jkt ?? undefined,
    sessionId: session.session_id,
  });
  let refreshToken = refresh?.token;
  if (!refreshToken) {
    refreshToken = newSecret();
    const expiresAtEpoch = Math.min(
      Math.floor(Date.now() / 1000) + refreshTokenLifetimeSeconds,
      Math.floor(new Date(keyExpiresAt).getTime() / 1000),
    );
    await saveRefreshToken(hashSecret(refreshToken), {
      ...session,
      created_at: nowIso(),
      expires_at_epoch: expiresAtEpoch,
    });
  }
  return {
    access_token: access.token,
    token_type: session.jkt ? 'DPoP' : 'Bearer',
    expires_in: accessTokenLifetimeSeconds,
    scope: session.scope,
    refresh_token: refreshToken,
    session_id: session.session_id,
  };
};

/**
 * The OAuth-style token endpoint. `grant_type=urn:classic-api:params:oauth:grant-type:api-key`
 * (with `api_key_id`, `api_key`, `user_id`) starts a session; `grant_type=refresh_token`
 * continues it. With a `DPoP` proof the tokens are bound to the proof's key; refreshing a
 * bound session needs a proof by the same key and returns the same refresh token (no
 * rotation). Unbound refresh tokens are rotated on each use.
 */
export const requestToken = async (request: TokenRequest): Promise<TokenResponse> => {
  const { orgId, params } = request;
  await requireOrganization(orgId);
  const jkt = request.dpopProof
    ? await verifyDpopProof({ proof: request.dpopProof, method: request.method, url: request.url, orgId })
    : undefined;
  switch (params.grant_type) {
    case apiKeyGrantType: {
      const signIn = {
        orgId,
        apiKeyId: requireParam(params, 'api_key_id'),
        userId: requireParam(params, 'user_id'),
      };
      await authorizeKeyForUser(signIn, requireParam(params, 'api_key'));
      const key = await getApiKey(orgId, signIn.apiKeyId);
      if (!key) throw unauthorized();
      return issueSession(
        {
          org_id: orgId,
          user_id: signIn.userId,
          api_key_id: signIn.apiKeyId,
          session_id: randomUUID(),
          jkt: jkt ?? null,
          scope: tokenScope,
        },
        undefined,
        key.expires_at,
      );
    }
    case 'refresh_token': {
      const presented = requireParam(params, 'refresh_token');
      const session = await getRefreshToken(orgId, hashSecret(presented));
      if (!session) throw unauthorized();
      if (session.jkt !== null && session.jkt !== jkt) throw unauthorized();
      if (session.jkt === null && jkt !== undefined) throw unauthorized();
      await authorizeKeyForUser({ orgId, apiKeyId: session.api_key_id, userId: session.user_id });
      const key = await getApiKey(orgId, session.api_key_id);
      if (!key) throw unauthorized();
      if (session.jkt !== null) {
        return issueSession(session, { token: presented, expiresAtEpoch: session.expires_at_epoch }, key.expires_at);
      }
      await deleteRefreshToken(orgId, hashSecret(presented));
      return issueSession(session, undefined, key.expires_at);
    }
    default:
      throw new BadRequestError(`Unsupported grant_type; use ${apiKeyGrantType} or refresh_token.`);
  }
};

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
import { accessTokenLifetimeSeconds, issueAccessToken, signToken, verifyToken } from '../auth/tokens';
import { sendEmail } from '../aws/email';
import { config } from '../kernel/config';
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
 * Where an e-mailed link may send the browser (with the token): the platform's public address
 * and the origins listed in `SIGN_IN_REDIRECT_ORIGINS` (comma-separated, e.g. the frontend). Any
 * other target would let whoever asks for a link for someone else's address receive their token.
 */
export const allowedRedirectOrigins = (): string[] => [
  new URL(config.publicBaseUrl).origin,
  ...(process.env.SIGN_IN_REDIRECT_ORIGINS ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '')
    .map((origin) => new URL(origin).origin),
];

const requireAllowedRedirect = (redirectLink: string): void => {
  if (!allowedRedirectOrigins().includes(new URL(redirectLink).origin)) {
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
 * Where an e-mailed link leads. The API's callback (`sign-in-with-email`) redirects to
 * `redirectLink` with the token. The web app's completion page signs in only the browser that
 * asked: `browser` is the secret of a cookie set in it when it asked, and the link carries its
 * hash, so a link opened in any other browser signs nobody in (a link to the asker's own account,
 * slipped to someone else, would sign them in as the asker: login CSRF).
 */
export type SignInLinkTarget = { redirectLink: string } | { completionPage: string; browser: string };

/**
 * E-mails a sign-in link, on the platform's public address or the page the web app gives (itself
 * built from settings): never on the Host a request names, since whoever asks for the link chooses it.
 */
export const signInWithEmail = async (
  orgId: string,
  email: string,
  target: SignInLinkTarget,
): Promise<{ user_id: string }> => {
  if ('redirectLink' in target) requireAllowedRedirect(target.redirectLink);
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
    claims: 'redirectLink' in target ? { redirect_link: target.redirectLink } : { browser: hashSecret(target.browser) },
  });
  const completionPage =
    'redirectLink' in target
      ? `${config.publicBaseUrl}/v1/${encodeURIComponent(orgId)}/user/signin/callback`
      : target.completionPage;
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
 * Redeems an e-mailed link once, for the user it names as they stand now. `accept` checks what
 * the link says of where it may be redeemed before the link is taken, so a link refused there
 * still works where it belongs.
 */
const redeemEmailLink = async (
  orgId: string,
  token: string,
  accept: (claims: Record<string, unknown>) => void,
): Promise<{ userId: string; claims: Record<string, unknown> }> => {
  const link = await verifyToken(token, 'email-sign-in');
  if (link.orgId !== orgId) throw unauthorized();
  accept(link.payload);
  await consumeNonce(orgId, 'email-sign-in', link.jti, Math.floor(link.expiresAt.getTime() / 1000) + 60);
  const principal = await loadPrincipal(orgId, link.subject);
  if (!principal) throw unauthorized();
  if (!principal.user.is_verified) throw new ForbiddenError('The user is not verified.');
  return { userId: link.subject, claims: link.payload };
};

/**
 * Redeems a link the API e-mailed: returns where to send the browser, with the access token in
 * the URL fragment (`#id_token=...&expires_at=...`), which browsers do not send to servers. A web
 * app's link (bound to a browser) is refused: only its completion page, in that browser, takes it.
 */
export const completeEmailSignIn = async (orgId: string, token: string): Promise<string> => {
  const { userId, claims } = await redeemEmailLink(orgId, token, (link) => {
    if (typeof link.redirect_link !== 'string' || link.browser !== undefined) throw unauthorized();
  });
  const issued = await issueAccessToken({ orgId, userId });
  const fragment = new URLSearchParams({ id_token: issued.token, expires_at: issued.expiresAt.toISOString() });
  return `${String(claims.redirect_link).split('#')[0]}#${fragment.toString()}`;
};

/** What a browser that did not ask for a link is told when it opens one. */
export const linkOfAnotherBrowser =
  'This sign-in link was asked for in another browser, and it signs in only that browser. To sign in here, ask for a link of your own on the sign-in page.';

/**
 * Redeems a web app's link in the browser that opens it: `browser` is that browser's sign-in
 * cookie. Only the browser that asked for the link gets its user (403 elsewhere, and the link
 * stays good for its own browser); the caller then opens the app's session for them.
 */
export const redeemAppSignInLink = async (
  orgId: string,
  token: string,
  browser: string | undefined,
): Promise<string> => {
  const { userId } = await redeemEmailLink(orgId, token, (link) => {
    if (typeof link.browser !== 'string' || browser === undefined || !secretMatches(browser, link.browser)) {
      throw new ForbiddenError(linkOfAnotherBrowser);
    }
  });
  return userId;
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

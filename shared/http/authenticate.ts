import { verifyTalkToken } from '../auth/app-sessions';
import { verifyDpopProof } from '../auth/dpop';
import { claimedPurpose, verifyAccessToken } from '../auth/tokens';
import type { Caller } from '../kernel/caller';
import { ForbiddenError, UnauthorizedError } from '../kernel/errors';
import { callerNow } from '../user/current-caller';

export interface AuthenticationRequest {
  /** Organization addressed by the request path. */
  orgId: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  method: string;
  /** Request URL without the query (DPoP `htu`). */
  url: string;
}

interface Presented {
  scheme: 'Bearer' | 'DPoP' | 'Basic';
  token: string;
  /** HTTP Basic names the organization and user: `{org_id}_{user_id}`. */
  basic?: { orgId: string; userId: string };
}

const unauthorized = () => new UnauthorizedError();

const presentedCredentials = (headers: Record<string, string>): Presented => {
  const authorization = headers.authorization?.trim();
  if (!authorization) throw unauthorized();
  const space = authorization.indexOf(' ');
  const scheme = authorization.slice(0, space).toLowerCase();
  const value = authorization.slice(space + 1).trim();
  if (space <= 0 || value === '') throw unauthorized();
  if (scheme === 'bearer') return { scheme: 'Bearer', token: value };
  if (scheme === 'dpop') return { scheme: 'DPoP', token: value };
  if (scheme === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const username = decoded.slice(0, colon);
    // User ids never contain "_", so the last one separates the organization from the user.
    const separator = username.lastIndexOf('_');
    if (colon <= 0 || separator <= 0) throw unauthorized();
    return {
      scheme: 'Basic',
      token: decoded.slice(colon + 1),
      basic: { orgId: username.slice(0, separator), userId: username.slice(separator + 1) },
    };
  }
  throw unauthorized();
};

/**
 * Authenticates a request and returns its caller.
 *
 * - `Authorization: Bearer <jwt>`: an access token not bound to a DPoP key.
 * - `Authorization: DPoP <jwt>` with a `DPoP` proof header: a token bound to the proof's key.
 * - `Authorization: Basic base64({org_id}_{user_id}:<jwt>)`: the token's organization and
 *   user must be the ones named.
 *
 * The token's organization is the caller's home organization. A request on another
 * organization must say so (header `X-ORG-ID: <home org>`, or HTTP Basic) and is honoured only
 * for a platform administrator: a user of the root organization whose role is at least as
 * privileged as DefaultSuperAdministratorRole. Anyone else gets 401 without the header and
 * 403 with it. Every credential failure is the same 401.
 */
export const authenticateRequest = async (request: AuthenticationRequest): Promise<Caller> => {
  const presented = presentedCredentials(request.headers);
  const token = await verifyAccessToken(presented.token);
  if (presented.scheme === 'DPoP') {
    const proof = request.headers.dpop;
    if (!token.jkt || !proof) throw unauthorized();
    const jkt = await verifyDpopProof({
      proof,
      method: request.method,
      url: request.url,
      orgId: token.orgId,
      accessToken: presented.token,
    });
    if (jkt !== token.jkt) throw unauthorized();
  } else if (token.jkt) {
    // A sender-constrained token presented as a bearer token is refused (RFC 9449 §7.1).
    throw unauthorized();
  }
  if (presented.basic && (presented.basic.orgId !== token.orgId || presented.basic.userId !== token.userId)) {
    throw unauthorized();
  }
  const declaredOrg = request.headers['x-org-id']?.trim() || undefined;
  if (declaredOrg !== undefined && declaredOrg !== token.orgId) throw unauthorized();

  const now = await callerNow({
    homeOrgId: token.orgId,
    userId: token.userId,
    orgId: request.orgId,
    tokenType: presented.scheme,
    ...(token.appSessionId === undefined ? {} : { appSessionId: token.appSessionId }),
  });
  if ('refused' in now && now.refused === 'unknown') throw unauthorized();
  if ('refused' in now && now.refused === 'unverified') throw new ForbiddenError('The user is not verified.');
  const declaredCrossOrg = declaredOrg !== undefined || presented.scheme === 'Basic';
  if (token.orgId !== request.orgId && !declaredCrossOrg) throw unauthorized();
  if ('refused' in now) throw new ForbiddenError('The user has no permissions in this organization.');
  return now.caller;
};

/**
 * Authenticates a live voice socket by the token of its subprotocol (`auth, <token>`). An access
 * token is taken as a request's bearer token. The web app's talk token (`shared/auth/app-sessions.ts`)
 * opens only the socket of its own conversation, in its own organization, and only while the app
 * session it was issued in lasts: the caller carries that session (`appSessionId`), so a re-check
 * before each turn (`refreshCaller(caller)`) ends the socket once the user signs out.
 */
export const authenticateSocketToken = async (request: {
  orgId: string;
  token: string;
  /** The upgrade's URL without the query. */
  url: string;
  /** The conversation the socket asks for (`conversation_id`), if it names one. */
  conversationId: string | undefined;
}): Promise<Caller> => {
  if (claimedPurpose(request.token) !== 'talk') {
    return authenticateRequest({
      orgId: request.orgId,
      headers: { authorization: `Bearer ${request.token}` },
      method: 'GET',
      url: request.url,
    });
  }
  const talk = await verifyTalkToken(request.token);
  if (talk.orgId !== request.orgId || talk.conversationId !== request.conversationId) throw unauthorized();
  const now = await callerNow({
    homeOrgId: talk.orgId,
    userId: talk.userId,
    orgId: request.orgId,
    tokenType: 'Bearer',
    appSessionId: talk.appSessionId,
  });
  if ('caller' in now) return now.caller;
  throw now.refused === 'unverified' ? new ForbiddenError('The user is not verified.') : unauthorized();
};

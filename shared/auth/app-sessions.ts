import { UnauthorizedError } from '../kernel/errors';
import { nowIso } from '../kernel/ids';
import { getAppSession, removeAppSession, saveAppSession } from './auth-session-repository';
import { newSecret } from './secrets';
import { accessTokenLifetimeSeconds, type IssuedToken, issueAccessToken, signToken, verifyToken } from './tokens';

/**
 * The web app's sign-in sessions and the talk tokens issued in them.
 *
 * Signing in through the app's e-mailed link opens a session: a record, and an access token for
 * the session cookie that names it (`app_sid`). The chat's talk mode cannot read that HttpOnly
 * cookie, so its scripts get a talk token instead: it opens the voice socket of one conversation
 * and nothing else (the REST API refuses its `typ`), only for 5 minutes, and only while the session
 * lasts. Signing out removes the record, so the cookie's token and every talk token of the session
 * stop working at once: a caller carrying `appSessionId` stands only while `appSessionLive` says so
 * (`callerNow` in `shared/user/current-caller.ts`, at each request, each socket upgrade and each
 * re-check of a live session's caller).
 */

/** A session lasts as long as its cookie's token. */
export const appSessionLifetimeSeconds = accessTokenLifetimeSeconds;

/** A talk token opens a socket within 5 minutes of being handed to the page; the socket then lasts with the session. */
export const talkTokenLifetimeSeconds = 5 * 60;

/** Opens a session for a user who redeemed the app's link: the session cookie's token. */
export const openAppSession = async (orgId: string, userId: string): Promise<IssuedToken> => {
  const sessionId = newSecret();
  const issued = await issueAccessToken({ orgId, userId, appSessionId: sessionId });
  await saveAppSession(orgId, sessionId, {
    user_id: userId,
    created_at: nowIso(),
    expires_at_epoch: Math.ceil(issued.expiresAt.getTime() / 1000),
  });
  return issued;
};

/** Ends a session (signing out): its cookie's token and its talk tokens are refused from now on. */
export const endAppSession = async (orgId: string, appSessionId: string): Promise<void> => {
  await removeAppSession(orgId, appSessionId);
};

/** Whether a session is still open for its user: not signed out of, and not past its hour. */
export const appSessionLive = async (orgId: string, appSessionId: string, userId: string): Promise<boolean> => {
  const session = await getAppSession(orgId, appSessionId);
  return session !== undefined && session.user_id === userId && session.expires_at_epoch * 1000 > Date.now();
};

export interface TalkToken {
  orgId: string;
  userId: string;
  appSessionId: string;
  conversationId: string;
  expiresAt: Date;
}

/** A talk token for the conversation's socket, issued in the caller's app session (401 outside one). */
export const issueTalkToken = async (grant: Omit<TalkToken, 'expiresAt'>): Promise<IssuedToken> => {
  if (!grant.appSessionId) throw new UnauthorizedError('Talking needs a session of the web app: sign in again.');
  return signToken({
    purpose: 'talk',
    orgId: grant.orgId,
    subject: grant.userId,
    lifetimeSeconds: talkTokenLifetimeSeconds,
    claims: { app_sid: grant.appSessionId, conversation_id: grant.conversationId },
  });
};

/** A talk token's signature, expiry and claims (401 when any is wrong); the session's standing is the caller's check. */
export const verifyTalkToken = async (token: string): Promise<TalkToken> => {
  const verified = await verifyToken(token, 'talk');
  const { app_sid: appSessionId, conversation_id: conversationId } = verified.payload;
  if (typeof appSessionId !== 'string' || typeof conversationId !== 'string') throw new UnauthorizedError();
  return {
    orgId: verified.orgId,
    userId: verified.subject,
    appSessionId,
    conversationId,
    expiresAt: verified.expiresAt,
  };
};

import { randomBytes } from 'node:crypto';
import { signToken, verifyToken } from '../auth/tokens';
import { ForbiddenError, UnauthorizedError } from '../kernel/errors';

/**
 * CSRF protection by a signed double submit: the browser holds a random nonce in an HttpOnly
 * cookie, and every form carries a token signed by the platform over that nonce and the
 * organization. A forged form from another site cannot read the nonce nor sign a token.
 */
const formTokenLifetimeSeconds = 12 * 3600;

export const newCsrfNonce = (): string => randomBytes(18).toString('base64url');

export const isCsrfNonce = (value: string | undefined): value is string =>
  value !== undefined && /^[A-Za-z0-9_-]{24}$/.test(value);

export const csrfTokenFor = async (orgId: string, nonce: string): Promise<string> =>
  (await signToken({ purpose: 'app-form', orgId, subject: nonce, lifetimeSeconds: formTokenLifetimeSeconds })).token;

const refused = () =>
  new ForbiddenError('The form was refused: its CSRF token is missing or was not issued to this browser.');

export const requireCsrfToken = async (orgId: string, nonce: string | undefined, token: string | undefined) => {
  if (!isCsrfNonce(nonce) || !token) throw refused();
  const verified = await verifyToken(token, 'app-form').catch((error: unknown) => {
    if (error instanceof UnauthorizedError) throw refused();
    throw error;
  });
  if (verified.orgId !== orgId || verified.subject !== nonce) throw refused();
};

import { Readable } from 'node:stream';
import { type CookieScope, cookieHeader, csrfCookie, parseCookies, sessionCookie } from '../app/cookies';
import { csrfTokenFor, isCsrfNonce, newCsrfNonce, requireCsrfToken } from '../app/csrf';
import type { Html } from '../app/html';
import type { AppRequest } from '../app/layout';
import { appHostHeader, appLocation } from '../app/organization-host';
import { opensConsole } from '../app/page-parts';
import { redirectPage } from '../app/pages';
import { talkConnectSources } from '../app/talk-address';
import type { Caller } from '../kernel/caller';
import { config } from '../kernel/config';
import { ForbiddenError, UnauthorizedError } from '../kernel/errors';
import { authenticateRequest } from './authenticate';
import type { RequestContext } from './http-handler';

/**
 * The web app's browsers, for the groups that serve its pages (`app`, `app-analytics`): the
 * session cookie holds a platform access token, verified exactly as an Authorization header would
 * be, and the CSRF nonce cookie signs every form; pages are sent with the app's security headers.
 */

export interface BrowserRequest {
  path: { organization: string };
  headers: { cookie?: string; [appHostHeader]?: string };
  context: RequestContext;
}

/** The live voice sessions' origin where they are served on a host of their own (the talk mode's socket). */
const voiceSessionOrigin = talkConnectSources(config.voiceSessionUrl);

/**
 * Scripts and styles come from the app itself (and the talk mode's socket from the sessions' host);
 * nothing may frame it or post its forms elsewhere. Media plays from the app, or from the origins
 * a page names (a call's recording, on its presigned URLs).
 */
const contentSecurityPolicy = (mediaOrigins: readonly string[] = []) =>
  `default-src 'self'; connect-src 'self'${voiceSessionOrigin}; img-src 'self'; media-src 'self' blob:${mediaOrigins.map((origin) => ` ${origin}`).join('')}; style-src 'self' 'unsafe-inline'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** Lets the page answered play media from `origins` (each a URL's origin, as `new URL(url).origin` gives it). */
export const allowMediaFrom = (context: RequestContext, origins: readonly string[]): void => {
  if (origins.length > 0) context.setHeader('content-security-policy', contentSecurityPolicy(origins));
};

const securityHeaders = (context: RequestContext) => {
  context.setHeader('content-security-policy', contentSecurityPolicy());
  context.setHeader('x-content-type-options', 'nosniff');
  context.setHeader('referrer-policy', 'same-origin');
  context.setHeader('cache-control', 'no-store');
};

/** The signed-in caller, or undefined when the cookie is absent, expired or not this organization's. */
const sessionCaller = async (orgId: string, token: string | undefined, context: RequestContext) => {
  if (!token) return undefined;
  try {
    return await authenticateRequest({
      orgId,
      headers: { authorization: `Bearer ${token}` },
      method: context.method,
      url: context.url,
    });
  } catch (error) {
    if (error instanceof UnauthorizedError || error instanceof ForbiddenError) return undefined;
    throw error;
  }
};

export interface Browser {
  request: AppRequest;
  cookies: Record<string, string>;
  scope: CookieScope;
}

export const browserOf = async ({ path, headers, context }: BrowserRequest): Promise<Browser> => {
  const orgId = path.organization;
  const { base, secure } = appLocation(new URL(context.url), orgId, headers[appHostHeader], config.frontendDomain);
  const scope: CookieScope = { path: base || '/', secure };
  const cookies = parseCookies(headers.cookie);
  let nonce = cookies[csrfCookie];
  if (!isCsrfNonce(nonce)) {
    nonce = newCsrfNonce();
    // Only pages hand out a nonce: a form posted without one is refused.
    if (context.method === 'GET') context.setHeader('set-cookie', cookieHeader(csrfCookie, nonce, scope, 86_400 * 30));
  }
  const caller = await sessionCaller(orgId, cookies[sessionCookie], context);
  const request: AppRequest = {
    orgId,
    base,
    caller,
    csrfToken: await csrfTokenFor(orgId, nonce),
    consoleAllowed: await opensConsole(orgId, caller),
  };
  securityHeaders(context);
  return { request, cookies, scope };
};

export const htmlReply = (page: Html) => ({ bytes: Readable.from([Buffer.from(page.text)]) });

export const redirect = (context: RequestContext, location: string) => {
  context.setHeader('location', location);
  return htmlReply(redirectPage(location));
};

/** A posted form, or a request of the page script: its CSRF token checked against the browser's nonce, and a signed-in caller. */
export const signedInForm = async (input: BrowserRequest, csrfToken: string | undefined) => {
  const browser = await browserOf(input);
  await requireCsrfToken(browser.request.orgId, browser.cookies[csrfCookie], csrfToken);
  if (!browser.request.caller) throw new UnauthorizedError();
  return { ...browser, caller: browser.request.caller as Caller };
};

/** A page: rendered for the browser's request (its caller, base path and CSRF token). */
export const page = (render: (request: AppRequest) => Promise<Html>) => async (input: BrowserRequest) =>
  htmlReply(await render((await browserOf(input)).request));

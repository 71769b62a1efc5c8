/** The session cookie: the platform's own access token, never readable by scripts. */
export const sessionCookie = 'app_session';
/** The browser's CSRF nonce; forms carry a token signed over it (`csrf.ts`). */
export const csrfCookie = 'app_csrf';
/**
 * The secret an e-mailed sign-in link is bound to: set in the browser that asks for the link, whose
 * hash the link carries, so the link signs in that browser alone (`shared/user/sign-in.ts`).
 */
export const signInCookie = 'app_sign_in';

/** A sign-in cookie's secret as the app makes them (`newSecret`: 256 bits, base64url). */
export const isSignInSecret = (value: string | undefined): value is string =>
  value !== undefined && /^[A-Za-z0-9_-]{43}$/.test(value);

export const parseCookies = (header: string | undefined): Record<string, string> => {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator <= 0) continue;
    const name = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    // The first of a repeated name wins, as browsers send the most specific path first.
    if (!(name in cookies)) cookies[name] = value;
  }
  return cookies;
};

export interface CookieScope {
  /** The app's base path (`/` on its own host, `/app/{org_id}` under the API). */
  path: string;
  /** Outside localhost, cookies travel over HTTPS only. */
  secure: boolean;
}

export const cookieHeader = (name: string, value: string, scope: CookieScope, maxAgeSeconds: number): string =>
  [
    `${name}=${value}`,
    `Path=${scope.path}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(scope.secure ? ['Secure'] : []),
  ].join('; ');

/** `localhost` and its subdomains (`{org}.localhost`) are the only hosts served without TLS. */
export const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '127.0.0.1' || hostname === '[::1]';

import { isLoopbackHost } from './cookies';

/**
 * How an organization's own host reaches its web app: `{org_id}.{domain}/x` is the app's
 * `/app/{org_id}/x`. The local gateway applies it to `{org_id}.localhost`; in AWS the CDN's
 * viewer-request function (`infra/constructs/frontend-hosting.ts`) applies it to
 * `{org_id}.{frontend_domain}` and passes the host on in {@link appHostHeader}.
 */

/** One DNS label: what an organization id must be to name a host. */
export const organizationLabel = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?';

/** The header in which the CDN tells the app the organization host the browser asked for. */
export const appHostHeader = 'x-app-host';

/** The organization whose host `hostname` is under `domain`, if any. */
export const organizationOfHost = (hostname: string, domain: string): string | undefined =>
  new RegExp(`^(${organizationLabel})\\.${domain.replaceAll('.', '\\.')}$`).exec(hostname.toLowerCase())?.[1];

/** `/app/{org_id}` (after any stage) when served under the API; `` on the organization's own host. */
const appBaseOf = (pathname: string, orgId: string): string => {
  const marker = `/app/${orgId}`;
  const at = pathname.indexOf(`${marker}/`);
  return at >= 0 ? pathname.slice(0, at + marker.length) : pathname.endsWith(marker) ? pathname : '';
};

/**
 * Where the browser is: its origin, the app's base path there, and whether cookies must be
 * `Secure`. From the URL the gateway saw, or from the organization's own host when the CDN
 * says so; only this organization's `{org_id}.{frontendDomain}` is believed, so a request sent
 * straight to the API cannot point the app's links (and e-mailed sign-in links) elsewhere.
 */
export const appLocation = (
  url: URL,
  orgId: string,
  appHost: string | undefined,
  frontendDomain: string | undefined,
) => {
  if (appHost && frontendDomain && organizationOfHost(appHost, frontendDomain) === orgId)
    return { origin: `https://${appHost.toLowerCase()}`, base: '', secure: true };
  return { origin: url.origin, base: appBaseOf(url.pathname, orgId), secure: !isLoopbackHost(url.hostname) };
};

/** The app's path for a path asked of an organization's host. */
export const appPathFor = (organization: string, path: string): string => `/app/${organization}${path}`;

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
 * Where the browser is: the app's base path there, and whether cookies must be `Secure`. From
 * the URL the gateway saw, or from the organization's own host when the CDN says so; only this
 * organization's `{org_id}.{frontendDomain}` is believed.
 */
export const appLocation = (
  url: URL,
  orgId: string,
  appHost: string | undefined,
  frontendDomain: string | undefined,
) => {
  if (appHost && frontendDomain && organizationOfHost(appHost, frontendDomain) === orgId)
    return { base: '', secure: true };
  return { base: appBaseOf(url.pathname, orgId), secure: !isLoopbackHost(url.hostname) };
};

/**
 * The app's address for links that leave the browser (the e-mailed sign-in link), from settings
 * alone: a request's Host is whatever its sender wrote, and a link built from it would deliver
 * the token to their host. At an organization's own host (base ``) it is that host: with a
 * frontend domain `https://{org_id}.{frontendDomain}` (the CDN's), else the local gateway's
 * `{org_id}.localhost` on the public address's port; under the API, `{publicBaseUrl}/app/{org_id}`.
 */
export const appPublicHome = (
  orgId: string,
  base: string,
  settings: { publicBaseUrl: string; frontendDomain: string | undefined },
): string => {
  if (base !== '') return `${settings.publicBaseUrl}/app/${orgId}`;
  if (settings.frontendDomain) return `https://${orgId}.${settings.frontendDomain}`;
  const local = new URL(settings.publicBaseUrl);
  return `${local.protocol}//${orgId}.localhost${local.port ? `:${local.port}` : ''}`;
};

/** The app's path for a path asked of an organization's host. */
export const appPathFor = (organization: string, path: string): string => `/app/${organization}${path}`;

import { logger } from './observability';

/**
 * The DNS name of each organization's web app, `{org_id}.{frontend_domain}`: organization
 * create adds it, delete removes it.
 */
export interface FrontendDns {
  addOrganization(orgId: string): Promise<void>;
  removeOrganization(orgId: string): Promise<void>;
}

/** Without a frontend domain (local runs, or AWS without one) there is no record to keep. */
export const noFrontendDns: FrontendDns = {
  addOrganization: async (orgId) => {
    logger.info('no frontend domain: no DNS record to add; the app is served by path (or *.localhost)', {
      org_id: orgId,
    });
  },
  removeOrganization: async () => {},
};

let configured: FrontendDns | undefined;

/**
 * Route 53 when `FRONTEND_DOMAIN`, `FRONTEND_HOSTED_ZONE_ID` and `FRONTEND_DNS_TARGET` are set, else none.
 * The Route 53 SDK is loaded here, on organization create and delete only, never by a cold start.
 */
export const frontendDns = async (): Promise<FrontendDns> => {
  const { FRONTEND_DOMAIN: domain, FRONTEND_HOSTED_ZONE_ID: hostedZoneId, FRONTEND_DNS_TARGET: target } = process.env;
  if (!configured && domain && hostedZoneId && target) {
    const [{ Route53Client }, { route53FrontendDns }] = await Promise.all([
      import('@aws-sdk/client-route-53'),
      import('./route53-frontend-dns'),
    ]);
    configured = route53FrontendDns(new Route53Client({}), { domain, hostedZoneId, target });
  }
  configured ??= noFrontendDns;
  return configured;
};

import { ChangeResourceRecordSetsCommand, InvalidChangeBatch, Route53Client } from '@aws-sdk/client-route-53';
import { logger } from './observability';

/**
 * The DNS name of each organization's web app, `{org_id}.{frontend_domain}`: organization
 * create adds it, delete removes it.
 */
export interface FrontendDns {
  addOrganization(orgId: string): Promise<void>;
  removeOrganization(orgId: string): Promise<void>;
}

export interface Route53FrontendSettings {
  /** e.g. `app.example.com`: organizations get `{org_id}.app.example.com`. */
  domain: string;
  hostedZoneId: string;
  /** The hosting's own name each record points at (CNAME). */
  target: string;
}

const recordTtlSeconds = 300;

/** Route 53 records, one CNAME per organization; removing a record already gone is done. */
export const route53FrontendDns = (
  client: Pick<Route53Client, 'send'>,
  settings: Route53FrontendSettings,
): FrontendDns => {
  const change = (action: 'UPSERT' | 'DELETE', orgId: string) =>
    client.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: settings.hostedZoneId,
        ChangeBatch: {
          Comment: `web app of organization ${orgId}`,
          Changes: [
            {
              Action: action,
              ResourceRecordSet: {
                Name: `${orgId}.${settings.domain}`,
                Type: 'CNAME',
                TTL: recordTtlSeconds,
                ResourceRecords: [{ Value: settings.target }],
              },
            },
          ],
        },
      }),
    );
  return {
    addOrganization: async (orgId) => {
      await change('UPSERT', orgId);
    },
    removeOrganization: async (orgId) => {
      try {
        await change('DELETE', orgId);
      } catch (error) {
        // Route 53 refuses to delete a record that does not exist: a repeated delete is done.
        if (!(error instanceof InvalidChangeBatch && /not found/i.test(error.message))) throw error;
      }
    },
  };
};

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

/** Route 53 when `FRONTEND_DOMAIN`, `FRONTEND_HOSTED_ZONE_ID` and `FRONTEND_DNS_TARGET` are set, else none. */
export const frontendDns = (): FrontendDns => {
  const { FRONTEND_DOMAIN: domain, FRONTEND_HOSTED_ZONE_ID: hostedZoneId, FRONTEND_DNS_TARGET: target } = process.env;
  configured ??=
    domain && hostedZoneId && target
      ? route53FrontendDns(new Route53Client({}), { domain, hostedZoneId, target })
      : noFrontendDns;
  return configured;
};

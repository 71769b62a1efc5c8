import { ChangeResourceRecordSetsCommand, InvalidChangeBatch, type Route53Client } from '@aws-sdk/client-route-53';
import type { FrontendDns } from './frontend-dns';

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
